"""The conversation so far for newcomers (gateway/floor/history.py, §1.12, sans I/O);
tests/floor/test_voice_where_wanted.py checks the same through the host."""

from __future__ import annotations

from gateway.floor.history import DialogHistory
from gateway.ofp import Event

from .helpers import ev

ME = "tag:me"


def _said(speaker: str, text: str, *, audio: bool = False, private: bool = False) -> Event:
    e = ev(
        "utterance", speaker=speaker, text=text, to="tag:x" if private else None, private=private
    )
    if audio:
        de = e.dialog_event
        assert de is not None
        de = de.model_copy(update={"features": {**de.features, "audio": de.features["text"]}})
        e = e.model_copy(
            update={"parameters": e.parameters.model_copy(update={"dialog_event": de})}
        )
    return e


def _texts(h: DialogHistory) -> list[str]:
    return [d.features["text"].tokens[0].value for d in h.recent(ME)]


def test_public_utterances_are_kept_newest_last_and_bounded() -> None:
    h = DialogHistory(max_events=3)
    h.remember([_said("tag:a", f"u{i}") for i in range(5)])
    h.remember([_said("tag:a", "secret", private=True), ev("bye")])
    assert _texts(h) == ["u2", "u3", "u4"]


def test_the_bytes_bound_keeps_the_newest() -> None:
    h = DialogHistory(max_events=10, max_bytes=10_000)
    h.remember([_said("tag:a", c * 3000) for c in "abcde"])
    kept = _texts(h)
    assert 0 < len(kept) < 5 and kept[-1] == "e" * 3000


def test_the_persons_voice_goes_only_when_kept() -> None:
    h = DialogHistory()
    h.remember([_said(ME, "hello", audio=True), _said("tag:a", "hi", audio=True)])
    assert ["audio" in d.features for d in h.recent(ME)] == [False, True]
    assert ["audio" in d.features for d in h.recent(ME, keep_audio=True)] == [True, True]


def test_an_invite_is_given_the_history_unless_it_has_its_own() -> None:
    h = DialogHistory()
    invite = ev("invite", to="tag:new")
    assert h.given(invite, ME) is invite  # nothing said yet
    h.remember([_said(ME, "hello")])
    given = h.given(invite, ME)
    assert [d.speaker_uri for d in given.parameters.dialog_history or []] == [ME]
    assert h.given(given, ME) is given
    other = ev("utterance", speaker=ME)
    assert h.given(other, ME) is other
