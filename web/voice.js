// Voice: the microphone, its level meter and the audio transport (WebRTC, or PCM over the
// WebSocket where WebRTC fails). Holds the media objects, which are not state; what the page
// shows of them (on, transport, errors) it reports to the store as LOCAL actions.

import { describeMicError, LevelMeter, openMicrophone, PcmPipe, playChime } from "./audio.js";
import { TO_GATEWAY } from "./protocol.js";
import { connected, createOffer, inboundAudioEnergy } from "./rtc.js";
import { LOCAL, transportFor } from "./state.js";

/** How long the remote audio stays muted after a flush over WebRTC: about the depth of the
 * browser's jitter buffer, which still holds the interrupted speech. */
const RTC_FLUSH_MUTE_MS = 200;

function detach(media) {
  if (media.pipe) media.pipe.close();
  if (media.pc) media.pc.close();
  media.pipe = media.pc = null;
}

export class Voice {
  /**
   * @param {object} deps `conn` (a Connection), `store` (state.js), `audio` (the <audio> that
   *   plays WebRTC), `meterBar`, `showError(text)`, `forced` (the transport `?transport=` asks)
   */
  constructor({ conn, store, audio, meterBar, showError, forced = null }) {
    Object.assign(this, { conn, store, audio, meterBar, showError, forced });
    /** Set while voice runs: {ctx, stream, source, meter, remoteStream, pipe, pc}. */
    this.media = null;
    /** Bumped on every welcome and on stop, so stale async media set-up gives up. */
    this.generation = 0;
    /** Resolvers of the pending WebRTC answer, if an offer is out. */
    this.answerWait = null;
    /** Whether the agent's audio is held (a `playback` "paused" not yet resumed or flushed). */
    this.paused = false;
  }

  get on() {
    return this.media !== null;
  }

  /** The click handler of Start: everything that needs the user gesture happens before the
   * first await (Safari forgets the gesture after it). */
  start() {
    const { store, audio } = this;
    const ctx = new AudioContext({ latencyHint: "interactive" });
    ctx.resume();
    const remoteStream = new MediaStream();
    audio.srcObject = remoteStream;
    audio.play().catch(() => {}); // unlocks the element; it has nothing to play yet
    store.dispatch({ type: LOCAL.voiceStarting });
    openMicrophone()
      .then((stream) => {
        const source = ctx.createMediaStreamSource(stream);
        const webrtc = Boolean(window.RTCPeerConnection);
        const transport = transportFor(store.state, { forced: this.forced, webrtc });
        const meter = new LevelMeter(ctx, source, this.meterBar);
        this.media = { ctx, stream, source, remoteStream, meter, pipe: null, pc: null };
        stream.getAudioTracks()[0].addEventListener("ended", () => {
          this.stop();
          this.micError(new DOMException("track ended", "NotReadableError"));
        });
        store.dispatch({ type: LOCAL.voiceOn, transport });
        this.conn.start(); // rejoin with an audio transport
      })
      .catch((error) => {
        ctx.close();
        audio.srcObject = null;
        this.micError(error);
      });
  }

  micError(error) {
    this.store.dispatch({ type: LOCAL.micError, text: describeMicError(error) });
  }

  /** Stop voice: tracks, audio graph, peer connection. `rejoin` reconnects as text-only. */
  stop({ rejoin = true } = {}) {
    const media = this.media;
    if (!media) return;
    this.media = null;
    this.generation++;
    detach(media);
    media.meter.stop();
    for (const track of media.stream.getTracks()) track.stop();
    media.ctx.close();
    this.audio.srcObject = null;
    this.store.dispatch({ type: LOCAL.voiceOff });
    if (rejoin) this.conn.start();
  }

  /** A welcome: (re)connect the audio transport the hello asked for. */
  welcome(w) {
    this.generation++;
    if (this.media) this.attach(w, this.generation);
  }

