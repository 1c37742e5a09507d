// The WebSocket to the gateway: hello on every (re)connect, reconnect with backoff.

import { FROM_GATEWAY, TO_GATEWAY } from "./protocol.js";

/** Delay before reconnect attempt `attempt` (0-based): exponential from 0.5 s, capped at 30 s,
 * with ±50 % jitter so many pages cut off together do not all come back in the same instant. */
export function backoffDelay(attempt, random = Math.random) {
  const base = Math.min(30000, 500 * 2 ** attempt);
  return Math.round(base * (0.5 + random()));
}

/** A ping goes out this often; a connection silent for DEAD_AFTER_MS is treated as dropped
 * (a dead TCP connection can otherwise sit "open" for minutes before the browser notices). */
const PING_EVERY_MS = 15000;
const DEAD_AFTER_MS = 40000;

/** Messages kept while the socket opens (at most this many), sent once the gateway welcomes it:
 * what a person typed just as the page reconnected (Start reconnects with an audio transport). */
const OUTBOX_MAX = 8;

/** Close codes after which reconnecting cannot help. */
const FINAL_CODES = new Set([
  1008, // policy: no hello in time, or a refused request
  1009, // a frame too large: the same client would send it again
  4000, // the conversation was opened in another page: taking it back would ping-pong
]);

/**
 * One logical connection to `/ws` that survives drops.
 *
 * Events: `open`, `message` (detail: parsed JSON), `binary` (detail: ArrayBuffer),
 * `status` (detail: {state: "connecting"|"open"|"waiting"|"closed", delayMs?, code?, reason?}),
 * `unsent` (detail: the messages kept by `sendSoon` that the socket closed on).
 */
export class Connection extends EventTarget {
  /** @param {() => object} hello builds the hello message for each (re)connect */
  constructor(url, hello) {
    super();
    this.url = url;
    this.hello = hello;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.heartbeat = null;
    this.lastHeard = 0;
    this.stopped = true;
    /** What `sendSoon` kept for the socket being opened. */
    this.outbox = [];
  }

  /** Connect (or reconnect now, with a fresh hello). */
  start() {
    this.stopped = false;
    this.attempt = 0;
    this.openSocket();
  }

  /** Close for good; no reconnect. */
  stop() {
    this.stopped = true;
    this.dropSocket();
    this.unsent();
  }

  /** Whether a message sent now would go out. */
  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  /** Bytes queued in the socket but not yet sent (audio senders check this to stay bounded). */
  get bufferedAmount() {
    return this.ws ? this.ws.bufferedAmount : 0;
  }

  send(message) {
    if (!this.isOpen) return false;
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
    return true;
  }

  /** Send now, or, while the socket is being opened, once the gateway has welcomed it; whether
   * it was sent or kept. Not while waiting to reconnect: the person is told and retries. */
  sendSoon(message) {
    if (this.send(message)) return true;
    const opening = this.ws !== null && this.ws.readyState === WebSocket.CONNECTING;
    if (!opening || this.outbox.length >= OUTBOX_MAX) return false;
    this.outbox.push(message);
    return true;
  }

  sendBinary(buffer) {
    if (!this.isOpen) return false;
    this.ws.send(buffer);
    return true;
  }

  /** Reconnect now rather than at the end of the backoff (e.g. the network came back). */
  retryNow() {
    if (!this.stopped && this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
      this.openSocket();
    }
  }

  dropSocket() {
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    this.timer = this.heartbeat = null;
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      ws.close(1000, "client closed");
    }
  }

  openSocket() {
    this.dropSocket();
    this.status({ state: "connecting" });
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify(this.hello()));
      this.lastHeard = Date.now();
      this.heartbeat = setInterval(() => this.checkAlive(), PING_EVERY_MS);
      this.status({ state: "open" });
      this.dispatchEvent(new Event("open"));
    };
    ws.onmessage = (e) => {
      this.lastHeard = Date.now();
      if (typeof e.data !== "string") {
        this.dispatchEvent(new CustomEvent("binary", { detail: e.data }));
        return;
      }
      let message;
      try {
        message = JSON.parse(e.data);
      } catch {
        return; // not ours to interpret; the protocol only sends JSON objects as text
      }
      if (message.type === FROM_GATEWAY.welcome) this.attempt = 0; // a full handshake resets the backoff
      this.dispatchEvent(new CustomEvent("message", { detail: message }));
      if (message.type === FROM_GATEWAY.welcome) {
        // After the page took in the welcome, so what was typed follows the rejoin.
        for (const kept of this.outbox.splice(0)) this.send(kept);
      }
    };
    ws.onclose = (e) => {
      this.ws = null;
      this.dropped(e.code, e.reason);
    };
  }

  checkAlive() {
    if (Date.now() - this.lastHeard > DEAD_AFTER_MS) {
      this.dropSocket();
      this.dropped(1006, "no answer from the gateway");
    } else {
      this.send({ type: TO_GATEWAY.ping });
    }
  }

  dropped(code, reason) {
    this.unsent();
    clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.stopped || FINAL_CODES.has(code)) {
      this.status({ state: "closed", code, reason });
      return;
    }
    const delayMs = backoffDelay(this.attempt++);
    this.status({ state: "waiting", delayMs, code, reason });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.openSocket();
    }, delayMs);
  }

  /** The socket closed (or was stopped) before its welcome: what `sendSoon` kept goes back to
   * the page. A reconnect of the page's own (`start`) carries it over to the fresh socket. */
  unsent() {
    if (this.outbox.length) this.dispatchEvent(new CustomEvent("unsent", { detail: this.outbox.splice(0) }));
  }

  status(detail) {
    this.dispatchEvent(new CustomEvent("status", { detail }));
  }
}
