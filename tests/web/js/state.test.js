// The page's state (web/state.js) under Node: gateway messages and page actions in, state out.
// Run by tests/web/test_js_units.py (node --test).

import assert from "node:assert/strict";
import { test } from "node:test";

import { FROM_GATEWAY, STATES, TO_GATEWAY } from "../../../web/protocol.js";
import {
  addressFields,
  createStore,
  hello,
  initialState,
  LOCAL,
  OFF,
  reduce,
  transportFor,
} from "../../../web/state.js";

const USER = { speakerUri: "tag:user", name: "Ada" };

function welcome(extra = {}) {
  return {
    type: FROM_GATEWAY.welcome,
    conversationId: "conv:1",
    token: "secret",
    user: USER,
    wakeWords: ["alexa", "hey_jarvis"],
    wake: "off",
    builtins: ["parrot", "clock"],
    keepAudio: false,
    history: [],
    ...extra,
  };
}

const run = (state, ...actions) => actions.reduce(reduce, state);

test("a fresh page keeps what storage held and shows voice off", () => {
  const s = initialState({ session: { conversationId: "c", token: "t" }, mode: "ptt", wake: "alexa" });
  assert.equal(s.mode, "ptt");
  assert.equal(s.activity, OFF);
  assert.deepEqual(hello(s), {
    type: TO_GATEWAY.hello,
    transport: "none",
    conversationId: "c",
    token: "t",
    mode: "ptt",
    wake: "alexa",
  });
  // Anything but "ptt" in storage is hands-free; no session and no wake word: not in the hello.
  const fresh = initialState({ mode: "bogus" });
  assert.deepEqual(hello(fresh), { type: "hello", transport: "none", mode: "handsfree" });
  // The page's time zone, when it has one, goes with it (agents tell the time there).
  assert.equal(hello(fresh, "Asia/Tokyo").timeZone, "Asia/Tokyo");
  assert.equal("timeZone" in hello(fresh, ""), false);
});

test("states are frozen and replaced, never changed in place", () => {
  const before = initialState();
  const after = reduce(before, { type: FROM_GATEWAY.partial, text: "turn off" });
  assert.ok(Object.isFrozen(before) && Object.isFrozen(after));
  assert.equal(before.partial, "");
  assert.equal(after.partial, "turn off");
  assert.equal(reduce(after, { type: FROM_GATEWAY.partial }).partial, "");
});

test("answer, error, pong and unknown types leave the very same state", () => {
  const s = initialState();
  for (const type of [FROM_GATEWAY.answer, FROM_GATEWAY.error, FROM_GATEWAY.pong, "nope"]) {
    assert.equal(reduce(s, { type, message: "x", sdp: "v=0" }), s, type);
  }
  // An inherited name is not a message type.
  assert.equal(reduce(s, { type: "toString" }), s);
});

test("the welcome sets the session, replays the history once and offers the wake words", () => {
  const history = [
    { type: FROM_GATEWAY.transcript, id: "e1", text: "hello", typed: true },
    { type: FROM_GATEWAY.utterance, id: "e2", speaker: "Parrot", speakerUri: "tag:p", text: "hi" },
    { type: FROM_GATEWAY.transcript, id: "e1", text: "hello", typed: true },
  ];
  const s = run(initialState(), welcome({ history }));
  assert.deepEqual(s.session, { conversationId: "conv:1", token: "secret" });
  assert.deepEqual(
    s.turns.map((t) => [t.kind, t.id, t.who, t.badges]),
    [
      ["user", "e1", "Ada", ["typed"]],
      ["agent", "e2", "Parrot", []],
    ],
  );
  assert.deepEqual(s.wakeWords, ["alexa", "hey_jarvis"]);
  assert.deepEqual(s.builtins, ["parrot", "clock"]);
  assert.equal(s.keepAudio, false);
  // A rejoin replays the same history: the list is rebuilt, not doubled.
  const again = reduce(s, welcome({ history }));
  assert.equal(again.turns.length, 2);
  assert.notEqual(again.turns, s.turns);
});

