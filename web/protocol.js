// The page <-> gateway message names (docs/client-protocol.md). Provisional, written by hand:
// the typed protocol (gateway/server/messages.py) generates this file, with this shape.

/** Message types the page sends. */
export const TO_GATEWAY = Object.freeze({
  hello: "hello",
  text: "text",
  invite: "invite",
  uninvite: "uninvite",
  mode: "mode",
  ptt: "ptt",
  wake: "wake",
  stop: "stop",
  ping: "ping",
  offer: "offer",
});

/** Message types the gateway sends. */
export const FROM_GATEWAY = Object.freeze({
  welcome: "welcome",
  state: "state",
  partial: "partial",
  transcript: "transcript",
  utterance: "utterance",
  floor: "floor",
  notice: "notice",
  wake: "wake",
  flush: "flush",
  error: "error",
  pong: "pong",
  answer: "answer",
});

/** Session states in `state` messages. */
export const STATES = Object.freeze({
  idle: "idle",
  listening: "listening",
  hearing: "hearing",
  thinking: "thinking",
  speaking: "speaking",
});
