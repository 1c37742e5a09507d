// The page's wiring, run once from index.html: the elements, the store (state.js) drawn by
// render.js, listeners that turn clicks and the gateway's messages into actions, and the
// connection. No logic of its own: that lives in the modules it imports, which tests import.
// Protocol: docs/client-protocol.md.

import { Connection } from "./connection.js";
import { FROM_GATEWAY, TO_GATEWAY } from "./protocol.js";
import { elements, render, showError } from "./render.js";
import { addressFields, createStore, hello, initialState, LOCAL } from "./state.js";
import { Voice } from "./voice.js";

const SESSION_KEY = "ofp.session"; // {conversationId, token}: sessionStorage, so a reload rejoins
const WAKE_KEY = "ofp.wake";
const MODE_KEY = "ofp.mode";

function readJson(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) || "null");
  } catch {
    return null;
  }
}

function wsUrl() {
  const url = new URL("ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  return url.href;
}

const els = elements(document);
const store = createStore(
  initialState({
    session: readJson(sessionStorage, SESSION_KEY),
    mode: localStorage.getItem(MODE_KEY),
    wake: sessionStorage.getItem(WAKE_KEY),
  }),
);
store.subscribe((state, previous) => render(els, state, previous));
render(els, store.state);

const conn = new Connection(wsUrl(), () =>
  hello(store.state, Intl.DateTimeFormat().resolvedOptions().timeZone),
);
const complain = (text) => showError(els.errors, text);
const voice = new Voice({
  conn,
  store,
  audio: els.remoteAudio,
  meterBar: els.meterBar,
  showError: complain,
  forced: new URLSearchParams(location.search).get("transport"),
});

function send(message) {
  if (!conn.send(message)) complain("Not connected to the gateway yet; try again in a moment.");
}

// ------------------------------------------------------------------------------- connection
/** What a gateway message does beyond the state it changes (the store reduces it first). */
const effects = {
  [FROM_GATEWAY.welcome]: (w) => {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(store.state.session));
    voice.welcome(w);
  },
  [FROM_GATEWAY.wake]: () => voice.chime(),
  [FROM_GATEWAY.flush]: () => voice.flush(),
  [FROM_GATEWAY.playback]: (m) => {
    if (m.outcome === "paused") voice.pause();
    else if (m.outcome === "resumed") voice.resume();
  },
  [FROM_GATEWAY.answer]: (m) => voice.answer(m.sdp),
  [FROM_GATEWAY.error]: (m) => {
    // While an offer is out, an error is the offer's: voice then falls back to the WebSocket.
    if (!voice.refuse(new Error(m.message))) complain(m.message);
  },
};

conn.addEventListener("status", (e) => {
  store.dispatch({ type: LOCAL.connection, status: e.detail });
  if (e.detail.state !== "open") voice.refuse(new Error("connection lost"));
});
// Agent audio received since the last flush, and what it was as each transcript arrived: in the
// socket's own order, so a test can tell what came between a barge-in's flush and its
// transcript without racing the page's polling (ofpDebug.audioAtTranscripts).
let audioSinceFlush = 0;
const audioAtTranscripts = [];
conn.addEventListener("binary", (e) => {
  audioSinceFlush += e.detail.byteLength;
  voice.play(e.detail);
});
conn.addEventListener("message", (e) => {
  const message = e.detail;
  if (message.type === FROM_GATEWAY.flush) audioSinceFlush = 0;
  if (message.type === FROM_GATEWAY.transcript) {
    audioAtTranscripts.push(audioSinceFlush);
    if (audioAtTranscripts.length > 100) audioAtTranscripts.shift();
  }
  store.dispatch(message);
  if (Object.hasOwn(effects, message.type)) effects[message.type](message);
});
window.addEventListener("online", () => conn.retryNow());

// --------------------------------------------------------------------------------- controls
els.start.addEventListener("click", () => (voice.on ? voice.stop() : voice.start()));
els.micRetry.addEventListener("click", () => voice.start());
els.hush.addEventListener("click", () => send({ type: TO_GATEWAY.stop }));

els.textForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = els.textInput.value.trim();
  const message = { type: TO_GATEWAY.text, text, ...addressFields(store.state.address) };
  if (text && conn.sendSoon(message)) els.textInput.value = "";
  else if (text) complain("Not connected to the gateway yet; your text is kept, send it again.");
});
conn.addEventListener("unsent", (e) => {
  const typed = e.detail.filter((m) => m.type === TO_GATEWAY.text).map((m) => m.text);
  if (!typed.length) return;
  if (!els.textInput.value) els.textInput.value = typed.join(" ");
  complain("The connection closed before your text went out; it is back in the box, send it again.");
});