test("a welcome into another conversation says the earlier one has ended", () => {
  const stored = initialState({ session: { conversationId: "conv:old", token: "t" } });
  const s = reduce(stored, welcome());
  assert.deepEqual(s.turns, [{ kind: "notice", text: "The earlier conversation has ended; this is a new one." }]);
  // Rejoining the same conversation: no notice.
  assert.deepEqual(reduce(s, welcome()).turns, []);
});

test("the welcome's wake word is selected only if offered", () => {
  assert.equal(reduce(initialState(), welcome({ wake: "alexa" })).wake, "alexa");
  assert.equal(reduce(initialState(), welcome({ wake: undefined })).wake, "off");
  assert.equal(reduce(initialState(), welcome({ wake: "okay_nabu" })).wake, "");
});

test("voice state follows the gateway while voice is on, and is off after a welcome without it", () => {
  let s = reduce(initialState(), { type: FROM_GATEWAY.state, state: STATES.hearing });
  assert.equal(s.activity, STATES.hearing);
  assert.equal(reduce(s, welcome()).activity, OFF);
  s = run(initialState(), { type: LOCAL.voiceOn, transport: "webrtc" }, { type: "state", state: "speaking" });
  assert.equal(reduce(s, welcome()).activity, STATES.speaking);
  assert.equal(reduce(s, { type: FROM_GATEWAY.wake, model: "alexa" }).activity, STATES.listening);
  const off = reduce(s, { type: LOCAL.voiceOff });
  assert.equal(off.voice, null);
  assert.equal(off.activity, OFF);
});

test("a transcript that replaces another takes its place, and the unheard answer goes", () => {
  const first = { type: FROM_GATEWAY.transcript, id: "e1", text: "Turn on the lights." };
  const answer = { type: FROM_GATEWAY.utterance, id: "a1", speaker: "Parrot", text: "You said" };
  const earlier = { type: FROM_GATEWAY.transcript, id: "e0", text: "Hello." };
  const s = run(initialState(), welcome(), earlier, first, answer);
  assert.deepEqual(s.turns.filter((t) => t.kind !== "notice").map((t) => t.id), ["e0", "e1", "a1"]);
  const whole = {
    type: FROM_GATEWAY.transcript,
    id: "e2",
    text: "Turn on the lights in the kitchen please.",
    replaces: "e1",
  };
  const after = reduce(s, whole);
  const shown = after.turns.filter((t) => t.kind !== "notice");
  assert.deepEqual(shown.map((t) => t.id), ["e0", "e2"]);
  assert.equal(shown.at(-1).text, "Turn on the lights in the kitchen please.");
  // Replacing an id not shown (a reload lost it) just adds the transcript.
  const lone = reduce(run(initialState(), welcome()), whole);
  assert.deepEqual(lone.turns.filter((t) => t.kind !== "notice").map((t) => t.id), ["e2"]);
});

test("a transcript ends the partial; a repeated id changes nothing", () => {
  const s = run(initialState(), welcome(), { type: FROM_GATEWAY.partial, text: "turn of" });
  const t = { type: FROM_GATEWAY.transcript, id: "e9", text: "Turn off the lights." };
  const after = reduce(s, t);
  assert.equal(after.partial, "");
  assert.deepEqual(after.turns.at(-1), {
    kind: "user",
    id: "e9",
    who: "Ada",
    text: "Turn off the lights.",
    badges: [],
    why: null,
  });
  const typing = reduce(after, { type: FROM_GATEWAY.partial, text: "and" });
  assert.equal(reduce(typing, t), typing);
});

