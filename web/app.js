// The page: conversation, floor, voice controls. Protocol: docs/client-protocol.md.

import { describeMicError, LevelMeter, openMicrophone, PcmPipe, playChime } from "./audio.js";
import { Connection } from "./connection.js";
import { connected, createOffer, inboundAudioEnergy } from "./rtc.js";
import { sanitizeHtml } from "./sanitize.js";

const $ = (id) => document.getElementById(id);
const SESSION_KEY = "ofp.session"; // {conversationId, token}: sessionStorage, so a reload rejoins
const WAKE_KEY = "ofp.wake";
const MODE_KEY = "ofp.mode";
/** How long the remote audio stays muted after a flush over WebRTC: about the depth of the
 * browser's jitter buffer, which still holds the interrupted speech. */
const RTC_FLUSH_MUTE_MS = 200;

const STATE_LABELS = {
  off: "Off",
  idle: "Waiting for the wake word",
  listening: "Listening",
  hearing: "Hearing you…",
  thinking: "Thinking…",
  speaking: "Speaking",
};

const forcedTransport = new URLSearchParams(location.search).get("transport");

const app = {
  session: readJson(sessionStorage, SESSION_KEY),
  user: null,
  mode: localStorage.getItem(MODE_KEY) === "ptt" ? "ptt" : "handsfree",
  wake: sessionStorage.getItem(WAKE_KEY),
  /** Set while voice runs: {ctx, stream, source, meter, remoteStream, transport, pipe, pc}. */
  voice: null,
  /** Bumped on every welcome and on stop, so stale async media set-up gives up. */
  generation: 0,
  /** Resolvers of the pending WebRTC answer, if an offer is out. */
  answerWait: null,
  /** Why WebRTC failed on this page, if it did: voice then stays on the WebSocket. */
  webrtcFailed: null,
  flushes: 0,
  seen: new Set(),
};

function readJson(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) || "null");
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------- connection
function wsUrl() {
  const url = new URL("ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  return url.href;
}

function hello() {
  const message = { type: "hello", transport: app.voice ? app.voice.transport : "none" };
  if (app.session) {
    message.conversationId = app.session.conversationId;
    message.token = app.session.token;
  }
  message.mode = app.mode;
  if (app.wake) message.wake = app.wake;
  return message;
}

const conn = new Connection(wsUrl(), hello);

conn.addEventListener("status", (e) => {
  const { state, delayMs, reason } = e.detail;
  const el = $("connection");
  el.dataset.state = state;
  if (state === "connecting") el.textContent = "Connecting…";
  else if (state === "open") el.textContent = "Connected";
  else if (state === "waiting") {
    const why = reason ? ` (${reason})` : "";
    el.textContent = `Connection lost${why}; retrying in ${Math.ceil(delayMs / 1000)} s`;
  } else {
    el.textContent = `Disconnected${reason ? `: ${reason}` : ""}. Reload the page to try again.`;
  }
  if (state !== "open" && app.answerWait) app.answerWait.reject(new Error("connection lost"));
});

conn.addEventListener("binary", (e) => {
  if (app.voice && app.voice.pipe) app.voice.pipe.play(e.detail);
});

conn.addEventListener("message", (e) => handle(e.detail));

window.addEventListener("online", () => conn.retryNow());

// ---------------------------------------------------------------------------- server messages
const handlers = {
  welcome: onWelcome,
  state: (m) => showState(m.state),
  partial: (m) => {
    $("partial").textContent = m.text || "";
  },
  transcript: addTranscript,
  utterance: addUtterance,
  notice: (m) => addNotice(m.text),
  floor: renderFloor,
  wake: () => {
    if (app.voice) playChime(app.voice.ctx);
    showState("listening");
  },
  flush: onFlush,
  answer: (m) => app.answerWait && app.answerWait.resolve(m.sdp),
  error: (m) => {
    if (app.answerWait) app.answerWait.reject(new Error(m.message));
    else showError(m.message);
  },
  pong: () => {},
};

function handle(message) {
  const handler = handlers[message.type];
  if (handler) handler(message);
}

function onWelcome(w) {
  const expired = app.session && app.session.conversationId !== w.conversationId;
  app.session = { conversationId: w.conversationId, token: w.token };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(app.session));
  app.user = w.user;
  document.body.dataset.conversationId = w.conversationId;

  $("conversation").replaceChildren();
  app.seen.clear();
  for (const event of w.history || []) handle(event);
  if (expired) addNotice("The earlier conversation has ended; this is a new one.");

  const wake = $("wake");
  wake.replaceChildren(
    ...["off", ...(w.wakeWords || [])].map((v) => new Option(v === "off" ? v : wakeLabel(v), v)),
  );
  wake.value = w.wake || "off";
  app.wake = wake.value;
  $("builtins").replaceChildren(...(w.builtins || []).map((b) => new Option("", `builtin:${b}`)));
  const download = $("download");
  download.href =
    `export/${encodeURIComponent(w.conversationId)}?format=mplp-dialog&token=` +
    encodeURIComponent(w.token);
  download.removeAttribute("aria-disabled");
  $("voice-kept").textContent = w.keepAudio
    ? "Your voice is stored with the conversation's record on this gateway."
    : "Your voice is not stored: the record keeps what was said as text.";

  app.generation++;
  if (app.voice) attachMedia(w, app.generation);
  else showState("off");
}

