// The page <-> gateway message names (docs/client-protocol.md). Generated from
// gateway/server/messages.py by `python -m gateway.server.messages --js`: do not
// edit; tests/server/test_messages.py fails when this file is out of date.

/** Message types the page sends. */
export const TO_GATEWAY = Object.freeze({
  hello: "hello",
  text: "text",
  address: "address",
  invite: "invite",
  discover: "discover",
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
  manifests: "manifests",
  wake: "wake",
  flush: "flush",
  playback: "playback",
  answer: "answer",
  pong: "pong",
  timing: "timing",
  error: "error",
});

/** Session states in `state` messages. */
export const STATES = Object.freeze({
  idle: "idle",
  listening: "listening",
  hearing: "hearing",
  thinking: "thinking",
  speaking: "speaking",
});