test("an utterance keeps its html, privacy and the reason html was left out", () => {
  const s = run(
    initialState(),
    { type: "utterance", id: "a", speakerUri: "tag:c", text: "t", html: ["<b>t</b>"], private: true },
    { type: "utterance", id: "b", speaker: "Clock", speakerUri: "tag:k", text: "u", htmlOmitted: "too large to show" },
    { type: FROM_GATEWAY.notice, text: "Clock timed out" },
  );
  const [a, b, n] = s.turns;
  assert.equal(a.who, "tag:c"); // no name: the speakerUri
  assert.deepEqual([a.private, a.badges, a.html], [true, ["private"], ["<b>t</b>"]]);
  assert.deepEqual([b.who, b.html, b.htmlOmitted], ["Clock", [], "too large to show"]);
  assert.deepEqual(n, { kind: "notice", text: "Clock timed out" });
  // Notices have no id: two alike are both shown.
  assert.equal(reduce(s, { type: "notice", text: "Clock timed out" }).turns.length, 4);
});

test("a streaming reply grows in place under its id; the same text again changes nothing", () => {
  const part = { type: "utterance", id: "r", speaker: "Assistant", speakerUri: "tag:a", text: "One." };
  const s = run(initialState(), { type: FROM_GATEWAY.notice, text: "n" }, part);
  const grown = reduce(s, { ...part, text: "One. Two." });
  assert.equal(grown.turns.length, 2);
  assert.equal(grown.turns[1].text, "One. Two.");
  assert.equal(grown.turns[0], s.turns[0]);
  assert.equal(reduce(grown, { ...part, text: "One. Two." }), grown);
  // A user's transcript under a repeated id still changes nothing.
  const t = { type: FROM_GATEWAY.transcript, id: "u", text: "hi" };
  const withT = reduce(grown, t);
  assert.equal(reduce(withT, { ...t, text: "other" }), withT);
});

test("the floor message replaces the floor; missing lists are empty", () => {
  const s = reduce(initialState(), { type: FROM_GATEWAY.floor, conversants: [{ speakerUri: "a" }] });
  assert.deepEqual(s.floor, { conversants: [{ speakerUri: "a" }], floorGranted: [], convener: null });
});

test("flushes are counted", () => {
  const s = run(initialState(), { type: FROM_GATEWAY.flush }, { type: FROM_GATEWAY.flush });
  assert.equal(s.flushes, 2);
});

test("starting voice clears the microphone error; a failure ends the start", () => {
  let s = reduce(initialState(), { type: LOCAL.micError, text: "refused" });
  s = reduce(s, { type: LOCAL.voiceStarting });
  assert.deepEqual([s.starting, s.micError], [true, null]);
  s = reduce(s, { type: LOCAL.micError, text: "busy" });
  assert.deepEqual([s.starting, s.micError, s.voice], [false, "busy", null]);
});

test("WebRTC failing moves voice to the WebSocket, now and for the next start", () => {
  let s = reduce(initialState(), { type: LOCAL.voiceOn, transport: "webrtc" });
  assert.equal(transportFor(s), "webrtc");
  assert.equal(hello(s).transport, "webrtc");
  s = reduce(s, { type: LOCAL.webrtcFailed, reason: "WebRTC failed: timeout" });
  assert.deepEqual(s.voice, { transport: "ws" });
  assert.equal(hello(s).transport, "ws");
  assert.equal(transportFor(s), "ws");
  // Voice off when it fails (stopped meanwhile): it stays off.
  const off = reduce(initialState(), { type: LOCAL.webrtcFailed, reason: "x" });
  assert.equal(off.voice, null);
  assert.equal(transportFor(initialState(), { forced: "ws" }), "ws");
  assert.equal(transportFor(initialState(), { webrtc: false }), "ws");
});

test("mode, wake word and a new conversation go into the next hello", () => {
  const s = run(
    initialState({ session: { conversationId: "c", token: "t" } }),
    { type: LOCAL.mode, mode: "ptt" },
    { type: LOCAL.wake, wake: "hey_jarvis" },
    { type: LOCAL.newConversation },
  );
  assert.deepEqual(hello(s), { type: "hello", transport: "none", mode: "ptt", wake: "hey_jarvis" });
});

