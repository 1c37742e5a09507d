// The page's session state: a pure reducer (state and action in, new state out) and a small
// store. No DOM and no browser API, so it runs under Node's test runner (tests/web/js/).
//
// Actions are the gateway's messages as they arrive (docs/client-protocol.md) and the page's
// own LOCAL actions. States are frozen and replaced, never changed in place: render.js redraws
// a part of the page only when the part of the state it shows is a new object.

import { FROM_GATEWAY, STATES, TO_GATEWAY } from "./protocol.js";

/** The page's own actions. Prefixed so that none can be taken for a gateway message type. */
export const LOCAL = Object.freeze({
  /** {status: {state: "connecting"|"open"|"waiting"|"closed", delayMs?, code?, reason?}} */
  connection: "page:connection",
  /** {mode: "handsfree"|"ptt"} */
  mode: "page:mode",
  /** {wake}: the wake word chosen in the selector */
  wake: "page:wake",
  newConversation: "page:new-conversation",
  /** Start pressed: the microphone is being opened. */
  voiceStarting: "page:voice-starting",
  /** {transport: "ws"|"webrtc"}: the microphone is open. */
  voiceOn: "page:voice-on",
  voiceOff: "page:voice-off",
  /** {text}: why the microphone could not be opened, and what to do. */
  micError: "page:mic-error",
  /** {reason}: WebRTC failed on this page; voice goes over the WebSocket from now on. */
  webrtcFailed: "page:webrtc-failed",
  /** {to: speakerUri|null, private?}: whom the person's utterances are for (an agent clicked). */
  address: "page:address",
});

/** What the voice indicator shows while voice is off (not a gateway state). */
export const OFF = "off";

const EXPIRED_NOTICE = "The earlier conversation has ended; this is a new one.";

/** The state of a page just loaded: what sessionStorage and localStorage kept, nothing else. */
export function initialState({ session = null, mode = null, wake = null } = {}) {
  return Object.freeze({
    /** {conversationId, token} of the conversation to rejoin, or null. */
    session,
    user: null,
    mode: mode === "ptt" ? "ptt" : "handsfree",
    /** The wake word asked for ("off" or a name), or null for the gateway's default. */
    wake,
    wakeWords: [],
    builtins: [],
    /** Whether the gateway stores the person's voice; null before the welcome says. */
    keepAudio: null,
    connection: { state: "connecting" },
    /** The voice indicator: OFF, or the last session state the gateway sent (STATES). */
    activity: OFF,
    /** {transport: "ws"|"webrtc"} while voice runs, else null. */
    voice: null,
    starting: false,
    micError: null,
    webrtcFailed: null,
    partial: "",
    /** The conversation as shown: {kind: "user"|"agent"|"notice", id?, …}, oldest first. */
    turns: [],
    floor: { conversants: [], floorGranted: [], convener: null },
    /** Whom the person addresses: {to: speakerUri|null, private: bool} (null: the gateway
     * chooses — a name said, the agent talked with, the one best placed). */
    address: NO_ADDRESS,
    /** What a looked-up agent published: {url, manifests: [...], error?}, or null. */
    discovered: null,
    /** Barge-in flushes received (a test hook reads it). */
    flushes: 0,
  });
}

const set = (state, changes) => Object.freeze({ ...state, ...changes });

const NO_ADDRESS = Object.freeze({ to: null, private: false });

/** The `address` message for the gateway, and the `to`/`private` of a typed `text`. */
export function addressFields(address) {
  return address.to ? { to: address.to, private: address.private } : {};
}

/** `turn` appended, unless its id was shown already (a rejoin replays what the page has). */
function addTurn(state, turn, changes = {}) {
  if (turn.id && state.turns.some((t) => t.id === turn.id)) return state;
  return set(state, { ...changes, turns: [...state.turns, Object.freeze(turn)] });
}

/** An agent's reply that streams arrives again under its id with more text (the gateway speaks
 * it sentence by sentence): the turn shown grows in place. The same text again changes nothing. */
function growTurn(state, turn) {
  const at = state.turns.findIndex((t) => t.id === turn.id && t.kind === "agent");
  if (at < 0) return addTurn(state, turn);
  if (state.turns[at].text === turn.text) return state;
  const turns = state.turns.slice();
  turns[at] = Object.freeze(turn);
  return set(state, { turns });
}

const notice = (text) => ({ kind: "notice", text });

/** A transcript that `replaces` an earlier one: the person went on speaking before its answer
 * was heard, so the whole request takes the first part's place, and what answered the first
 * part (not heard: the gateway dropped it unplayed) goes with it. Notices stay. */
function replaced(state, id) {
  const at = id ? state.turns.findIndex((t) => t.id === id && t.kind === "user") : -1;
  if (at < 0) return state;
  const turns = state.turns.filter((t, i) => i < at || (i > at && t.kind === "notice"));
  return set(state, { turns });
}

/** A hand-over (a `notice` with reason `@handover`, `agent` the one that took it): the person's
 * last utterance shows who answers it now, and why ("to Assistant", "Clock passed this to
 * Assistant."), instead of a line of its own (docs/floor.md). */
