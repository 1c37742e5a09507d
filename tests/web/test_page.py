"""The page on its own, in real Chromium, served by a plain static server (no gateway).

Covers what does not need a gateway: the DOM and its test hooks, the microphone permission
message, the sanitiser, the PCM worklets (resampling, bounded playback, flush), backoff, the page
drawn (web/render.js) from states web/state.js makes of gateway messages, and the controls that
need no connection. The pure parts of the page run under Node (tests/web/js, test_js_units.py).
"""

from __future__ import annotations

import pytest

from gateway.testing.browser import launch

pytestmark = pytest.mark.slow


@pytest.fixture
def page(context, static_site):
    page = context.new_page()
    page.goto(static_site + "/index.html")
    return page


def test_page_has_the_test_hooks_labels_and_reports_the_lost_connection(page):
    for testid in ("start", "partial", "floor", "download"):
        assert page.get_by_test_id(testid).count() == 1, testid
    # Every form control has an accessible name.
    for control in page.locator("input:not([type=radio]), select").all():
        assert control.evaluate("el => el.labels.length") > 0, control.get_attribute("id")
    assert page.locator("#conversation").get_attribute("aria-live") == "polite"
    # A static server has no /ws: the page says it lost the connection and will retry.
    # Text and state read together: the retry now comes within a second, so a separate read of
    # the state could already see the next "connecting".
    page.wait_for_function(
        """() => { const el = document.querySelector('#connection');
                   return el.dataset.state === 'waiting' && /retrying in \\d+ s/.test(el.textContent); }""",
        timeout=5000,
    )


def test_refused_microphone_shows_what_to_do_and_retry_works(
    playwright_instance, static_site, mic_wav
):
    # No --use-fake-ui-for-media-stream: headless Chromium refuses the permission prompt.
    browser = launch(
        playwright_instance,
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={mic_wav}",
    )
    try:
        context = browser.new_context()
        page = context.new_page()
        page.goto(static_site + "/index.html")
        page.get_by_test_id("start").click()
        error = page.locator("#mic-error")
        error.wait_for(state="visible", timeout=5000)
        assert "refused" in error.inner_text()
        assert "Allow the microphone" in error.inner_text()
        assert page.get_by_test_id("start").inner_text() == "Start voice"
        # The person allows it and presses Retry: the message goes and the microphone is live.
        context.grant_permissions(["microphone"])
        page.get_by_role("button", name="Retry").click()
        error.wait_for(state="hidden", timeout=5000)
        page.wait_for_function("() => ofpDebug.level() > 0.2", timeout=8000)
        assert page.get_by_test_id("start").get_attribute("aria-pressed") == "true"
        page.get_by_test_id("start").click()  # stop: tracks end, meter back to zero
        assert page.evaluate("ofpDebug.level()") == 0
        assert page.locator("#meter-bar").evaluate("el => el.style.transform") == "scaleX(0)"
    finally:
        browser.close()


SANITISE = """async (html) => {
  const { sanitizeHtml } = await import('./sanitize.js');
  const div = document.createElement('div');
  div.appendChild(sanitizeHtml(html));
  return div.innerHTML;
}"""


