"""Debian's Chromium, headless, for the page's tests and the cluster's failover test."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("OFP_CHROMIUM", "/usr/bin/chromium")
BASE_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
]


def launch(playwright: object, *extra: str) -> object:
    """Debian's Chromium, headless, with ``extra`` flags."""
    return playwright.chromium.launch(  # type: ignore[attr-defined]
        executable_path=CHROMIUM, headless=True, args=[*BASE_ARGS, *extra]
    )
