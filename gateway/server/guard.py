"""Bounds on what agents and clients send, applied before anything reaches the page.

* :func:`bound_html` — an agent's ``html`` feature is shown only when it is small and shallow:
  the browser's HTML parser is superlinear on deep nesting (50 000 nested ``<b>``, 350 KB,
  froze the page 6 s and again on every reload), and no useful reply needs either.
* :func:`clip_text` — text echoed back in an error message is cut, so a 200 KB URL is not
  sent back whole.
"""

from __future__ import annotations

from html.parser import HTMLParser

#: Largest html shown, all of one reply's html tokens together (characters).
MAX_HTML_CHARS = 64 * 1024
#: Deepest element nesting shown (web/sanitize.js cuts at the same depth).
MAX_HTML_DEPTH = 32
#: How much of a client's input an error message quotes.
ECHO_CHARS = 200

_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
#: Elements whose end tag may be left out: a second one closes the first (``<li>a<li>b``).
_SELF_CLOSING_SIBLINGS = frozenset(
    ["p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "rb", "rt", "rp"]
)


class _TooDeep(Exception):
    pass


class _DepthMeter(HTMLParser):
    """Tracks element nesting the way a browser would, roughly, and stops past ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=False)
        self.limit = limit
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        if tag in _SELF_CLOSING_SIBLINGS and self.stack and self.stack[-1] == tag:
            self.stack.pop()
        self.stack.append(tag)
        if len(self.stack) > self.limit:
            raise _TooDeep

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching open element; a stray end tag closes nothing. The search
        # is bounded by the limit, so the whole scan stays linear in the input.
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] == tag:
                del self.stack[i:]
                return


def html_depth_ok(html: str, limit: int = MAX_HTML_DEPTH) -> bool:
    """Whether ``html`` nests no deeper than ``limit`` elements."""
    meter = _DepthMeter(limit)
    try:
        meter.feed(html)
        meter.close()
    except _TooDeep:
        return False
    return True


def bound_html(
    html: list[str], *, max_chars: int = MAX_HTML_CHARS, max_depth: int = MAX_HTML_DEPTH
) -> tuple[list[str], str | None]:
    """``html`` as it may be shown, and why it was left out (None if it was not).

    Over either bound the whole reply's html is dropped (the page then shows the text
    feature), rather than cut: cut markup could mean something else than what was sent.
    """
    size = sum(len(h) for h in html)
    if size > max_chars:
        return [], f"its formatted part is too large to show ({size // 1024} KB)"
    if not all(html_depth_ok(h, max_depth) for h in html):
        return [], f"its formatted part is nested too deeply to show (over {max_depth} levels)"
    return html, None


def clip_text(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters for quoting in a message, with the length kept."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"