@pytest.mark.parametrize(
    ("html", "kept", "gone"),
    [
        ("<b>bold</b><script>alert(1)</script>", ["<b>bold</b>"], ["script", "alert"]),
        ('<img src="x" onerror="alert(1)">', [], ["onerror", "alert"]),
        ('<a href="javascript:alert(1)">x</a>', [">x</a>"], ["javascript"]),
        (
            '<a href="https://example.org/a" onclick="steal()">link</a>',
            ['href="https://example.org/a"', 'rel="noopener noreferrer nofollow"'],
            ["onclick"],
        ),
        ('<p style="background:url(https://evil/x)">t</p>', ["<p>t</p>"], ["style", "url("]),
        ('<img src="data:image/svg+xml;base64,PHN2Zz4=">', [], ["svg"]),
        ('<img src="data:image/png;base64,iVBORw0K" alt="dot">', ['alt="dot"'], []),
        ("<svg><script>alert(1)</script></svg><i>ok</i>", ["<i>ok</i>"], ["svg", "alert"]),
        (
            "<iframe src='https://evil'></iframe><custom-el>text</custom-el>",
            ["text"],
            ["iframe", "custom-el"],
        ),
        (
            "<table><tr><td colspan=2 onmouseover=x>c</td></tr></table>",
            ['colspan="2"', ">c</td>"],
            ["onmouseover"],
        ),
        ('<form action="https://evil"><input name=p></form>', [], ["form", "input"]),
        ("<style>body{display:none}</style>visible", ["visible"], ["display"]),
    ],
)
def test_sanitiser_keeps_formatting_and_drops_active_content(page, html, kept, gone):
    out = page.evaluate(SANITISE, html)
    for fragment in kept:
        assert fragment in out, (html, out)
    for fragment in gone:
        assert fragment not in out, (html, out)


CAPTURE = """async (freq) => {
  const ctx = new OfflineAudioContext(1, 48000, 48000);
  await ctx.audioWorklet.addModule('./pcm-worklet.js');
  const node = new AudioWorkletNode(ctx, 'pcm-capture', {numberOfInputs: 1, numberOfOutputs: 0,
    processorOptions: {targetRate: 16000, frameMs: 20}});
  const frames = [];
  node.port.onmessage = (e) => frames.push(new Int16Array(e.data));
  const osc = new OscillatorNode(ctx, {frequency: freq});
  const gain = new GainNode(ctx, {gain: 0.5});
  osc.connect(gain).connect(node);
  osc.start();
  await ctx.startRendering();
  await new Promise((r) => setTimeout(r, 200));  // let the last port messages arrive
  const all = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) { all.set(f, at); at += f.length; }
  const steady = all.subarray(1600);  // skip the filter's start-up
  let sq = 0, crossings = 0;
  for (let i = 0; i < steady.length; i++) {
    sq += (steady[i] / 32768) ** 2;
    if (i && (steady[i - 1] < 0) !== (steady[i] < 0)) crossings++;
  }
  return {sizes: [...new Set(frames.map((f) => f.length))], count: frames.length,
          rms: Math.sqrt(sq / steady.length), hz: crossings / 2 / (steady.length / 16000)};
}"""


def test_capture_worklet_posts_20ms_frames_at_16k_and_filters_aliases(page):
    tone = page.evaluate(CAPTURE, 440)
    assert tone["sizes"] == [320]  # 20 ms at 16 kHz
    assert 48 <= tone["count"] <= 50  # 1 s of input, less the filter delay
    assert tone["hz"] == pytest.approx(440, rel=0.02)
    assert tone["rms"] == pytest.approx(0.5 / 2**0.5, rel=0.05)
    # 12 kHz is above the 8 kHz Nyquist limit of 16 kHz audio: it must not fold down.
    alias = page.evaluate(CAPTURE, 12000)
    assert alias["rms"] < 0.01 * tone["rms"]