  async attach(w, generation) {
    const { conn, media } = this;
    const transport = this.store.state.voice.transport;
    detach(media);
    const stale = () => generation !== this.generation || this.media !== media;
    try {
      if (transport === "ws") {
        const pipe = await PcmPipe.open(media.ctx, media.source, {
          outRate: (w.audio && w.audio.outRate) || 24000,
          send: (buffer) => conn.sendBinary(buffer),
          backlog: () => conn.bufferedAmount,
        });
        if (stale()) pipe.close();
        else media.pipe = pipe;
        return;
      }
      const { pc, sdp } = await createOffer(media.stream.getAudioTracks()[0], media.remoteStream);
      if (stale()) {
        pc.close();
        return;
      }
      media.pc = pc;
      pc.addEventListener("track", () => this.audio.play().catch(() => {}));
      const answer = new Promise((resolve, reject) => {
        this.answerWait = { resolve, reject };
      }).finally(() => {
        this.answerWait = null;
      });
      conn.send({ type: TO_GATEWAY.offer, sdp });
      await pc.setRemoteDescription({ type: "answer", sdp: await answer });
      await connected(pc);
    } catch (error) {
      if (stale() || transport !== "webrtc") {
        if (!stale()) this.showError(`Audio could not start: ${error.message}`);
        return;
      }
      // WebRTC is blocked or broken here (firewall, no UDP, old browser): audio over the
      // WebSocket works wherever the page itself loads.
      this.store.dispatch({ type: LOCAL.webrtcFailed, reason: `WebRTC failed: ${error.message}` });
      detach(media);
      conn.start();
    }
  }

  /** The gateway's answer to our offer. */
  answer(sdp) {
    if (this.answerWait) this.answerWait.resolve(sdp);
  }

  /** Fail the pending offer, if there is one (an error message, a lost connection); true if
   * there was one. */
  refuse(error) {
    if (!this.answerWait) return false;
    this.answerWait.reject(error);
    return true;
  }

  /** Barge-in: drop the agent audio queued here. */
  flush() {
    const media = this.media;
    this.paused = false;
    if (!media) return;
    if (media.pipe) media.pipe.flush();
    if (media.pc) {
      // Over WebRTC the server has dropped its queue; what is left is the jitter buffer.
      const audio = this.audio;
      audio.muted = true;
      setTimeout(() => {
        audio.muted = false;
      }, RTC_FLUSH_MUTE_MS);
    }
  }

  /** Speech over the agent: hold its audio here (kept) until `resume` or `flush`. */
  pause() {
    const media = this.media;
    if (!media) return;
    this.paused = true;
    if (media.pipe) media.pipe.pause();
    if (media.pc) this.audio.muted = true; // the server holds its track's audio too
  }

  /** The speech over the agent was not an interruption: play on. */
  resume() {
    const media = this.media;
    this.paused = false;
    if (!media) return;
    if (media.pipe) media.pipe.resume();
    if (media.pc) this.audio.muted = false;
  }

  /** Agent PCM from the WebSocket. */
  play(buffer) {
    if (this.media && this.media.pipe) this.media.pipe.play(buffer);
  }

  /** The wake word was heard. */
  chime() {
    if (this.media) playChime(this.media.ctx);
  }

  // Read by the test hooks (app.js, window.ofpDebug).
  get rtcState() {
    return this.media && this.media.pc ? this.media.pc.connectionState : null;
  }

  get pipeStatus() {
    return this.media && this.media.pipe ? this.media.pipe.status : { bufferedMs: 0, energy: 0 };
  }

  get droppedMs() {
    return this.media && this.media.pipe ? this.media.pipe.droppedMs : 0;
  }

  /** Flushes the audio player confirmed (WebSocket transport). */
  get playerFlushes() {
    return this.media && this.media.pipe ? this.media.pipe.flushed : 0;
  }

  inboundAudioEnergy() {
    return this.media && this.media.pc ? inboundAudioEnergy(this.media.pc) : Promise.resolve(0);
  }

  get level() {
    return this.media ? this.media.meter.level : 0;
  }
}
