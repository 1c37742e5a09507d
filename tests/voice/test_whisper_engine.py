"""The window sizes Whisper is fed (no model loaded)."""

from __future__ import annotations

from gateway.voice.whisper_engine import fitted_frames


def test_fitted_windows_come_in_few_lengths_that_cover_clip_and_padding():
    # Every distinct window length costs ~1 MB of compiled kernels kept for good (see
    # WINDOW_STEP_FRAMES); clips to the sample must not mean windows to the frame.
    clips = range(4_800, 160_001, 37)  # 0.3–10 s, 4 200 different lengths
    windows = {n: fitted_frames(n, 4.0) for n in clips}
    assert len(set(windows.values())) <= 21
    for samples, frames in windows.items():
        assert frames % 2 == 0
        assert samples + 4 * 16_000 <= frames * 160 < samples + 4.5 * 16_000 + 160
    assert fitted_frames(29 * 16_000, 4.0) == 3000  # never past Whisper's 30 s