PLAYBACK = """async ({queueMs, flushAt}) => {
  const ctx = new OfflineAudioContext(1, 48000, 48000);
  await ctx.audioWorklet.addModule('./pcm-worklet.js');
  const node = new AudioWorkletNode(ctx, 'pcm-playback', {numberOfInputs: 0, numberOfOutputs: 1,
    outputChannelCount: [1], processorOptions: {sourceRate: 24000, capacityMs: 2000, prebufferMs: 60}});
  node.connect(ctx.destination);
  const statuses = [], flushed = [];
  const pcm = new Int16Array(24 * queueMs);
  for (let i = 0; i < pcm.length; i++) pcm[i] = 16000 * Math.sin(2 * Math.PI * 300 * i / 24000);
  // Wait for the worklet to say it holds the audio: messages reach it on its own thread, and
  // an offline context renders as fast as it can, so under load it could otherwise render the
  // first 0.3 s before the audio arrives.
  let onFlushed = () => {};
  const held = new Promise((resolve) => {
    node.port.onmessage = (e) => {
      (e.data.type === 'flushed' ? flushed : statuses).push(e.data);
      if (e.data.type === 'status' && e.data.bufferedMs > 0) resolve();
      if (e.data.type === 'flushed') onFlushed();
    };
  });
  node.port.postMessage({type: 'pcm', data: pcm.buffer}, [pcm.buffer]);
  node.port.postMessage({type: 'report'});
  await held;
  ctx.suspend(flushAt).then(() => {
    onFlushed = () => ctx.resume();  // rendering goes on once the worklet has dropped the rest
    node.port.postMessage({type: 'flush'});
  });
  const out = (await ctx.startRendering()).getChannelData(0);
  await new Promise((r) => setTimeout(r, 200));
  const rms = (a, b) => { let s = 0; for (let i = a; i < b; i++) s += out[i] ** 2; return Math.sqrt(s / (b - a)); };
  return {before: rms(4800, Math.floor(flushAt * 48000)), after: rms(Math.floor(flushAt * 48000) + 4800, 48000),
          flushed, maxBuffered: Math.max(...statuses.map((s) => s.bufferedMs)),
          overflowed: Math.max(0, ...statuses.map((s) => s.overflowed))};
}"""


def test_playback_worklet_plays_queued_audio_and_flush_drops_it_at_once(page):
    r = page.evaluate(PLAYBACK, {"queueMs": 1500, "flushAt": 0.3})
    assert r["before"] > 0.3  # the queued 300 Hz tone plays
    assert r["after"] == 0  # after the flush: silence, though 1.2 s was still queued
    assert r["flushed"][0]["droppedMs"] == pytest.approx(1200, abs=60)


def test_playback_buffer_is_bounded(page):
    # 5 s pushed at once into a 2 s ring: the oldest audio goes, memory does not grow.
    r = page.evaluate(PLAYBACK, {"queueMs": 5000, "flushAt": 0.9})
    assert r["maxBuffered"] <= 2000
    assert r["overflowed"] == 24000 * 3
    assert r["flushed"][0]["droppedMs"] == pytest.approx(2000 - 900, abs=60)


def test_reconnect_backoff_grows_is_capped_and_jittered(page):
    delays = page.evaluate(
        """async () => {
      const { backoffDelay } = await import('./connection.js');
      const at = (r) => [0, 1, 2, 3, 10, 20].map((n) => backoffDelay(n, () => r));
      return {low: at(0), mid: at(0.5), high: at(0.999)};
    }"""
    )
    assert delays["mid"] == [500, 1000, 2000, 4000, 30000, 30000]
    assert delays["low"][0] == 250 and delays["high"][0] == pytest.approx(750, abs=1)
    assert delays["high"][-1] <= 45000


