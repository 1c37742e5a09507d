// web/connection.js against a stand-in WebSocket (Node has no gateway to talk to): what is
// sent, kept and given back around a (re)connect. The page's real socket is covered in Chromium.

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import { Connection } from "../../../web/connection.js";

class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static made = [];
  constructor(url) {
    this.url = url;
    this.readyState = FakeSocket.CONNECTING;
    this.sent = [];
    FakeSocket.made.push(this);
  }
  send(data) {
    assert.equal(this.readyState, FakeSocket.OPEN, "sent on a socket that is not open");
    this.sent.push(JSON.parse(data));
  }
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = FakeSocket.OPEN;
    this.onopen();
  }
  receive(message) {
    this.onmessage({ data: JSON.stringify(message) });
  }
}

let saved;
beforeEach(() => {
  saved = globalThis.WebSocket;
  globalThis.WebSocket = FakeSocket;
  FakeSocket.made = [];
});
afterEach(() => {
  globalThis.WebSocket = saved;
});

const connection = () => {
  const conn = new Connection("ws://gw/ws", () => ({ type: "hello" }));
  const unsent = [];
  conn.addEventListener("unsent", (e) => unsent.push(...e.detail));
  return { conn, unsent };
};

test("text typed while the page reconnects goes out after the welcome, in order", () => {
  const { conn, unsent } = connection();
  conn.start();
  FakeSocket.made[0].open();
  FakeSocket.made[0].receive({ type: "welcome" });
  conn.start(); // Start: the page reconnects with an audio transport
  const ws = FakeSocket.made[1];
  assert.equal(conn.send({ type: "text", text: "lost" }), false, "a plain send is not kept");
  assert.equal(conn.sendSoon({ type: "text", text: "one" }), true);
  assert.equal(conn.sendSoon({ type: "text", text: "two" }), true);
  ws.open();
  assert.deepEqual(ws.sent, [{ type: "hello" }], "nothing before the gateway's welcome");
  ws.receive({ type: "welcome" });
  assert.deepEqual(ws.sent.map((m) => m.text ?? m.type), ["hello", "one", "two"]);
  assert.deepEqual(unsent, []);
  ws.receive({ type: "welcome" }); // a later welcome sends nothing again
  assert.equal(ws.sent.length, 3);
  conn.stop();
});

test("what is kept is bounded, carried over a restart and given back if the socket closes", () => {
  const { conn, unsent } = connection();
  conn.start();
  for (let i = 0; i < 8; i++) assert.equal(conn.sendSoon({ type: "text", text: `${i}` }), true);
  assert.equal(conn.sendSoon({ type: "text", text: "ninth" }), false, "at most eight are kept");
  conn.start(); // a restart while opening keeps them for the fresh socket
  assert.deepEqual(unsent, []);
  FakeSocket.made[1].onclose({ code: 1006, reason: "" });
  assert.deepEqual(unsent.map((m) => m.text), ["0", "1", "2", "3", "4", "5", "6", "7"]);
  conn.stop();
});

test("nothing is kept while waiting to reconnect: the person is told instead", () => {
  const { conn } = connection();
  conn.start();
  FakeSocket.made[0].open();
  FakeSocket.made[0].onclose({ code: 1006, reason: "" }); // dropped: a backoff timer runs
  assert.equal(conn.sendSoon({ type: "text", text: "now?" }), false);
  conn.stop();
});
