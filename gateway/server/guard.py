"""Bounds on what agents and clients send, applied before anything reaches the page.

* :func:`bound_html` — an agent's ``html`` feature is shown only when it is small and shallow:
  the browser's HTML parser is superlinear on deep nesting (50 000 nested ``<b>``, 350 KB,
  froze the page 6 s and again on every reload), and no useful reply needs either.
* :func:`clip_text` — text echoed back in an error message is cut, so a 200 KB URL is not
  sent back whole.
"""

from __future__ import annotations

import re

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


#: A start or end tag: ``</``, the name, then everything up to ``>``. ``[^<>]`` (not ``[^>]``)
#: keeps the scan linear: a ``<`` that never closes is passed over at the next ``<`` instead of
#: being re-read from every ``<`` before it (the standard library's HTMLParser takes 5 s over
#: 60 KB of ``<a<a<a…``). The quantifiers are possessive (``*+``: never given back) and the
#: rest starts with a space or ``/``: with ``[^\s/<>]*[^<>]*?`` the name and the rest could
#: split a run of letters in every way before failing on a missing ``>``, which is quadratic
#: (``<a`` and 60 000 ``b``, within the size bound, took 38 s; web/sanitize.js does the same).
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/<>]*+)([\s/][^<>]*+)?>")


def html_depth_ok(html: str, limit: int = MAX_HTML_DEPTH) -> bool:
    """Whether ``html`` nests no deeper than ``limit`` elements, estimated the way a browser
    nests them (void elements and self-closing siblings do not nest) in one linear pass.
    Tags inside comments or scripts count too: the estimate errs towards refusing."""
    stack: list[str] = []
    for m in _TAG.finditer(html):
        closing, tag, self_closed = m.group(1), m.group(2).lower(), (m.group(3) or "").endswith("/")
        if tag in _VOID or self_closed:
            continue
        if closing:
            # Close up to the matching open element; a stray end tag closes nothing. The
            # search is bounded by the limit, so the scan stays linear.
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] == tag:
                    del stack[i:]
                    break
            continue
        if tag in _SELF_CLOSING_SIBLINGS and stack and stack[-1] == tag:
            stack.pop()
        stack.append(tag)
        if len(stack) > limit:
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
