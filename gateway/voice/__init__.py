"""The listening half of the voice path: voice activity → end of utterance → transcript.

Each stage is a small unit on numpy arrays, composed by the session:
:mod:`.vad` (Silero VAD probabilities), :mod:`.endpoint` (pure state machine: when an utterance
starts, pauses and ends), :mod:`.stt` (faster-whisper transcripts in a bounded executor).
"""