function onFlush() {
  app.flushes++;
  const voice = app.voice;
  if (!voice) return;
  if (voice.pipe) voice.pipe.flush();
  if (voice.pc) {
    // Over WebRTC the server has dropped its queue; what is left is the jitter buffer.
    const audio = $("remote-audio");
    audio.muted = true;
    setTimeout(() => {
      audio.muted = false;
    }, RTC_FLUSH_MUTE_MS);
  }
}

// ----------------------------------------------------------------------------- conversation
function appendTurn(item) {
  const list = $("conversation");
  list.appendChild(item);
  item.scrollIntoView({ block: "end", behavior: "smooth" });
}

function turn(className, testid, who, badges = []) {
  const li = document.createElement("li");
  li.className = `turn ${className}`;
  if (testid) li.dataset.testid = testid;
  const head = document.createElement("div");
  head.className = "who";
  head.textContent = who;
  for (const badge of badges) {
    const span = document.createElement("span");
    span.className = "badge";
    span.textContent = badge;
    head.appendChild(span);
  }
  li.appendChild(head);
  return li;
}

function firstSeen(id) {
  if (!id) return true;
  if (app.seen.has(id)) return false;
  app.seen.add(id);
  return true;
}

function addTranscript(m) {
  if (!firstSeen(m.id)) return;
  const li = turn("user", "transcript", app.user ? app.user.name : "You", m.typed ? ["typed"] : []);
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = m.text;
  li.appendChild(body);
  $("partial").textContent = "";
  appendTurn(li);
}

function addUtterance(m) {
  if (!firstSeen(m.id)) return;
  const li = turn("agent", "agent-utterance", m.speaker || m.speakerUri, m.private ? ["private"] : []);
  li.dataset.speakerUri = m.speakerUri || "";
  if (m.private) li.classList.add("private");
  const body = document.createElement("div");
  body.className = "text";
  if (m.html && m.html.length) {
    body.classList.add("rich");
    for (const html of m.html) body.appendChild(sanitizeHtml(html));
  } else {
    body.textContent = m.text;
  }
  li.appendChild(body);
  if (m.htmlOmitted) {
    // The gateway left the html out (too large or too deep to show safely): say so.
    const note = document.createElement("p");
    note.className = "hint html-omitted";
    note.textContent = `Formatting not shown: ${m.htmlOmitted}.`;
    li.appendChild(note);
  }
  appendTurn(li);
}

function addNotice(text) {
  const li = document.createElement("li");
  li.className = "turn notice";
  li.textContent = text;
  appendTurn(li);
}

function showError(text) {
  const box = $("errors");
  const p = document.createElement("p");
  p.textContent = text;
  box.appendChild(p);
  while (box.childElementCount > 3) box.firstElementChild.remove();
  setTimeout(() => p.remove(), 8000);
}

function showState(state) {
  const el = $("state");
  el.dataset.state = state;
  let label = STATE_LABELS[state] || state;
  if (state === "idle" && app.wake && app.wake !== "off") label = `Say “${wakeLabel(app.wake)}”`;
  el.textContent = label;
}

function wakeLabel(value) {
  return value.replace(/^phrase:/, "").replaceAll("_", " ");
}

// ------------------------------------------------------------------------------------ floor
const uriOf = (x) => (typeof x === "string" ? x : x && x.speakerUri);