test("the store tells subscribers of changes only, with the previous state", () => {
  const store = createStore(initialState());
  const seen = [];
  const unsubscribe = store.subscribe((state, previous, action) => seen.push([state, previous, action.type]));
  const first = store.state;
  store.dispatch({ type: FROM_GATEWAY.pong });
  assert.equal(seen.length, 0);
  store.dispatch({ type: FROM_GATEWAY.partial, text: "x" });
  assert.equal(seen.length, 1);
  assert.equal(seen[0][1], first);
  assert.equal(seen[0][0], store.state);
  assert.equal(store.state.partial, "x");
  unsubscribe();
  store.dispatch({ type: FROM_GATEWAY.partial, text: "y" });
  assert.equal(seen.length, 1);
});

test("a turn's timing shows which signal ended it", () => {
  const s = run(initialState(), welcome());
  const timing = {
    type: FROM_GATEWAY.timing,
    stagesMs: { endReason: "semantic finished", waitMs: 200, semantic: 0.734, total: 310 },
    sinceLastVoicedMs: 310,
  };
  const turn = reduce(s, timing).turns.at(-1);
  assert.equal(turn.kind, "timing");
  assert.equal(turn.reason, "semantic finished");
  assert.match(turn.text, /language model was sure/);
  assert.match(turn.text, /waited 200 ms/);
  assert.match(turn.text, /0\.73/);
  const plain = reduce(s, { type: FROM_GATEWAY.timing, stagesMs: { endReason: "finished", waitMs: null } });
  assert.doesNotMatch(plain.turns.at(-1).text, /language model|waited/);
});

test("addressing: a click chooses an agent, typed text carries it, it ends when the agent leaves", () => {
  const floor = {
    type: FROM_GATEWAY.floor,
    conversants: [
      { speakerUri: "tag:user", name: "Ada" },
      { speakerUri: "tag:clock", serviceUrl: "builtin:clock", name: "Clock" },
    ],
    floorGranted: [],
  };
  const s = run(initialState(), welcome(), floor);
  assert.deepEqual(addressFields(s.address), {});
  const chosen = reduce(s, { type: LOCAL.address, to: "tag:clock", private: true });
  assert.deepEqual(addressFields(chosen.address), { to: "tag:clock", private: true });
  // The transcript shows whom it went to and why.
  const said = reduce(chosen, {
    type: FROM_GATEWAY.transcript,
    id: "e1",
    text: "what time is it",
    typed: true,
    to: "tag:clock",
    toName: "Clock",
    why: "you chose Clock",
    private: true,
  });
  assert.deepEqual(said.turns.at(-1).badges, ["typed", "to Clock", "private"]);
  assert.equal(said.turns.at(-1).why, "you chose Clock");
  const everyone = reduce(said, {
    type: FROM_GATEWAY.transcript,
    id: "e2",
    text: "Everyone, hi",
    why: "you addressed everyone",
  });
  assert.deepEqual(everyone.turns.at(-1).badges, ["to everyone"]);
  // The clock leaves: nobody is addressed any more.
  const left = reduce(everyone, { ...floor, conversants: [floor.conversants[0]] });
  assert.equal(left.address.to, null);
  // A new welcome (a new session on the gateway) starts without a choice.
  assert.equal(reduce(chosen, welcome()).address.to, null);
});

