"""``/metrics`` in the Prometheus text format (prometheus_client, one registry per gateway)."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest

from gateway.agents.builtin.assistant import Assistant

#: Latency buckets (seconds): fine from a few milliseconds (the agent and speech-to-text
#: stages are that short) up through the voice targets (0.5 s median, 0.8 s p95, 1.2 s p95
#: under load), so quantiles read from them are not mostly interpolation.
_BUCKETS = (
    *(0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4),
    *(0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0, 2.5, 3.0, 5.0),
)
#: Event-loop lag buckets (seconds): fine below the 50 ms target, where a p99 is read.
_LAG_BUCKETS = (
    0.001,
    0.002,
    0.005,
    0.01,
    0.015,
    0.02,
    0.03,
    0.04,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.5,
    1.0,
)


class Metrics:
    """What the gateway counts."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.sessions = Gauge("ofp_gateway_sessions", "Clients connected now", registry=r)
        self.conversations = Gauge(
            "ofp_gateway_conversations",
            "Conversations held open (connected or awaiting rejoin)",
            registry=r,
        )
        self.sessions_total = Counter(
            "ofp_gateway_sessions_opened", "Client sessions opened", registry=r
        )
        self.refused = Counter(
            "ofp_gateway_sessions_refused",
            "Sessions refused because the gateway was full",
            registry=r,
        )
        self.utterances = Counter(
            "ofp_gateway_utterances", "Utterances from people", ["source"], registry=r
        )
        self.stage = Histogram(
            "ofp_gateway_stage_seconds",
            "Latency of each voice stage (endpoint, stt, agent, tts_first_audio, total; "
            "stt_queue: the part of stt spent waiting for the shared model; stt_decode: the "
            "final decode itself, often hidden inside endpoint when it ran speculatively)",
            ["stage"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.agent_errors = Counter(
            "ofp_gateway_agent_errors", "Agent failures by reason token", ["reason"], registry=r
        )
        self.loop_lag = Histogram(
            "ofp_gateway_loop_lag_seconds",
            "How late the event loop woke a 50 ms sleep (work blocking the loop)",
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self.stt_wait = Gauge(
            "ofp_gateway_stt_queue_wait_seconds",
            "Moving average of how long final transcriptions waited for the shared model",
            registry=r,
        )
        self.stt_partials_skipped = Gauge(
            "ofp_gateway_stt_partials_skipped",
            "Partial transcripts skipped since start because the model was busy",
            registry=r,
        )
        self.stt_full_window = Gauge(
            "ofp_gateway_stt_full_window_retries",
            "Final transcripts decoded again on Whisper's full window since start (slow)",
            registry=r,
        )
        self.stt_abandoned = Gauge(
            "ofp_gateway_stt_abandoned",
            "Decodes stopped part-way since start because speech resumed (a wasted speculation)",
            registry=r,
        )
        self.tts_pending = Gauge(
            "ofp_gateway_tts_pending",
            "Sentences queued or being synthesized by the shared speech synthesizer",
            registry=r,
        )
        self.tts_sentences = Gauge(
            "ofp_gateway_tts_sentences",
            "Sentences synthesized since start (a page without audio costs none)",
            registry=r,
        )
        self.tts_cache_hits = Gauge(
            "ofp_gateway_tts_cache_hits",
            "Texts spoken from the synthesizer's cache of short texts since start (no synthesis)",
            registry=r,
        )
        self.records_failing = Gauge(
            "ofp_gateway_records_failing",
            "1 while the records store fails and writes wait in memory (records/kept.py)",
            registry=r,
        )
        self.records_pending = Gauge(
            "ofp_gateway_records_pending", "Record writes waiting for the store", registry=r
        )
        self.records_dropped = Gauge(
            "ofp_gateway_records_dropped",
            "Record writes lost since start because the waiting buffer was full",
            registry=r,
        )
        self.records_episodes = Gauge(
            "ofp_gateway_records_failure_episodes",
            "Times since start the records store began failing",
            registry=r,
        )
        self.tts_late = Gauge(
            "ofp_gateway_tts_late_sentences",
            "Sentences since start that were not ready when the audio before them had played "
            "(a pause inside a reply)",
            registry=r,
        )
        self.memory_released = Counter(
            "ofp_gateway_memory_released_bytes",
            "Resident memory handed back to the system by trimming the allocator "
            "(see server/memory.py)",
            registry=r,
        )
        self.memory_trim = Histogram(
            "ofp_gateway_memory_trim_seconds",
            "Time one trim took (in a worker thread, not on the event loop)",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
            registry=r,
        )
        self.memory = Info(
            "ofp_gateway_memory", "The memory allocator the process runs on", registry=r
        )
        self.llm_failures = Gauge(
            "ofp_gateway_llm_failures",
            "Assistant answers the language model failed since start (the person heard an "
            "apology), by reason: unreachable, http (401, 500…), timeout (no first token, or a "
            "stall mid-stream), bad_stream (garbage, empty, over-long lines)",
            ["reason"],
            registry=r,
        )
        for reason in ("unreachable", "http", "timeout", "bad_stream"):
            self.llm_failures.labels(reason).set(0)
        self.llm_capped = Gauge(
            "ofp_gateway_llm_capped",
            "Assistant answers cut since start at a bound (characters, sentences, max_tokens)",
            registry=r,
        )
        self.speech_up = Gauge(
            "ofp_gateway_speech_service_up",
            "1 while a remote speech service (--stt/--tts/--wake-service) answers, 0 while down",
            ["service", "address"],
            registry=r,
        )
        self.speech_failures = Gauge(
            "ofp_gateway_speech_service_failures",
            "Requests to a remote speech service that failed since start (down, or it broke "
            "mid-request)",
            ["service", "address"],
            registry=r,
        )
        self.speech_refused = Gauge(
            "ofp_gateway_speech_service_refused",
            "Requests refused since start because every connection to the service was in use",
            ["service", "address"],
            registry=r,
        )
        self.speech_in_flight = Gauge(
            "ofp_gateway_speech_service_in_flight",
            "Requests (wake: streams) open to a remote speech service now",
            ["service", "address"],
            registry=r,
        )
        self.tasks = Gauge("ofp_gateway_tasks", "asyncio tasks alive", registry=r)
        self.threads = Gauge("ofp_gateway_threads", "Threads alive in the process", registry=r)

    def observe_timing(self, timings_ms: Mapping[str, float | bool | str | None]) -> None:
        """Record one utterance's stage timings (milliseconds, as ``Timing.as_ms`` gives them)."""
        names = {
            "endpoint": "endpoint",
            "stt": "stt",
            "agent": "agent",
            "ttsFirstAudio": "tts_first_audio",
            "total": "total",
            "queued": "stt_queue",
            "decode": "stt_decode",
        }
        for key, stage in names.items():
            value = timings_ms.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.stage.labels(stage).observe(value / 1000)

    def observe_llm(self, assistant: Assistant | None) -> None:
        """The built-in assistant's language-model counts (nothing when it is not built)."""
        if assistant is None:
            return
        model = assistant.model
        for reason, count in model.failures.items():
            self.llm_failures.labels(reason).set(count)
        self.llm_capped.set(model.capped)

    def render(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)
