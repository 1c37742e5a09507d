// web/pcm-worklet.js's player (pcm-playback) driven by hand, as the audio thread would: what it
// plays, holds on "pause" and drops on "flush". Node has no AudioWorkletGlobalScope, so the three
// globals the worklet uses stand in for it; Chromium runs the real one in tests/web/test_voice.py.

import assert from "node:assert/strict";
import { before, test } from "node:test";

const processors = {};
const RENDER_RATE = 48000; // the AudioContext's rate
const QUANTUM = 128; // samples the audio thread asks for per process() call

before(async () => {
  globalThis.sampleRate = RENDER_RATE;
  globalThis.AudioWorkletProcessor = class {
    constructor() {
      this.posted = [];
      this.port = { postMessage: (m) => this.posted.push(m), onmessage: null };
    }
  };
  globalThis.registerProcessor = (name, cls) => {
    processors[name] = cls;
  };
  await import("../../../web/pcm-worklet.js");
});

/** A player at 24 kHz with a 2 s ring and no prebuffer to wait for. */
function player() {
  return new processors["pcm-playback"]({
    processorOptions: { sourceRate: 24000, capacityMs: 2000, prebufferMs: 0 },
  });
}

/** Hand the player `ms` of a constant tone at 24 kHz, as a "pcm" message does. */
function feed(p, ms, value = 8000) {
  const samples = new Int16Array((24000 * ms) / 1000).fill(value);
  p.port.onmessage({ data: { type: "pcm", data: samples.buffer } });
}

/** Render `quanta` blocks; the samples played. */
function render(p, quanta = 1) {
  const played = [];
  for (let i = 0; i < quanta; i++) {
    const out = new Float32Array(QUANTUM);
    p.process([], [[out]]);
    played.push(...out);
  }
  return played;
}

const lastOf = (p, type) => p.posted.filter((m) => m.type === type).at(-1);

test("plays what it is given at the source rate", () => {
  const p = player();
  feed(p, 100);
  const played = render(p, 10); // 10 × 128 samples at 48 kHz ≈ 26.7 ms, 640 source samples
  assert.ok(played.every((v) => Math.abs(v - 8000 / 0x8000) < 1e-6), "the tone, unchanged");
  assert.equal(p.size, 2400 - 640);
});

test("a pause holds the audio: silence plays and nothing is dropped", () => {
  const p = player();
  feed(p, 100);
  p.port.onmessage({ data: { type: "pause" } });
  const held = render(p, 20);
  assert.ok(held.every((v) => v === 0), "silence while held");
  assert.equal(p.size, 2400, "all 100 ms still queued");
  feed(p, 20); // the gateway's lead arriving while held is kept too
  p.port.onmessage({ data: { type: "resume" } });
  assert.ok(render(p, 1).every((v) => v !== 0), "plays again on resume");
});

test("a flush drops everything queued, says how much, and plays nothing of it", () => {
  const p = player();
  feed(p, 250);
  render(p, 15); // 15 × 128 / 2 = 960 source samples played: 40 ms
  p.port.onmessage({ data: { type: "pause" } });
  p.port.onmessage({ data: { type: "flush" } });
  assert.equal(lastOf(p, "flushed").droppedMs, 210);
  assert.equal(lastOf(p, "status").bufferedMs, 0, "the page hears at once that nothing is left");
  assert.ok(render(p, 10).every((v) => v === 0), "nothing of the dropped audio plays");
  feed(p, 20); // the next reply plays: a flush also ends the hold
  assert.ok(render(p, 1).some((v) => v !== 0));
});
