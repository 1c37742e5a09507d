"""Debian's Chromium, headless, for the page's tests and the cluster's failover test."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM = os.environ.get("OFP_CHROMIUM", "/usr/bin/chromium")
BASE_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
]


def launch(playwright: Playwright, *extra: str) -> Browser:
    """Debian's Chromium, headless, with ``extra`` flags."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=[*BASE_ARGS, *extra]
    )