function renderFloor(f) {
  const granted = new Set((f.floorGranted || []).map(uriOf));
  const convener = uriOf(f.convener);
  const items = (f.conversants || []).map((c) => {
    const li = document.createElement("li");
    li.className = "conversant";
    li.dataset.speakerUri = c.speakerUri;
    if (c.serviceUrl) li.dataset.serviceUrl = c.serviceUrl;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = c.name || c.speakerUri;
    li.appendChild(name);
    const badges = [];
    if (c.role) badges.push(c.role);
    if (granted.has(c.speakerUri)) badges.push("has the floor");
    if (convener && convener === c.speakerUri) badges.push("convener");
    for (const text of badges) {
      const b = document.createElement("span");
      b.className = text === "has the floor" ? "badge floor-holder" : "badge";
      b.textContent = text;
      li.appendChild(b);
    }
    if (c.serviceUrl) {
      const url = document.createElement("span");
      url.className = "url";
      url.textContent = c.serviceUrl;
      li.appendChild(url);
    }
    const isUser = app.user && c.speakerUri === app.user.speakerUri;
    if (!isUser && c.serviceUrl) {
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "link uninvite";
      remove.textContent = "Uninvite";
      remove.setAttribute("aria-label", `Uninvite ${c.name || c.speakerUri}`);
      remove.addEventListener("click", () => send({ type: "uninvite", speakerUri: c.speakerUri }));
      li.appendChild(remove);
    }
    return li;
  });
  $("conversants").replaceChildren(...items);
}

// ------------------------------------------------------------------------------------ voice
function send(message) {
  if (!conn.send(message)) showError("Not connected to the gateway yet; try again in a moment.");
}

/** The click handler of Start: everything that needs the user gesture happens before the
 * first await (Safari forgets the gesture after it). */
function startVoice() {
  const ctx = new AudioContext({ latencyHint: "interactive" });
  ctx.resume();
  const audio = $("remote-audio");
  const remoteStream = new MediaStream();
  audio.srcObject = remoteStream;
  audio.play().catch(() => {}); // unlocks the element; it has nothing to play yet
  $("mic-error").hidden = true;
  $("start").disabled = true;
  openMicrophone()
    .then((stream) => {
      const source = ctx.createMediaStreamSource(stream);
      const transport =
        forcedTransport === "ws" || app.webrtcFailed || !window.RTCPeerConnection ? "ws" : "webrtc";
      app.voice = {
        ctx, stream, source, remoteStream, transport, pipe: null, pc: null,
        meter: new LevelMeter(ctx, source, $("meter-bar")),
      };
      stream.getAudioTracks()[0].addEventListener("ended", () => {
        stopVoice();
        showMicError(new DOMException("track ended", "NotReadableError"));
      });
      updateVoiceUi();
      conn.start(); // rejoin with an audio transport
    })
    .catch((error) => {
      ctx.close();
      audio.srcObject = null;
      showMicError(error);
    })
    .finally(() => {
      $("start").disabled = false;
    });
}

function showMicError(error) {
  $("mic-error-text").textContent = describeMicError(error);
  $("mic-error").hidden = false;
}

/** Stop voice: tracks, audio graph, peer connection. `rejoin` reconnects as text-only. */
function stopVoice({ rejoin = true } = {}) {
  const voice = app.voice;
  if (!voice) return;
  app.voice = null;
  app.generation++;
  detachMedia(voice);
  voice.meter.stop();
  for (const track of voice.stream.getTracks()) track.stop();
  voice.ctx.close();
  $("remote-audio").srcObject = null;
  updateVoiceUi();
  showState("off");
  if (rejoin) conn.start();
}

function detachMedia(voice) {
  if (voice.pipe) voice.pipe.close();
  if (voice.pc) voice.pc.close();
  voice.pipe = voice.pc = null;
}

/** After a welcome: connect the audio transport the hello asked for. */
async function attachMedia(w, generation) {
  const voice = app.voice;
  detachMedia(voice);
  const stale = () => generation !== app.generation || app.voice !== voice;
  try {
    if (voice.transport === "ws") {
      const pipe = await PcmPipe.open(voice.ctx, voice.source, {
        outRate: (w.audio && w.audio.outRate) || 24000,
        send: (buffer) => conn.sendBinary(buffer),
        backlog: () => conn.bufferedAmount,
      });
      if (stale()) pipe.close();
      else voice.pipe = pipe;
      return;
    }
    const { pc, sdp } = await createOffer(voice.stream.getAudioTracks()[0], voice.remoteStream);
    if (stale()) {
      pc.close();
      return;
    }
    voice.pc = pc;
    pc.addEventListener("track", () => $("remote-audio").play().catch(() => {}));
    const answer = new Promise((resolve, reject) => {
      app.answerWait = { resolve, reject };
    }).finally(() => {
      app.answerWait = null;
    });
    conn.send({ type: "offer", sdp });
    await pc.setRemoteDescription({ type: "answer", sdp: await answer });
    await connected(pc);
  } catch (error) {
    if (stale() || voice.transport !== "webrtc") {
      if (!stale()) showError(`Audio could not start: ${error.message}`);
      return;
    }
    // WebRTC is blocked or broken here (firewall, no UDP, old browser): audio over the
    // WebSocket works wherever the page itself loads.
    app.webrtcFailed = `WebRTC failed: ${error.message}`;
    voice.transport = "ws";
    detachMedia(voice);
    updateVoiceUi();
    conn.start();
  }
}