els.inviteForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const url = els.inviteUrl.value.trim();
  if (url && conn.send({ type: TO_GATEWAY.invite, url })) els.inviteUrl.value = "";
});

els.discover.addEventListener("click", () => {
  const url = els.inviteUrl.value.trim();
  if (url) send({ type: TO_GATEWAY.discover, url });
});

els.discovered.addEventListener("click", (e) => {
  const button = e.target.closest("button.invite-found");
  if (button) send({ type: TO_GATEWAY.invite, url: button.closest("li").dataset.serviceUrl });
});

els.conversants.addEventListener("click", (e) => {
  const button = e.target.closest("button.uninvite");
  if (button) send({ type: TO_GATEWAY.uninvite, speakerUri: button.closest("li").dataset.speakerUri });
  const talk = e.target.closest("button.address");
  if (talk) {
    const uri = talk.closest("li").dataset.speakerUri;
    const { address } = store.state;
    chooseAddress(address.to === uri ? null : uri, address.private);
  }
});

/** Address an agent (null: let the gateway choose); spoken turns follow it (`address`). */
function chooseAddress(to, isPrivate) {
  store.dispatch({ type: LOCAL.address, to, private: isPrivate });
  send({ type: TO_GATEWAY.address, to, private: Boolean(to && isPrivate) });
}
els.addressPrivate.addEventListener("change", (e) =>
  chooseAddress(store.state.address.to, e.target.checked),
);
els.addressClear.addEventListener("click", () => chooseAddress(null, false));

for (const radio of els.modes) {
  radio.addEventListener("change", () => {
    store.dispatch({ type: LOCAL.mode, mode: radio.value });
    localStorage.setItem(MODE_KEY, radio.value);
    send({ type: TO_GATEWAY.mode, mode: radio.value });
  });
}

els.wake.addEventListener("change", (e) => {
  const wake = e.target.value;
  store.dispatch({ type: LOCAL.wake, wake });
  sessionStorage.setItem(WAKE_KEY, wake);
  send({ type: TO_GATEWAY.wake, wake });
});

// Push-to-talk: pointer capture keeps the release on this button even if the pointer leaves.
const ptt = els.ptt;
const pttPress = (down) => {
  if (ptt.getAttribute("aria-pressed") === String(down)) return;
  ptt.setAttribute("aria-pressed", String(down));
  conn.send({ type: TO_GATEWAY.ptt, down });
};
ptt.addEventListener("pointerdown", (e) => {
  ptt.setPointerCapture(e.pointerId);
  pttPress(true);
});
for (const type of ["pointerup", "pointercancel", "blur"]) {
  ptt.addEventListener(type, () => pttPress(false));
}
ptt.addEventListener("keydown", (e) => {
  if ((e.key === " " || e.key === "Enter") && !e.repeat) {
    e.preventDefault();
    pttPress(true);
  }
});
ptt.addEventListener("keyup", (e) => {
  if (e.key === " " || e.key === "Enter") pttPress(false);
});

els.newConversation.addEventListener("click", () => {
  sessionStorage.removeItem(SESSION_KEY);
  store.dispatch({ type: LOCAL.newConversation });
  conn.start();
});

// Leaving the page (or the browser freezing it): release the microphone and all audio work.
window.addEventListener("pagehide", () => {
  voice.stop({ rejoin: false });
  conn.stop();
});
window.addEventListener("pageshow", (e) => {
  if (e.persisted) conn.start(); // back from the back/forward cache
});

/** Read-only hooks for tests and for debugging from the console. */
window.ofpDebug = Object.freeze({
  get flushes() {
    return store.state.flushes;
  },
  /** Whether the page holds the agent's audio (speech over it is being decided). */
  get paused() {
    return voice.paused;
  },
  get transport() {
    return store.state.voice ? store.state.voice.transport : "none";
  },
  get conversationId() {
    return store.state.session ? store.state.session.conversationId : null;
  },
  get rtcState() {
    return voice.rtcState;
  },
  get droppedMs() {
    return voice.droppedMs;
  },
  /** Flushes the audio player confirmed, having dropped what it held (WebSocket transport). */
  get playerFlushes() {
    return voice.playerFlushes;
  },
  /** Bytes of agent audio (WebSocket transport) received after the last flush, as each of the
   * last 100 transcripts arrived. */
  audioAtTranscripts: () => [...audioAtTranscripts],
  /** Agent audio queued in the page (WebSocket transport) but not yet played, in ms. */
  bufferedMs: () => voice.pipeStatus.bufferedMs,
  /** Energy of the agent audio played so far (WebSocket transport). */
  playedEnergy: () => voice.pipeStatus.energy,
  /** RTCStats totalAudioEnergy of the received audio (WebRTC transport). */
  inboundAudioEnergy: () => voice.inboundAudioEnergy(),
  level: () => voice.level,
});

conn.start();
