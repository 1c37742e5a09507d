// What the page says (the pure parts of web/render.js) and the other pure helpers of the page,
// under Node. The DOM half of render.js runs in Chromium (tests/web/test_page.py and others).

import assert from "node:assert/strict";
import { test } from "node:test";

import { backoffDelay } from "../../../web/connection.js";
import {
  activityLabel,
  connectionText,
  downloadHref,
  floorView,
  addresseeText,
  keepAudioText,
  transportText,
  wakeLabel,
} from "../../../web/render.js";
import { htmlTooHostile, MAX_HTML_CHARS, MAX_HTML_DEPTH } from "../../../web/sanitize.js";
import { initialState, reduce } from "../../../web/state.js";

test("the connection line says what happens next", () => {
  assert.equal(connectionText({ state: "connecting" }), "Connecting…");
  assert.equal(connectionText({ state: "open" }), "Connected");
  assert.equal(
    connectionText({ state: "waiting", delayMs: 1200, reason: "going away" }),
    "Connection lost (going away); retrying in 2 s",
  );
  assert.equal(connectionText({ state: "waiting", delayMs: 400 }), "Connection lost; retrying in 1 s");
  assert.equal(
    connectionText({ state: "closed", reason: "opened in another page" }),
    "Disconnected: opened in another page. Reload the page to try again.",
  );
  assert.equal(connectionText({ state: "closed" }), "Disconnected. Reload the page to try again.");
});

test("the voice indicator names the wake word to say", () => {
  assert.equal(activityLabel("off", null), "Off");
  assert.equal(activityLabel("idle", "off"), "Waiting for the wake word");
  assert.equal(activityLabel("idle", "hey_jarvis"), "Say “hey jarvis”");
  assert.equal(activityLabel("idle", "phrase:hey floor"), "Say “hey floor”");
  assert.equal(activityLabel("speaking", "alexa"), "Speaking");
  assert.equal(activityLabel("dreaming", null), "dreaming"); // a newer gateway's state, as sent
  assert.equal(wakeLabel("okay_nabu"), "okay nabu");
});

test("the transport line says why audio is on the WebSocket", () => {
  assert.equal(transportText(null, "WebRTC failed: x"), "");
  assert.equal(transportText({ transport: "webrtc" }, null), "Audio over WebRTC");
  assert.equal(transportText({ transport: "ws" }, null), "Audio over the WebSocket");
  assert.equal(
    transportText({ transport: "ws" }, "WebRTC failed: timeout"),
    "Audio over the WebSocket (WebRTC failed: timeout)",
  );
});

test("the record line and the download link", () => {
  assert.match(keepAudioText(true), /is stored/);
  assert.match(keepAudioText(false), /not stored/);
  assert.equal(
    downloadHref({ conversationId: "conv:a/b", token: "t&x" }),
    "export/conv%3Aa%2Fb?format=mplp-dialog&token=t%26x",
  );
});

test("the floor list: badges, and only agents can be uninvited", () => {
  const user = { speakerUri: "tag:me", name: "You" };
  const state = reduce(initialState(), {
    type: "floor",
    conversants: [
      { speakerUri: "tag:me", name: "You", serviceUrl: "https://gw/self" },
      { speakerUri: "tag:p", serviceUrl: "https://p/ofp", name: "Parrot", role: "agent" },
      { speakerUri: "tag:q" },
    ],
    floorGranted: [{ speakerUri: "tag:p" }],
    convener: "tag:q",
  });
  const view = floorView(state.floor, user);
  assert.deepEqual(
    view.map((c) => [c.name, c.badges, c.uninvite, c.serviceUrl]),
    [
      ["You", [], false, "https://gw/self"],
      ["Parrot", ["agent", "has the floor"], true, "https://p/ofp"],
      ["tag:q", ["convener"], false, null],
    ],
  );
  // Before the welcome names the user, every conversant with a service URL can be uninvited.
  assert.equal(floorView(state.floor, null)[0].uninvite, true);
  // Agents can be addressed; the one addressed is marked, and the composer says so.
  const address = { to: "tag:p", private: false };
  const addressed = floorView(state.floor, user, address);
  assert.deepEqual(
    addressed.map((c) => [c.addressable, c.addressed]),
    [
      [false, false],
      [true, true],
      [false, false],
    ],
  );
  assert.equal(addresseeText(address, state.floor), "to Parrot");
  // The convener, even with a service URL, keeps order and is not addressed.
  const chaired = reduce(state, {
    type: "floor",
    conversants: [
      { speakerUri: "tag:me", name: "You", serviceUrl: "https://gw/self" },
      { speakerUri: "tag:c", serviceUrl: "https://c/ofp", name: "Convener" },
    ],
    floorGranted: [],
    convener: "tag:c",
  });
  assert.deepEqual(
    floorView(chaired.floor, user).map((c) => c.addressable),
    [false, false],
  );
  assert.equal(addresseeText({ to: null, private: false }, state.floor), "");
});

test("reconnect backoff grows, is capped and jittered", () => {
  const at = (r) => [0, 1, 2, 3, 10, 20].map((n) => backoffDelay(n, () => r));
  assert.deepEqual(at(0.5), [500, 1000, 2000, 4000, 30000, 30000]);
  assert.equal(at(0)[0], 250);
  assert.equal(at(0.999)[5], 44970);
});

test("html over the page's bounds is refused in one scan", () => {
  assert.equal(htmlTooHostile("<b>fine</b>"), null);
  assert.equal(htmlTooHostile("x".repeat(MAX_HTML_CHARS + 1)), "too large to show");
  const deep = "<div>".repeat(MAX_HTML_DEPTH + 1);
  assert.equal(htmlTooHostile(deep), "nested too deeply to show");
  // Closed tags, void tags and optional end tags do not add up.
  assert.equal(htmlTooHostile("<div></div>".repeat(MAX_HTML_DEPTH * 2)), null);
  assert.equal(htmlTooHostile("<li>a<br>".repeat(MAX_HTML_DEPTH * 2)), null);
  // Self-closed and attributed tags are told apart from the name (one way to split a tag:
  // "<a" and 60 000 letters with no ">" once took seconds of backtracking).
  assert.equal(htmlTooHostile("<b/>".repeat(MAX_HTML_DEPTH * 2)), null);
  assert.equal(htmlTooHostile('<b class="x">'.repeat(MAX_HTML_DEPTH + 1)), "nested too deeply to show");
  assert.equal(htmlTooHostile("<a" + "b".repeat(60_000)), null);
});
