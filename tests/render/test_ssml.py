"""SSML parsing into segments, on strings alone."""

from __future__ import annotations

import math

import pytest

from gateway.render.ssml import (
    MAX_BREAK_MS,
    PARAGRAPH_MS,
    SENTENCE_MS,
    Audio,
    Prosody,
    Silence,
    Speech,
    SSMLError,
    parse_ssml,
)


def test_plain_fragment_without_speak_is_accepted():
    assert parse_ssml("Hello   there,\n  friend.") == [Speech("Hello there, friend.")]


def test_namespaced_document_with_xml_declaration():
    doc = (
        '<?xml version="1.0"?><speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis">'
        'Hi <break time="2s"/> you</speak>'
    )
    assert parse_ssml(doc) == [Speech("Hi"), Silence(2000), Speech("you")]


@pytest.mark.parametrize(
    "bad",
    ["<speak>unclosed", "<speak><b>x</c></speak>", "<speak>a & b</speak>", "<speak></speak>x<"],
)
def test_malformed_ssml_raises(bad):
    with pytest.raises(SSMLError, match="not well-formed"):
        parse_ssml(bad)


def test_dtd_and_entities_are_refused():
    bomb = '<!DOCTYPE speak [<!ENTITY a "aaaaaaaaaa">]><speak>&a;&a;</speak>'
    with pytest.raises(SSMLError, match="DTD"):
        parse_ssml(bomb)


def test_size_and_depth_are_capped():
    with pytest.raises(SSMLError, match="limit"):
        parse_ssml("<speak>" + "a" * 100 + "</speak>", max_chars=50)
    with pytest.raises(SSMLError, match="deeper"):
        parse_ssml("<speak>" + "<p>" * 40 + "x" + "</p>" * 40 + "</speak>")


def test_break_strengths_time_and_cap():
    segs = parse_ssml(
        '<speak>a<break/>b<break strength="x-strong"/>c<break time="90s"/>d'
        '<break time="soon"/>e</speak>'
    )
    pauses = [s.ms for s in segs if isinstance(s, Silence)]
    assert pauses == [400, 1200, MAX_BREAK_MS, 400]  # an unreadable time falls back to medium


def test_adjacent_breaks_add_up():
    assert parse_ssml('<speak>a<break time="300ms"/><break time="200ms"/>b</speak>')[1] == (
        Silence(500)
    )


def test_paragraph_and_sentence_pauses_merge_and_do_not_trail():
    segs = parse_ssml("<speak><p><s>One.</s><s>Two.</s></p><p>Three.</p></speak>")
    assert segs == [
        Speech("One."),
        Silence(SENTENCE_MS),
        Speech("Two."),
        Silence(PARAGRAPH_MS),
        Speech("Three."),
    ]


def test_prosody_nests_relative_and_absolute():
    segs = parse_ssml(
        '<speak><prosody rate="slow" pitch="+2st" volume="-6dB">a'
        '<prosody rate="50%" pitch="low" volume="+3dB">b</prosody></prosody></speak>'
    )
    assert segs[0].prosody == Prosody(rate=0.75, pitch_semitones=2.0, volume_db=-6.0)
    assert segs[1].prosody == Prosody(rate=0.375, pitch_semitones=-3.0, volume_db=-3.0)


@pytest.mark.parametrize(
    ("attr", "expected"),
    [
        ('rate="+25%"', Prosody(rate=1.25)),
        ('rate="1.5"', Prosody(rate=1.5)),
        ('rate="10"', Prosody(rate=2.5)),  # clamped
        ('pitch="x-high"', Prosody(pitch_semitones=6.0)),
        ('pitch="+12%"', Prosody(pitch_semitones=12 * math.log2(1.12))),
        ('pitch="220Hz"', Prosody(pitch_semitones=12.0)),
        ('pitch="+110Hz"', Prosody(pitch_semitones=12.0)),
        ('volume="x-loud"', Prosody(volume_db=6.0)),
        ('volume="+20dB"', Prosody(volume_db=6.0)),  # capped at the headroom
        ('volume="50"', Prosody(volume_db=20 * math.log10(0.5))),
        ('volume="silent"', Prosody(volume_db=-math.inf)),
        ('rate="quick" pitch="up" volume="lots"', Prosody()),  # not understood: ignored
    ],
)
def test_prosody_values(attr, expected):
    (seg,) = parse_ssml(f"<speak><prosody {attr}>word</prosody></speak>")
    assert seg.prosody.rate == pytest.approx(expected.rate)
    assert seg.prosody.pitch_semitones == pytest.approx(expected.pitch_semitones)
    assert seg.prosody.volume_db == pytest.approx(expected.volume_db)


def test_text_around_inline_elements_stays_one_sentence():
    segs = parse_ssml(
        '<speak>I have <say-as interpret-as="cardinal">3</say-as> <sub alias="kilograms">kg'
        "</sub> of <mark name='m'/>apples.</speak>"
    )
    assert segs == [Speech("I have three kilograms of apples.")]


def test_unknown_and_silent_elements():
    segs = parse_ssml(
        "<speak><voice name='x'><lang xml:lang='fr'>bonjour</lang></voice>"
        " <metadata>secret</metadata><phoneme ph='x'>tomato</phoneme></speak>"
    )
    assert segs == [Speech("bonjour tomato")]


def test_audio_keeps_its_fallback_without_desc():
    segs = parse_ssml(
        '<speak>Listen: <audio src="https://a.example/x.ogg"><desc>a bell</desc>'
        "<emphasis>ding</emphasis></audio> done</speak>"
    )
    assert segs[0] == Speech("Listen:")
    assert isinstance(segs[1], Audio) and segs[1].src == "https://a.example/x.ogg"
    assert [s.text for s in segs[1].fallback] == ["ding"]
    assert segs[2] == Speech("done")


def test_audio_without_src_speaks_its_content():
    assert parse_ssml("<speak><audio>ding</audio></speak>") == [Speech("ding")]


def test_emphasis_levels():
    strong, none = parse_ssml(
        '<speak><emphasis level="strong">a</emphasis><emphasis level="none">b</emphasis></speak>'
    )
    assert strong.prosody.rate < 1 and strong.prosody.volume_db > 0
    assert none.prosody == Prosody()


def test_say_as_unreadable_or_unknown_keeps_the_text():
    segs = parse_ssml(
        '<speak><say-as interpret-as="date">someday</say-as> '
        '<say-as interpret-as="expletive">darn</say-as> '
        '<say-as interpret-as="number" format="ordinal">3</say-as></speak>'
    )
    assert segs == [Speech("someday darn third")]


def test_ssml_tokens_that_are_whole_documents_are_parsed_one_by_one() -> None:
    from gateway.render.ssml import parse_ssml_tokens

    values = [
        "<speak>One.</speak>",
        "<?xml version='1.0'?><speak>Two.</speak>",
        "Three, ",
        "<emphasis>four</emphasis>",
        "<speak>Five.</speak>",
    ]
    said = " ".join(s.text.strip() for s in parse_ssml_tokens(values) if isinstance(s, Speech))
    assert said.split() == ["One.", "Two.", "Three,", "four", "Five."]
    with pytest.raises(SSMLError):
        parse_ssml_tokens(["<speak>x</speak>"] * 3, max_chars=20)
