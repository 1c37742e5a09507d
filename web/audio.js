// Microphone, level meter, wake chime and the WebSocket PCM pipe (capture + playback).

/** Capture constraints: echo cancellation keeps the agents' own voices from barging in. */
export const MIC_CONSTRAINTS = {
  audio: {
    echoCancellation: true,
    noiseSuppression: true,
    autoGainControl: true,
    channelCount: 1,
  },
};

/** Ask for the microphone. Rejects with the browser's DOMException (see describeMicError). */
export async function openMicrophone() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new DOMException("no mediaDevices (page not in a secure context?)", "NotSupportedError");
  }
  return navigator.mediaDevices.getUserMedia(MIC_CONSTRAINTS);
}

/** What to tell the person when the microphone cannot be opened, and what to do about it. */
export function describeMicError(error) {
  switch (error && error.name) {
    case "NotAllowedError":
    case "SecurityError":
      return (
        "Microphone access was refused. Allow the microphone for this site (the icon in the " +
        "address bar, or the browser's site settings), then press Retry. You can still type."
      );
    case "NotFoundError":
    case "OverconstrainedError":
      return "No microphone was found. Plug one in or enable it, then press Retry. You can still type.";
    case "NotReadableError":
    case "AbortError":
      return (
        "The microphone is busy or failed to start (another app may be using it). " +
        "Close that app, then press Retry."
      );
    case "NotSupportedError":
      return (
        "This browser cannot record here. Open the page over https:// (or http://localhost) " +
        "in a current browser. You can still type."
      );
    default:
      return `The microphone could not be opened (${error}). Press Retry, or type instead.`;
  }
}

/** A short two-note chime, generated (no audio file to fetch), played on the wake word. */
export function playChime(ctx) {
  const now = ctx.currentTime;
  const gain = ctx.createGain();
  gain.connect(ctx.destination);
  gain.gain.setValueAtTime(0.0001, now);
  gain.gain.exponentialRampToValueAtTime(0.2, now + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, now + 0.35);
  [880, 1320].forEach((freq, i) => {
    const osc = ctx.createOscillator();
    osc.frequency.value = freq;
    osc.connect(gain);
    osc.start(now + i * 0.09);
    osc.stop(now + 0.36);
  });
}

/**
 * The input level of `source`, drawn with requestAnimationFrame into `bar` (a CSS scaleX)
 * and exposed as `level` (0..1). rAF does not run in hidden tabs, so the meter costs nothing
 * there; `stop()` ends it for good.
 */
export class LevelMeter {
  constructor(ctx, source, bar) {
    this.analyser = ctx.createAnalyser();
    this.analyser.fftSize = 512;
    source.connect(this.analyser);
    this.samples = new Float32Array(this.analyser.fftSize);
    this.bar = bar;
    this.level = 0;
    this.frame = 0;
    this.tick = () => this.draw();
    this.onVisibility = () => this.schedule();
    document.addEventListener("visibilitychange", this.onVisibility);
    this.schedule();
  }

  schedule() {
    if (this.analyser && !this.frame && document.visibilityState === "visible") {
      this.frame = requestAnimationFrame(this.tick);
    }
  }

  draw() {
    this.frame = 0;
    if (!this.analyser) return;
    this.analyser.getFloatTimeDomainData(this.samples);
    let sum = 0;
    for (const s of this.samples) sum += s * s;
    const rms = Math.sqrt(sum / this.samples.length);
    // dBFS from -60 to 0 mapped onto 0..1: speech sits in the middle instead of near zero.
    const db = 20 * Math.log10(rms + 1e-9);
    this.level = Math.max(0, Math.min(1, (db + 60) / 60));
    this.bar.style.transform = `scaleX(${this.level.toFixed(3)})`;
    this.bar.parentElement.setAttribute("aria-valuenow", String(Math.round(this.level * 100)));
    this.schedule();
  }

  stop() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    document.removeEventListener("visibilitychange", this.onVisibility);
    this.analyser.disconnect();
    this.analyser = null;
    this.level = 0;
    this.bar.style.transform = "scaleX(0)";
  }
}

/** Largest backlog of microphone audio allowed in the WebSocket before frames are dropped
 * (about 2 s at 16 kHz): a stalled network must not grow the browser's memory. */
const MAX_SEND_BACKLOG = 64 * 1024;

/**
 * WebSocket audio: the microphone as 16 kHz Int16 frames to `send`, and server PCM
 * (24 kHz Int16) played through a bounded ring buffer that `flush()` empties at once.
 */
export class PcmPipe {
  /** Load the worklet and wire `source` (the microphone) into it. */
  static async open(ctx, source, { outRate, send, backlog }) {
    await ctx.audioWorklet.addModule(new URL("./pcm-worklet.js", import.meta.url));
    return new PcmPipe(ctx, source, { outRate, send, backlog });
  }

  constructor(ctx, source, { outRate, send, backlog }) {
    this.capture = new AudioWorkletNode(ctx, "pcm-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 0,
      processorOptions: { targetRate: 16000, frameMs: 20 },
    });
    this.capture.port.onmessage = (e) => {
      if (backlog() < MAX_SEND_BACKLOG) send(e.data);
    };
    source.connect(this.capture);
    this.playback = new AudioWorkletNode(ctx, "pcm-playback", {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { sourceRate: outRate, capacityMs: 2000, prebufferMs: 60 },
    });
    this.playback.connect(ctx.destination);
    this.status = { bufferedMs: 0, energy: 0, playedMs: 0, overflowed: 0 };
    this.droppedMs = 0;
    this.flushed = 0; // flushes the player confirmed (a test hook reads it)
    this.playback.port.onmessage = (e) => {
      if (e.data.type === "status") {
        this.status = e.data;
      } else if (e.data.type === "flushed") {
        this.droppedMs += e.data.droppedMs;
        this.flushed++;
      }
    };
    this.source = source;
  }

  /** Queue one binary frame of server PCM (the ArrayBuffer is handed over, not copied). */
  play(buffer) {
    this.playback.port.postMessage({ type: "pcm", data: buffer }, [buffer]);
  }

  /** Speech over the agent: hold what is queued (silence plays) until `resume`. */
  pause() {
    this.playback.port.postMessage({ type: "pause" });
  }

  resume() {
    this.playback.port.postMessage({ type: "resume" });
  }

  /** Barge-in: drop everything queued but not yet played. */
  flush() {
    this.status = { ...this.status, bufferedMs: 0 };
    this.playback.port.postMessage({ type: "flush" });
  }

  close() {
    this.source.disconnect(this.capture);
    this.capture.port.postMessage({ type: "stop" });
    this.playback.port.postMessage({ type: "stop" });
    this.capture.disconnect();
    this.playback.disconnect();
  }
}