function handedOver(state, m) {
  let at = state.turns.length - 1;
  while (at >= 0 && state.turns[at].kind !== "user") at -= 1;
  if (at < 0) return addTurn(state, notice(m.text));
  const turn = state.turns[at];
  const taker = state.floor.conversants.find((c) => c.speakerUri === m.agent);
  const badges = taker
    ? [...turn.badges.filter((b) => !b.startsWith("to ")), `to ${taker.name}`]
    : turn.badges;
  const turns = state.turns.slice();
  turns[at] = Object.freeze({ ...turn, badges, why: turn.why ? `${turn.why}; ${m.text}` : m.text });
  return set(state, { turns });
}

/** Why a spoken turn ended, in words, by the gateway's end reason (gateway/proxy/turn_rule.py). */
export const END_REASONS = Object.freeze({
  finished: "the words and the voice said you had finished",
  "semantic finished": "the language model was sure your sentence was finished",
  "semantic unfinished": "the language model heard an unfinished sentence, so it waited longer",
  "semantic unsure":
    "the language model was unsure your sentence was finished and the voice not sure enough, so it waited longer",
  doubt: "the words read as finished but the voice did not, so it waited longer",
  unfinished: "the words did not read as finished, so it waited longer",
  unpunctuated: "the words read as finished but for the full stop, and the voice agreed",
  "one word": "a one-word answer that sounded finished",
  "end silence": "no verdict came in time: it waited the full silence",
  "push-to-talk": "you let go of the button",
  "too long": "the utterance reached its longest length",
});

/** What the agent's bubble says of speech over it, by the gateway's `playback` outcome. */
export const PLAYBACK_LABELS = Object.freeze({
  paused: "paused",
  resumed: "resumed",
  stopped: "stopped by you",
});

/** Why speech over an agent came to what it did, in words (gateway/proxy/overlap.py). */
export const OVERLAP_REASONS = Object.freeze({
  backchannel: "you were following along, not taking the turn",
  noise: "a sound with no words",
  echo: "the agent's own voice coming back through your microphone",
  interruption: "you interrupted",
});

/** A `playback` message: the agent's bubble shows paused / resumed / stopped by you and why;
 * a backchannel, a noise or echo is also a faint line of its own (not a turn). */
function playback(state, m) {
  let next = state;
  const at = state.turns.findIndex((t) => t.kind === "agent" && t.id && t.id === m.reply);
  if (at >= 0 && PLAYBACK_LABELS[m.outcome]) {
    const turns = state.turns.slice();
    const why = m.why ? OVERLAP_REASONS[m.why] || m.why : null;
    turns[at] = Object.freeze({
      ...turns[at],
      playback: Object.freeze({
        outcome: m.outcome,
        label: PLAYBACK_LABELS[m.outcome],
        why: m.why || null,
        text: why ? `${why}${m.heard ? `: “${m.heard}”` : ""}.` : "",
        said: m.outcome === "stopped" && typeof m.said === "string" ? m.said : null,
        playedMs: typeof m.playedMs === "number" ? m.playedMs : null,
      }),
    });
    next = set(state, { turns });
  }
  if (m.why && m.why !== "interruption" && m.outcome !== "paused") {
    const what = m.why === "echo" ? "Ignored" : m.heard ? `You: “${m.heard}”` : "A sound";
    const text = `${what} (${m.why}): ${OVERLAP_REASONS[m.why] || m.why}; the agent went on.`;
    next = addTurn(next, { kind: "aside", why: m.why, text });
  }
  return next;
}

/** A `timing` message as a line of the conversation: which signal ended the turn, and why. */
function endedTurn(m) {
  const stages = m.stagesMs || {};
  const reason = stages.endReason || "end silence";
  const parts = [`Turn ended: ${END_REASONS[reason] || reason}`];
  if (stages.waitMs !== null && stages.waitMs !== undefined) parts.push(`waited ${stages.waitMs} ms of silence`);
  if (typeof stages.semantic === "number") parts.push(`P(finished) from the words ${stages.semantic.toFixed(2)}`);
  return { kind: "timing", reason, text: `${parts.join("; ")}.`, totalMs: stages.total ?? null };
}

function welcome(state, w) {
  const expired = state.session !== null && state.session.conversationId !== w.conversationId;
  const wake = w.wake || "off";
  const wakeWords = w.wakeWords || [];
  let next = set(state, {
    session: { conversationId: w.conversationId, token: w.token },
    user: w.user || null,
    turns: [],
    wakeWords,
    // As the selector reads it back: a wake word it does not offer selects nothing.
    wake: wake === "off" || wakeWords.includes(wake) ? wake : "",
    builtins: w.builtins || [],
    keepAudio: Boolean(w.keepAudio),
    // A new session on the gateway chooses for itself until the person clicks again.
    address: NO_ADDRESS,
  });
  for (const event of w.history || []) next = reduce(next, event);
  if (expired) next = addTurn(next, notice(EXPIRED_NOTICE));
  return set(next, { activity: next.voice ? next.activity : OFF });
}

