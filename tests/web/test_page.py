"""The page on its own, in real Chromium, served by a plain static server (no gateway).

Covers what does not need a gateway: the DOM and its test hooks, the microphone permission
message, the sanitiser, the PCM worklets (resampling, bounded playback, flush) and backoff.
"""

from __future__ import annotations

import pytest

from tests.support.browser import launch

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
  node.port.onmessage = (e) => (e.data.type === 'flushed' ? flushed : statuses).push(e.data);
  const pcm = new Int16Array(24 * queueMs);
  for (let i = 0; i < pcm.length; i++) pcm[i] = 16000 * Math.sin(2 * Math.PI * 300 * i / 24000);
  node.port.postMessage({type: 'pcm', data: pcm.buffer}, [pcm.buffer]);
  ctx.suspend(flushAt).then(() => {
    node.port.postMessage({type: 'flush'});
    setTimeout(() => ctx.resume(), 100);  // the flush reaches the audio thread first
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