#: Renders a sequence of gateway messages into a copy of the page (a document of its own, so
#: the live page's wiring does not touch it) and reports what a person would see after each.
RENDER = """async (steps) => {
  const { elements, render } = await import('./render.js');
  const { createStore, initialState } = await import('./state.js');
  const doc = document.implementation.createHTMLDocument('copy');
  doc.documentElement.innerHTML = document.documentElement.innerHTML;
  const els = elements(doc);
  const store = createStore(initialState({ session: { conversationId: 'conv:old', token: 'x' } }));
  store.subscribe((state, previous) => render(els, state, previous));
  render(els, store.state);
  const seen = [];
  for (const messages of steps) {
    const first = els.conversation.firstElementChild;
    for (const m of messages) store.dispatch(m);
    seen.push({
      turns: [...els.conversation.children].map((li) => ({
        cls: li.className, testid: li.dataset.testid || null, who: li.querySelector('.who')?.firstChild.textContent,
        badges: [...li.querySelectorAll('.who .badge')].map((b) => b.textContent),
        html: li.querySelector('.text')?.innerHTML ?? li.textContent,
        note: li.querySelector('.html-omitted')?.textContent ?? null,
        playback: li.dataset.playback ?? null,
        why: li.querySelector('[data-testid=playback]')?.dataset.why ?? null })),
      firstKept: first !== null && els.conversation.firstElementChild === first,
      partial: els.partial.textContent,
      floor: [...els.conversants.children].map((li) => ({
        uri: li.dataset.speakerUri, text: li.textContent,
        holder: li.querySelector('.floor-holder') !== null,
        uninvite: li.querySelector('button.uninvite')?.getAttribute('aria-label') ?? null })),
      wake: [...els.wake.options].map((o) => [o.value, o.textContent]),
      wakeValue: els.wake.value,
      builtins: [...els.builtins.options].map((o) => o.value),
      download: els.download.getAttribute('href'),
      downloadDisabled: els.download.getAttribute('aria-disabled'),
      kept: els.voiceKept.textContent,
      state: [els.state.dataset.state, els.state.textContent],
      conversationId: els.body.dataset.conversationId,
    });
  }
  return seen;
}"""

WELCOME = {
    "type": "welcome",
    "conversationId": "conv:new",
    "token": "t&k",
    "user": {"speakerUri": "tag:me", "name": "Ada"},
    "wakeWords": ["hey_jarvis", "phrase:hey floor"],
    "wake": "hey_jarvis",
    "builtins": ["parrot", "clock"],
    "keepAudio": False,
    "history": [
        {"type": "transcript", "id": "e1", "text": "Hello <b>there</b>", "typed": True},
        {
            "type": "utterance",
            "id": "e2",
            "speaker": "Parrot",
            "speakerUri": "tag:parrot",
            "text": "plain",
            "html": ["<b>bold</b><script>alert(1)</script>"],
        },
    ],
}
FLOOR = {
    "type": "floor",
    "conversants": [
        {"speakerUri": "tag:me", "name": "Ada", "serviceUrl": "https://gw/me"},
        {
            "speakerUri": "tag:parrot",
            "name": "Parrot",
            "serviceUrl": "https://p/ofp",
            "role": "agent",
        },
    ],
    "floorGranted": [{"speakerUri": "tag:parrot"}],
}