const fromGateway = {
  [FROM_GATEWAY.welcome]: welcome,
  [FROM_GATEWAY.state]: (s, m) => set(s, { activity: m.state }),
  [FROM_GATEWAY.partial]: (s, m) => set(s, { partial: m.text || "" }),
  [FROM_GATEWAY.transcript]: (s, m) =>
    addTurn(
      replaced(s, m.replaces),
      {
        kind: "user",
        id: m.id,
        who: s.user ? s.user.name : "You",
        text: m.text,
        badges: [
          ...(m.typed ? ["typed"] : []),
          ...(m.toName ? [`to ${m.toName}`] : m.why ? ["to everyone"] : []),
          ...(m.private ? ["private"] : []),
        ],
        why: m.why || null,
      },
      { partial: "" },
    ),
  [FROM_GATEWAY.utterance]: (s, m) =>
    growTurn(s, {
      kind: "agent",
      id: m.id,
      who: m.speaker || m.speakerUri,
      speakerUri: m.speakerUri || "",
      private: Boolean(m.private),
      badges: m.private ? ["private"] : [],
      text: m.text,
      html: m.html || [],
      htmlOmitted: m.htmlOmitted || null,
    }),
  [FROM_GATEWAY.notice]: (s, m) =>
    m.reason === "@handover" ? handedOver(s, m) : addTurn(s, notice(m.text)),
  [FROM_GATEWAY.manifests]: (s, m) =>
    set(s, {
      discovered: Object.freeze({
        url: m.url,
        manifests: m.manifests || [],
        error: m.error || null,
      }),
    }),
  [FROM_GATEWAY.floor]: (s, m) => {
    const conversants = m.conversants || [];
    // An agent that left can no longer be addressed.
    const here = conversants.some((c) => c.speakerUri === s.address.to);
    return set(s, {
      floor: { conversants, floorGranted: m.floorGranted || [], convener: m.convener || null },
      address: here ? s.address : NO_ADDRESS,
    });
  },
  [FROM_GATEWAY.wake]: (s) => set(s, { activity: STATES.listening }),
  [FROM_GATEWAY.flush]: (s) => set(s, { flushes: s.flushes + 1 }),
  [FROM_GATEWAY.playback]: playback,
  [FROM_GATEWAY.timing]: (s, m) => addTurn(s, endedTurn(m)),
};

const local = {
  [LOCAL.connection]: (s, a) => set(s, { connection: a.status }),
  [LOCAL.mode]: (s, a) => set(s, { mode: a.mode }),
  [LOCAL.wake]: (s, a) => set(s, { wake: a.wake }),
  [LOCAL.newConversation]: (s) => set(s, { session: null }),
  [LOCAL.voiceStarting]: (s) => set(s, { starting: true, micError: null }),
  [LOCAL.voiceOn]: (s, a) => set(s, { starting: false, voice: { transport: a.transport } }),
  [LOCAL.voiceOff]: (s) => set(s, { voice: null, activity: OFF }),
  [LOCAL.micError]: (s, a) => set(s, { starting: false, micError: a.text }),
  [LOCAL.address]: (s, a) =>
    set(s, {
      address: a.to ? Object.freeze({ to: a.to, private: Boolean(a.private) }) : NO_ADDRESS,
    }),
  [LOCAL.webrtcFailed]: (s, a) =>
    set(s, { webrtcFailed: a.reason, voice: s.voice && { transport: "ws" } }),
};

const reducers = { ...fromGateway, ...local };

/** The state after `action`; the same object for an action that changes nothing (answer,
 * error, pong and unknown types: their effects are not state, see app.js). */
export function reduce(state, action) {
  const reducer = Object.hasOwn(reducers, action.type) ? reducers[action.type] : null;
  return reducer ? reducer(state, action) : state;
}

/** The hello for the next (re)connect: rejoin the conversation with the current settings, and
 * the page's time zone (`timeZone`, IANA) when it has one. */
export function hello(state, timeZone = null) {
  const message = {
    type: TO_GATEWAY.hello,
    transport: state.voice ? state.voice.transport : "none",
  };
  if (state.session) {
    message.conversationId = state.session.conversationId;
    message.token = state.session.token;
  }
  message.mode = state.mode;
  if (state.wake) message.wake = state.wake;
  // Where the person is: agents tell the time in this zone (docs/floor.md).
  if (timeZone) message.timeZone = timeZone;
  return message;
}

/** The audio transport voice starts with: WebRTC unless forced off (`?transport=ws`), absent,
 * or already failed on this page. */
export function transportFor(state, { forced = null, webrtc = true } = {}) {
  return forced === "ws" || state.webrtcFailed || !webrtc ? "ws" : "webrtc";
}

/**
 * Holds the state; `dispatch` reduces an action and tells the subscribers (state, previous
 * state, action) when the state changed.
 */
export function createStore(state, reducer = reduce) {
  const listeners = new Set();
  return {
    get state() {
      return state;
    },
    dispatch(action) {
      const previous = state;
      state = reducer(state, action);
      if (state !== previous) for (const listener of listeners) listener(state, previous, action);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
