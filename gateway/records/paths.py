"""Where records live on disk: the data folder, and file names safe for ids from the network."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from gateway.records.errors import RecordsError

#: Environment variable naming the data folder when ``--data`` is not given.
DATA_ENV = "OFP_GATEWAY_DATA"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_data_dir() -> Path:
    """The per-user default: ``$XDG_DATA_HOME/ofp-gateway``, else ``~/.local/share/ofp-gateway``."""
    xdg = os.environ.get("XDG_DATA_HOME")
    # The XDG spec says a relative value is invalid and must be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "ofp-gateway"


def resolve_data_dir(cli_value: str | None) -> Path:
    """The data folder: the ``--data`` value, else ``$OFP_GATEWAY_DATA``, else the per-user default.

    The folder is created if missing. Raises :class:`RecordsError` saying what to do when it cannot
    be created or written to.
    """
    chosen = cli_value or os.environ.get(DATA_ENV) or None
    path = Path(chosen).expanduser() if chosen else default_data_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
        # os.access is unreliable (root, ACLs, read-only mounts); writing a file is the real test.
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise RecordsError(
            f"cannot use {path} as the data folder ({exc.strerror or exc}); pass --data DIR or set "
            f"{DATA_ENV} to a folder you can write to"
        ) from None
    return path.resolve()


def safe_name(identifier: str) -> str:
    """A file or folder name for an id that came from the network.

    The readable part keeps only ``[A-Za-z0-9_-]`` (so never ``..``, ``/`` or a drive letter) and
    is cut short; a hash of the whole id keeps two ids that sanitise alike apart.
    """
    digest = hashlib.sha256(identifier.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = _UNSAFE.sub("_", identifier).strip("_")[:40]
    return f"{readable}-{digest}" if readable else digest