def test_render_draws_the_welcome_history_floor_and_record(page):
    later = [
        {"type": "partial", "text": "turn off"},
        {"type": "transcript", "id": "e3", "text": "Turn off the lights."},
        {
            "type": "utterance",
            "id": "e4",
            "speakerUri": "tag:big",
            "text": "big",
            "html": [],
            "htmlOmitted": "too large to show",
            "private": True,
        },
        {"type": "transcript", "id": "e3", "text": "Turn off the lights."},
        {"type": "state", "state": "idle"},
    ]
    welcome, floor, more, rejoin = page.evaluate(
        RENDER, [[WELCOME], [FLOOR], later, [{**WELCOME, "history": WELCOME["history"][:1]}]]
    )
    assert [(t["cls"], t["testid"], t["who"], t["badges"]) for t in welcome["turns"]] == [
        ("turn user", "transcript", "Ada", ["typed"]),
        ("turn agent", "agent-utterance", "Parrot", []),
        ("turn notice", None, None, []),  # the stored conversation had ended
    ]
    assert welcome["turns"][0]["html"] == "Hello &lt;b&gt;there&lt;/b&gt;"  # text, not markup
    assert welcome["turns"][1]["html"] == "<b>bold</b>"  # sanitised
    assert "has ended" in welcome["turns"][2]["html"]
    assert welcome["wake"] == [
        ["off", "off"],
        ["hey_jarvis", "hey jarvis"],
        ["phrase:hey floor", "hey floor"],
    ]
    assert welcome["wakeValue"] == "hey_jarvis"
    assert welcome["builtins"] == ["builtin:parrot", "builtin:clock"]
    assert welcome["download"] == "export/conv%3Anew?format=mplp-dialog&token=t%26k"
    assert welcome["downloadDisabled"] is None
    assert "not stored" in welcome["kept"]
    assert welcome["state"] == ["off", "Off"] and welcome["conversationId"] == "conv:new"

    # The floor: the agent holds it and can be uninvited; the person cannot.
    assert [(c["uri"], c["holder"], c["uninvite"]) for c in floor["floor"]] == [
        ("tag:me", False, None),
        ("tag:parrot", True, "Uninvite Parrot"),
    ]
    assert floor["firstKept"]  # a floor change leaves the conversation alone

    # New turns are appended to what is drawn; a repeated id and the partial leave no trace.
    assert more["firstKept"] and len(more["turns"]) == 5 and more["partial"] == ""
    big = more["turns"][4]
    assert (
        big["cls"] == "turn agent private"
        and big["note"] == "Formatting not shown: too large to show."
    )
    assert big["html"] == "big" and big["badges"] == ["private"]
    assert more["state"] == ["idle", "Say “hey jarvis”"]
    # A rejoin's welcome redraws the conversation from its history.
    assert not rejoin["firstKept"] and [t["testid"] for t in rejoin["turns"]] == ["transcript"]


def test_speech_over_a_reply_redraws_its_bubble_when_an_aside_came_before(page):
    """A decision changes the reply's bubble and adds an aside: the bubble is redrawn even
    when it is no longer the last line (an earlier decision's aside came after it) — in CI a
    first "echo" aside left the bubble saying "paused" after "Yeah." was decided a backchannel."""
    reply = {"type": "utterance", "id": "de:9", "speakerUri": "tag:parrot", "text": "Once upon"}
    paused = {"type": "playback", "outcome": "paused", "reply": "de:9"}
    decided = {**paused, "outcome": "resumed", "why": "backchannel", "heard": "yeah"}
    steps = [[WELCOME, reply, paused], [{**paused, "outcome": "ignored", "why": "echo"}]]
    _, echo, _, resumed = page.evaluate(RENDER, [*steps, [paused], [decided]])
    assert [t["testid"] for t in echo["turns"]][-2:] == ["agent-utterance", "aside"]
    bubble = next(t for t in resumed["turns"] if t["testid"] == "agent-utterance" and t["playback"])
    assert (bubble["playback"], bubble["why"]) == ("resumed", "backchannel")
    assert [t["testid"] for t in resumed["turns"]][-3:] == ["agent-utterance", "aside", "aside"]
    assert "yeah" in resumed["turns"][-1]["html"]


def test_controls_keep_the_persons_choices_without_a_gateway(page):
    ptt = page.locator("input[name=mode][value=ptt]")
    ptt.check()
    # No gateway to tell: the page says so, and keeps the choice for the next visit.
    page.locator("#errors").filter(has_text="Not connected to the gateway yet").wait_for(
        timeout=5000
    )
    assert page.evaluate("localStorage.getItem('ofp.mode')") == "ptt"
    assert page.locator("#ptt").is_hidden()  # hold-to-talk only while voice is on
    page.select_option("#wake", "off")
    assert page.evaluate("sessionStorage.getItem('ofp.wake')") == "off"
    page.reload()
    assert page.locator("input[name=mode][value=ptt]").is_checked()
    assert not page.locator("input[name=mode][value=handsfree]").is_checked()
    # Text typed while disconnected stays in the box to send again.
    page.fill("#text-input", "hello")
    page.press("#text-input", "Enter")
    page.locator("#errors").filter(has_text="your text is kept").wait_for(timeout=5000)
    assert page.input_value("#text-input") == "hello"
