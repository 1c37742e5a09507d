// AudioWorklet processors for the WebSocket audio transport (see docs/client-protocol.md).
//
// pcm-capture:  microphone (context rate) -> 16 kHz mono Int16, posted in 20 ms frames.
// pcm-playback: 24 kHz Int16 from the server -> a bounded ring buffer -> the speakers,
//               cleared at once on "flush" so barge-in also silences audio queued here;
//               held on "pause" (silence plays, nothing is dropped) until "resume".
//
// Both run on the audio rendering thread: no allocation per sample, no unbounded growth.

/** Windowed-sinc resampler from `inRate` to `outRate` for a stream of Float32 blocks. */
class Resampler {
  constructor(inRate, outRate, halfTaps = 8) {
    this.step = inRate / outRate; // input samples per output sample
    // Anti-alias cut-off just under the output Nyquist frequency, relative to the input rate.
    this.cutoff = Math.min(1, outRate / inRate) * 0.94;
    this.radius = Math.ceil(halfTaps / this.cutoff); // filter half-width, in input samples
    this.history = new Float32Array(this.radius * 2 + 1024);
    this.length = 0; // valid samples in history
    this.t = this.radius; // position of the next output sample, in history coordinates
  }

  kernel(d) {
    if (d === 0) return this.cutoff;
    const x = Math.PI * this.cutoff * d;
    const hann = 0.5 + 0.5 * Math.cos((Math.PI * d) / this.radius);
    return (this.cutoff * Math.sin(x) / x) * hann;
  }

  /** Feed `input`; call `emit(sample)` for each output sample now computable. */
  process(input, emit) {
    this.history.set(input, this.length);
    this.length += input.length;
    while (this.t + this.radius < this.length) {
      const centre = Math.floor(this.t);
      let acc = 0;
      for (let k = centre - this.radius + 1; k <= centre + this.radius; k++) {
        acc += this.history[k] * this.kernel(k - this.t);
      }
      emit(acc);
      this.t += this.step;
    }
    // Keep only what future outputs still need, so history stays a fixed size.
    const keepFrom = Math.max(0, Math.floor(this.t) - this.radius);
    this.history.copyWithin(0, keepFrom, this.length);
    this.length -= keepFrom;
    this.t -= keepFrom;
  }
}

class PcmCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { targetRate = 16000, frameMs = 20 } = options.processorOptions || {};
    this.frameSamples = Math.round((targetRate * frameMs) / 1000);
    this.resampler = new Resampler(sampleRate, targetRate);
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
    this.running = true;
    this.port.onmessage = (e) => {
      if (e.data && e.data.type === "stop") this.running = false;
    };
    this.emit = (s) => {
      const v = Math.max(-1, Math.min(1, s));
      this.frame[this.filled++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.filled === this.frameSamples) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(this.frameSamples);
        this.filled = 0;
      }
    };
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.resampler.process(channel, this.emit);
    return this.running;
  }
}

class PcmPlayback extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { sourceRate = 24000, capacityMs = 2000, prebufferMs = 60 } =
      options.processorOptions || {};
    this.sourceRate = sourceRate;
    this.step = sourceRate / sampleRate; // source samples per output sample
    this.ring = new Float32Array(Math.round((sourceRate * capacityMs) / 1000));
    this.prebuffer = Math.round((sourceRate * prebufferMs) / 1000);
    this.read = 0; // ring index of the next sample to play (integer part)
    this.frac = 0; // fractional position between read and read + 1
    this.size = 0; // samples buffered
    this.playing = false; // false while (re)filling the prebuffer after running dry
    this.energy = 0; // sum of squares of everything played, like RTCStats totalAudioEnergy
    this.playedSamples = 0;
    this.overflowed = 0;
    this.sinceStatus = 0;
    this.reportedSize = 0;
    this.statusEvery = Math.round(sampleRate / 20); // report about every 50 ms
    this.running = true;
    this.held = false; // paused: speech over the agent is being decided
    this.port.onmessage = (e) => this.onMessage(e.data);
  }

  onMessage(msg) {
    if (msg.type === "pcm") {
      this.write(new Int16Array(msg.data));
    } else if (msg.type === "pause") {
      this.held = true;
    } else if (msg.type === "resume") {
      this.held = false;
    } else if (msg.type === "flush") {
      this.held = false;
      const dropped = this.size;
      this.size = 0;
      this.frac = 0;
      this.playing = false;
      this.port.postMessage({ type: "flushed", droppedMs: (dropped * 1000) / this.sourceRate });
      this.report();
    } else if (msg.type === "report") {
      this.report(); // asked for: how much is buffered now, whether or not it is rendering
    } else if (msg.type === "stop") {
      this.running = false;
    }
  }

  write(samples) {
    const cap = this.ring.length;
    for (let i = 0; i < samples.length; i++) {
      if (this.size === cap) {
        // Full: drop the oldest sample. The server paces in real time, so this only happens
        // after a long stall; staying bounded matters more than those few milliseconds.
        this.read = (this.read + 1) % cap;
        this.size--;
        this.overflowed++;
      }
      this.ring[(this.read + this.size) % cap] = samples[i] / 0x8000;
      this.size++;
    }
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    const cap = this.ring.length;
    if (this.held) {
      out.fill(0);
      for (let c = 1; c < outputs[0].length; c++) outputs[0][c].fill(0);
      return this.running;
    }
    if (!this.playing && this.size >= this.prebuffer) this.playing = true;
    for (let i = 0; i < out.length; i++) {
      if (!this.playing || this.size < 2) {
        // Ran dry: a lone last sample cannot be interpolated; drop it and refill the prebuffer.
        if (this.playing) this.size = 0;
        out[i] = 0;
        this.playing = false;
        continue;
      }
      const a = this.ring[this.read];
      const b = this.ring[(this.read + 1) % cap];
      const v = a + (b - a) * this.frac;
      out[i] = v;
      this.energy += v * v;
      this.playedSamples++;
      this.frac += this.step;
      const whole = Math.floor(this.frac);
      this.frac -= whole;
      this.read = (this.read + whole) % cap;
      this.size -= whole;
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    this.sinceStatus += out.length;
    // Quiet when idle: report while audio is buffered, and once more when it has drained.
    if (this.sinceStatus >= this.statusEvery && (this.size > 0 || this.reportedSize > 0)) {
      this.report();
    }
    return this.running;
  }

  report() {
    this.sinceStatus = 0;
    this.reportedSize = this.size;
    this.port.postMessage({
      type: "status",
      bufferedMs: (this.size * 1000) / this.sourceRate,
      energy: this.energy / sampleRate,
      playedMs: (this.playedSamples * 1000) / sampleRate,
      overflowed: this.overflowed,
    });
  }
}

registerProcessor("pcm-capture", PcmCapture);
registerProcessor("pcm-playback", PcmPlayback);