function updateVoiceUi() {
  const on = app.voice !== null;
  const start = $("start");
  start.textContent = on ? "Stop voice" : "Start voice";
  start.setAttribute("aria-pressed", String(on));
  $("ptt").hidden = !(on && app.mode === "ptt");
  const why = app.webrtcFailed ? ` (${app.webrtcFailed})` : "";
  $("transport-info").textContent = !on
    ? ""
    : app.voice.transport === "ws"
      ? `Audio over the WebSocket${why}`
      : "Audio over WebRTC";
}

// --------------------------------------------------------------------------------- controls
$("start").addEventListener("click", () => (app.voice ? stopVoice() : startVoice()));
$("mic-retry").addEventListener("click", startVoice);
$("hush").addEventListener("click", () => send({ type: "stop" }));

$("text-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("text-input");
  const text = input.value.trim();
  if (text && conn.send({ type: "text", text })) input.value = "";
  else if (text) showError("Not connected to the gateway yet; your text is kept, send it again.");
});

$("invite-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("invite-url");
  const url = input.value.trim();
  if (url && conn.send({ type: "invite", url })) input.value = "";
});

for (const radio of document.querySelectorAll('input[name="mode"]')) {
  radio.checked = radio.value === app.mode;
  radio.addEventListener("change", () => {
    app.mode = radio.value;
    localStorage.setItem(MODE_KEY, app.mode);
    send({ type: "mode", mode: app.mode });
    updateVoiceUi();
  });
}

$("wake").addEventListener("change", (e) => {
  app.wake = e.target.value;
  sessionStorage.setItem(WAKE_KEY, app.wake);
  send({ type: "wake", wake: app.wake });
});

// Push-to-talk: pointer capture keeps the release on this button even if the pointer leaves.
const ptt = $("ptt");
const pttPress = (down) => {
  if (ptt.getAttribute("aria-pressed") === String(down)) return;
  ptt.setAttribute("aria-pressed", String(down));
  conn.send({ type: "ptt", down });
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

$("new-conversation").addEventListener("click", () => {
  sessionStorage.removeItem(SESSION_KEY);
  app.session = null;
  conn.start();
});

// Leaving the page (or the browser freezing it): release the microphone and all audio work.
window.addEventListener("pagehide", () => {
  stopVoice({ rejoin: false });
  conn.stop();
});
window.addEventListener("pageshow", (e) => {
  if (e.persisted) conn.start(); // back from the back/forward cache
});

/** Read-only hooks for tests and for debugging from the console. */
window.ofpDebug = Object.freeze({
  get flushes() {
    return app.flushes;
  },
  get transport() {
    return app.voice ? app.voice.transport : "none";
  },
  get conversationId() {
    return app.session ? app.session.conversationId : null;
  },
  get rtcState() {
    return app.voice && app.voice.pc ? app.voice.pc.connectionState : null;
  },
  get droppedMs() {
    return app.voice && app.voice.pipe ? app.voice.pipe.droppedMs : 0;
  },
  /** Agent audio queued in the page (WebSocket transport) but not yet played, in ms. */
  bufferedMs: () => (app.voice && app.voice.pipe ? app.voice.pipe.status.bufferedMs : 0),
  /** Energy of the agent audio played so far (WebSocket transport). */
  playedEnergy: () => (app.voice && app.voice.pipe ? app.voice.pipe.status.energy : 0),
  /** RTCStats totalAudioEnergy of the received audio (WebRTC transport). */
  inboundAudioEnergy: () =>
    app.voice && app.voice.pc ? inboundAudioEnergy(app.voice.pc) : Promise.resolve(0),
  level: () => (app.voice ? app.voice.meter.level : 0),
});

updateVoiceUi();
conn.start();
