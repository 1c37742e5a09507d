// The page drawn from the state (state.js). Each part is redrawn only when the part of the state
// it shows is a new object; the conversation only appends what is new. Given the elements: no
// listeners, no globals. The text of each part comes from a pure function, tested under Node.

import { STATES } from "./protocol.js";
import { sanitizeHtml } from "./sanitize.js";
import { OFF } from "./state.js";

const STATE_LABELS = {
  [OFF]: "Off",
  [STATES.idle]: "Waiting for the wake word",
  [STATES.listening]: "Listening",
  [STATES.hearing]: "Hearing you…",
  [STATES.thinking]: "Thinking…",
  [STATES.speaking]: "Speaking",
};

const HAS_FLOOR = "has the floor";

/** The elements the page draws into, by role. */
export function elements(doc) {
  const $ = (id) => doc.getElementById(id);
  return {
    body: doc.body,
    connection: $("connection"),
    state: $("state"),
    partial: $("partial"),
    conversation: $("conversation"),
    conversants: $("conversants"),
    errors: $("errors"),
    start: $("start"),
    hush: $("hush"),
    ptt: $("ptt"),
    micError: $("mic-error"),
    micErrorText: $("mic-error-text"),
    micRetry: $("mic-retry"),
    meterBar: $("meter-bar"),
    modes: [...doc.querySelectorAll('input[name="mode"]')],
    wake: $("wake"),
    transportInfo: $("transport-info"),
    remoteAudio: $("remote-audio"),
    textForm: $("text-form"),
    textInput: $("text-input"),
    addressee: $("addressee"),
    addresseeName: $("addressee-name"),
    addressPrivate: $("address-private"),
    addressClear: $("address-clear"),
    inviteForm: $("invite-form"),
    inviteUrl: $("invite-url"),
    builtins: $("builtins"),
    discover: $("discover"),
    discovered: $("discovered"),
    download: $("download"),
    newConversation: $("new-conversation"),
    voiceKept: $("voice-kept"),
  };
}

// ---------------------------------------------------------------------------------- texts
export function connectionText({ state, delayMs, reason }) {
  if (state === "connecting") return "Connecting…";
  if (state === "open") return "Connected";
  if (state === "waiting") {
    const why = reason ? ` (${reason})` : "";
    return `Connection lost${why}; retrying in ${Math.ceil(delayMs / 1000)} s`;
  }
  return `Disconnected${reason ? `: ${reason}` : ""}. Reload the page to try again.`;
}

export function wakeLabel(value) {
  return value.replace(/^phrase:/, "").replaceAll("_", " ");
}

export function activityLabel(activity, wake) {
  if (activity === STATES.idle && wake && wake !== "off") return `Say “${wakeLabel(wake)}”`;
  return STATE_LABELS[activity] || activity;
}

export function transportText(voice, webrtcFailed) {
  if (!voice) return "";
  if (voice.transport !== "ws") return "Audio over WebRTC";
  return `Audio over the WebSocket${webrtcFailed ? ` (${webrtcFailed})` : ""}`;
}

export function keepAudioText(keepAudio) {
  return keepAudio
    ? "Your voice is stored with the conversation's record on this gateway."
    : "Your voice is not stored: the record keeps what was said as text.";
}

export function downloadHref({ conversationId, token }) {
  return (
    `export/${encodeURIComponent(conversationId)}?format=mplp-dialog&token=` +
    encodeURIComponent(token)
  );
}

const uriOf = (x) => (typeof x === "string" ? x : x && x.speakerUri);

/** The composer's line saying whom the next utterance is for ("" when the gateway chooses). */
export function addresseeText(address, floor) {
  if (!address || !address.to) return "";
  const c = floor.conversants.find((x) => x.speakerUri === address.to);
  return `to ${c ? c.name || c.speakerUri : address.to}`;
}

/** The floor as listed: each conversant's name, badges, and whether it can be uninvited or
 * addressed (`addressed`: the person's utterances go to it). */
export function floorView(floor, user, address = null) {
  const granted = new Set(floor.floorGranted.map(uriOf));
  const convener = uriOf(floor.convener);
  return floor.conversants.map((c) => {
    const badges = [];
    if (c.role) badges.push(c.role);
    if (granted.has(c.speakerUri)) badges.push(HAS_FLOOR);
    if (convener && convener === c.speakerUri) badges.push("convener");
    const isUser = Boolean(user) && c.speakerUri === user.speakerUri;
    // The convener keeps order; it does not answer (docs/floor.md), so it is not addressed.
    const isConvener = Boolean(convener) && convener === c.speakerUri;
    return {
      speakerUri: c.speakerUri,
      serviceUrl: c.serviceUrl || null,
      name: c.name || c.speakerUri,
      badges,
      uninvite: !isUser && Boolean(c.serviceUrl),
      addressable: !isUser && !isConvener && Boolean(c.serviceUrl),
      addressed: Boolean(address && address.to === c.speakerUri),
    };
  });
}