test("speech over an agent marks its bubble paused, resumed or stopped by you, and why", () => {
  const said = { type: FROM_GATEWAY.utterance, id: "de:9", speaker: "Parrot", speakerUri: "tag:p", text: "Once upon a time" };
  const paused = run(initialState(), welcome(), said, { type: FROM_GATEWAY.playback, outcome: "paused", reply: "de:9" });
  assert.equal(paused.turns.at(-1).playback.label, "paused");
  assert.equal(paused.turns.length, 1, "a pause is no line of its own");
  const resumed = run(paused, { type: FROM_GATEWAY.playback, outcome: "resumed", why: "backchannel", heard: "yeah", reply: "de:9" });
  const bubble = resumed.turns.find((t) => t.id === "de:9");
  assert.equal(bubble.playback.label, "resumed");
  assert.match(bubble.playback.text, /following along.*yeah/);
  const aside = resumed.turns.at(-1);
  assert.equal(aside.kind, "aside");
  assert.equal(aside.why, "backchannel");
  assert.match(aside.text, /You: “yeah”/);
  const stopped = run(paused, { type: FROM_GATEWAY.playback, outcome: "stopped", why: "interruption", heard: "wait stop", reply: "de:9" });
  assert.equal(stopped.turns.find((t) => t.id === "de:9").playback.label, "stopped by you");
  const heard = run(paused, { type: FROM_GATEWAY.playback, outcome: "stopped", why: "interruption", reply: "de:9", playedMs: 1200, said: "Once upon" });
  assert.equal(heard.turns.find((t) => t.id === "de:9").playback.said, "Once upon");
  assert.equal(resumed.turns.find((t) => t.id === "de:9").playback.said, null, "only a stop says what was heard");
  assert.equal(stopped.turns.length, 1, "an interruption is the next turn, not an aside");
  const echo = run(paused, { type: FROM_GATEWAY.playback, outcome: "ignored", why: "echo", reply: "de:9" });
  assert.equal(echo.turns.at(-1).why, "echo");
  assert.equal(echo.turns.find((t) => t.id === "de:9").playback.label, "paused", "echo leaves the bubble as it was");
});

test("an agent that went on before the decision shows resumed, then why, or stopped by you", () => {
  const said = { type: FROM_GATEWAY.utterance, id: "de:9", speaker: "Parrot", speakerUri: "tag:p", text: "Once upon a time" };
  const paused = run(initialState(), welcome(), said, { type: FROM_GATEWAY.playback, outcome: "paused", reply: "de:9" });
  const early = run(paused, { type: FROM_GATEWAY.playback, outcome: "resumed", heard: "okay", reply: "de:9" });
  const bubble = early.turns.find((t) => t.id === "de:9");
  assert.equal(bubble.playback.label, "resumed");
  assert.equal(bubble.playback.why, null, "not decided yet");
  assert.equal(early.turns.length, 1, "no aside before the decision");
  const decided = run(early, { type: FROM_GATEWAY.playback, outcome: "resumed", why: "backchannel", heard: "okay okay", reply: "de:9" });
  assert.equal(decided.turns.find((t) => t.id === "de:9").playback.why, "backchannel");
  assert.equal(decided.turns.filter((t) => t.kind === "aside").length, 1, "one aside, at the decision");
  const stopped = run(early, { type: FROM_GATEWAY.playback, outcome: "stopped", why: "interruption", heard: "okay stop there", reply: "de:9" });
  assert.equal(stopped.turns.find((t) => t.id === "de:9").playback.label, "stopped by you");
  assert.equal(stopped.turns.length, 1);
});

test("a hand-over shows on the person's utterance: who answers it now, and why", () => {
  const s = run(
    initialState(),
    welcome(),
    {
      type: FROM_GATEWAY.floor,
      conversants: [
        { speakerUri: "tag:clock", serviceUrl: "builtin:clock", name: "Clock" },
        { speakerUri: "tag:assistant", serviceUrl: "builtin:assistant", name: "Assistant" },
      ],
      floorGranted: [],
    },
    {
      type: FROM_GATEWAY.transcript,
      id: "e1",
      text: "How was your day?",
      typed: true,
      to: "tag:clock",
      toName: "Clock",
      why: "you are talking with Clock",
    },
    {
      type: FROM_GATEWAY.notice,
      text: "Clock passed this to Assistant.",
      reason: "@handover",
      agent: "tag:assistant",
    },
  );
  const last = s.turns[s.turns.length - 1];
  assert.equal(last.kind, "user");
  assert.deepEqual(last.badges, ["typed", "to Assistant"]);
  assert.equal(last.why, "you are talking with Clock; Clock passed this to Assistant.");
  // Any other notice is a line of its own.
  const other = reduce(s, { type: FROM_GATEWAY.notice, text: "Clock timed out", reason: "@slow" });
  assert.equal(other.turns[other.turns.length - 1].kind, "notice");
});