// ------------------------------------------------------------------------------------ DOM
function element(doc, tag, className, text) {
  const el = doc.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function option(doc, text, value) {
  const el = element(doc, "option", "", text);
  el.value = value;
  return el;
}

const TESTIDS = { user: "transcript", agent: "agent-utterance" };

function turnElement(doc, turn) {
  if (turn.kind === "notice") return element(doc, "li", "turn notice", turn.text);
  if (turn.kind === "aside") {
    // Speech over an agent that was not a turn (a backchannel, a noise, echo): shown faintly.
    const li = element(doc, "li", "turn aside", turn.text);
    li.dataset.testid = "aside";
    li.dataset.why = turn.why;
    return li;
  }
  if (turn.kind === "timing") {
    // Why the turn ended (which signal decided), folded away: a person cut off can look.
    const li = element(doc, "li", "turn timing");
    li.dataset.testid = "turn-ended";
    li.dataset.reason = turn.reason;
    const details = element(doc, "details");
    details.appendChild(element(doc, "summary", "", `why it ended: ${turn.reason}`));
    details.appendChild(element(doc, "p", "", turn.text));
    li.appendChild(details);
    return li;
  }
  const li = element(doc, "li", `turn ${turn.kind}`);
  li.dataset.testid = TESTIDS[turn.kind];
  const head = element(doc, "div", "who", turn.who);
  for (const badge of turn.badges) head.appendChild(element(doc, "span", "badge", badge));
  li.appendChild(head);
  const body = element(doc, "div", "text");
  if (turn.kind === "agent") {
    li.dataset.speakerUri = turn.speakerUri;
    if (turn.private) li.classList.add("private");
  }
  if (turn.html && turn.html.length) {
    body.classList.add("rich");
    for (const html of turn.html) body.appendChild(sanitizeHtml(html));
  } else {
    body.textContent = turn.text;
  }
  li.appendChild(body);
  if (turn.why) li.appendChild(element(doc, "p", "hint why", turn.why));
  if (turn.playback) {
    // Speech over this reply: paused, resumed or stopped by you, and why (folded away).
    li.dataset.playback = turn.playback.outcome;
    const details = element(doc, "details", "playback");
    details.dataset.testid = "playback";
    details.dataset.why = turn.playback.why || "";
    details.appendChild(element(doc, "summary", "badge", turn.playback.label));
    if (turn.playback.text) details.appendChild(element(doc, "p", "hint", turn.playback.text));
    if (turn.playback.said !== null && turn.playback.said !== undefined) {
      const seconds = ((turn.playback.playedMs || 0) / 1000).toFixed(1);
      const heard = turn.playback.said ? `“${turn.playback.said}…”` : "nothing of it";
      details.appendChild(element(doc, "p", "hint said", `You heard ${seconds} s: ${heard}`));
    }
    li.appendChild(details);
  }
  if (turn.htmlOmitted) {
    // The gateway left the html out (too large or too deep to show safely): say so.
    const note = `Formatting not shown: ${turn.htmlOmitted}.`;
    li.appendChild(element(doc, "p", "hint html-omitted", note));
  }
  return li;
}

/** Append the turns added since `before`; redraw in place a turn that changed and kept its id
 * (a streaming reply, a bubble that was paused or resumed), wherever it is: one message may
 * change a bubble higher up and append an aside below. Redraw all when the list was replaced
 * (a welcome). */
function renderTurns(list, turns, before) {
  const n = before.length;
  const doc = list.ownerDocument;
  const changed = [];
  for (let i = 0; i < Math.min(n, turns.length); i++) if (turns[i] !== before[i]) changed.push(i);
  const inPlace =
    list.children.length === n &&
    n <= turns.length &&
    changed.every((i) => turns[i].id && turns[i].id === before[i].id);
  if (inPlace) for (const i of changed) list.children[i].replaceWith(turnElement(doc, turns[i]));
  else list.replaceChildren();
  let last = null;
  for (const turn of turns.slice(inPlace ? n : 0)) {
    last = turnElement(doc, turn);
    list.appendChild(last);
  }
  if (last) last.scrollIntoView({ block: "end", behavior: "smooth" });
}

function conversantElement(doc, c) {
  const li = element(doc, "li", "conversant");
  li.dataset.speakerUri = c.speakerUri;
  if (c.serviceUrl) li.dataset.serviceUrl = c.serviceUrl;
  li.appendChild(element(doc, "span", "name", c.name));
  for (const text of c.badges) {
    li.appendChild(element(doc, "span", text === HAS_FLOOR ? "badge floor-holder" : "badge", text));
  }
  if (c.serviceUrl) li.appendChild(element(doc, "span", "url", c.serviceUrl));
  if (c.addressable) {
    // app.js listens on the list: clicking addresses the item's conversant (again: stops).
    const talk = element(doc, "button", "link address", c.addressed ? "Talking to" : "Talk to");
    talk.type = "button";
    talk.setAttribute("aria-pressed", String(c.addressed));
    talk.setAttribute("aria-label", `Talk to ${c.name}`);
    li.appendChild(talk);
    if (c.addressed) li.classList.add("addressed");
  }
  if (c.uninvite) {
    // app.js listens on the list: the button's conversant is its item's data-speaker-uri.
    const remove = element(doc, "button", "link uninvite", "Uninvite");
    remove.type = "button";
    remove.setAttribute("aria-label", `Uninvite ${c.name}`);
    li.appendChild(remove);
  }
  return li;
}

/** One published manifest as the invite box shows it: name, what it does, an Invite button. */
export function foundView(m) {
  const about = [m.synopsis, (m.keyphrases || []).join(", ")].filter(Boolean).join(" — ");
  return {
    name: m.name || m.serviceUrl,
    about,
    serviceUrl: m.serviceUrl,
    badge: m.recommended ? (m.score != null ? `recommended ${m.score}` : "recommended") : "",
  };
}

function discoveredElements(doc, found) {
  if (!found) return [];
  const head = element(doc, "p", "hint", found.error ? `${found.url}: ${found.error}` : found.url);
  const items = found.manifests.map((m) => {
    const v = foundView(m);
    const li = element(doc, "li", "found");
    li.dataset.serviceUrl = v.serviceUrl;
    li.appendChild(element(doc, "span", "name", v.name));
    if (v.badge) li.appendChild(element(doc, "span", "badge", v.badge));
    if (v.about) li.appendChild(element(doc, "span", "url", v.about));
    // app.js listens on the box: the button's agent is its item's data-service-url.
    const invite = element(doc, "button", "link invite-found", `Invite ${v.name}`);
    invite.type = "button";
    li.appendChild(invite);
    return li;
  });
  const list = element(doc, "ul", "conversants");
  list.append(...items);
  return [head, list];
}

/** Show `text` in the error box for 8 s, keeping the last three. */
export function showError(box, text) {
  const p = element(box.ownerDocument, "p", "", text);
  box.appendChild(p);
  while (box.childElementCount > 3) box.firstElementChild.remove();
  setTimeout(() => p.remove(), 8000);
}

/** Draw `state` into `els` (from `elements`): everything, or what changed since `prev`. */
export function render(els, state, prev = null) {
  const changed = (...keys) => prev === null || keys.some((k) => state[k] !== prev[k]);
  const doc = els.body.ownerDocument;
  if (changed("connection")) {
    els.connection.dataset.state = state.connection.state;
    els.connection.textContent = connectionText(state.connection);
  }
  if (changed("activity", "wake")) {
    els.state.dataset.state = state.activity;
    els.state.textContent = activityLabel(state.activity, state.wake);
  }
  if (changed("partial")) els.partial.textContent = state.partial;
  if (changed("turns")) renderTurns(els.conversation, state.turns, prev ? prev.turns : []);
  if (changed("floor", "user", "address")) {
    const items = floorView(state.floor, state.user, state.address).map((c) =>
      conversantElement(doc, c),
    );
    els.conversants.replaceChildren(...items);
    const text = addresseeText(state.address, state.floor);
    els.addressee.hidden = text === "";
    els.addresseeName.textContent = text;
    els.addressPrivate.checked = Boolean(state.address && state.address.private);
  }
  // Before the first welcome the selector keeps the page's own "off".
  if (prev !== null && changed("wakeWords")) {
    const options = ["off", ...state.wakeWords];
    els.wake.replaceChildren(
      ...options.map((v) => option(doc, v === "off" ? v : wakeLabel(v), v)),
    );
  }
  if (prev !== null && changed("wakeWords", "wake")) els.wake.value = state.wake;
  if (changed("discovered")) {
    els.discovered.replaceChildren(...discoveredElements(doc, state.discovered));
  }
  if (changed("builtins")) {
    els.builtins.replaceChildren(...state.builtins.map((b) => option(doc, "", `builtin:${b}`)));
  }
  if (changed("session") && state.session) {
    els.body.dataset.conversationId = state.session.conversationId;
    els.download.href = downloadHref(state.session);
    els.download.removeAttribute("aria-disabled");
  }
  if (changed("keepAudio") && state.keepAudio !== null) {
    els.voiceKept.textContent = keepAudioText(state.keepAudio);
  }
  if (changed("mode")) for (const radio of els.modes) radio.checked = radio.value === state.mode;
  if (changed("voice", "mode", "starting", "webrtcFailed")) {
    const on = state.voice !== null;
    els.start.textContent = on ? "Stop voice" : "Start voice";
    els.start.setAttribute("aria-pressed", String(on));
    els.start.disabled = state.starting;
    els.ptt.hidden = !(on && state.mode === "ptt");
    els.transportInfo.textContent = transportText(state.voice, state.webrtcFailed);
  }
  if (changed("micError")) {
    els.micError.hidden = state.micError === null;
    els.micErrorText.textContent = state.micError || "";
  }
}
