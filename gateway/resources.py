"""The folders the gateway ships besides its code: the page (``web/``) and the model catalogue
(``models/``).

They are top-level folders of the source tree (where people look for them), and the wheel carries
them inside the package as ``gateway/web`` and ``gateway/models`` (pyproject.toml maps them). So
they are found through :mod:`importlib.resources` in an installed gateway, and beside the package
in a checkout (run with ``PYTHONPATH`` or an editable install), never relative to the working
directory.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path

from gateway.errors import ConfigError

#: The folders shipped as package data, each with a file that must be there.
SHIPPED = {"web": "index.html", "models": "README.md"}


class ResourceMissing(ConfigError):
    """A shipped folder is in neither place; the installation is broken."""


@cache
def shipped_folder(name: str) -> Path:
    """The real folder of the shipped ``name`` (``web`` or ``models``)."""
    marker = SHIPPED[name]
    packaged = importlib.resources.files("gateway") / name
    # A wheel installs plain files, so the resource is a real folder with a real path.
    candidates = [Path(str(packaged)), Path(__file__).resolve().parent.parent / name]
    for folder in candidates:
        if (folder / marker).is_file():
            return folder.resolve()
    raise ResourceMissing(
        f"the gateway's {name}/ folder is missing (looked in {', '.join(map(str, candidates))}): "
        "reinstall ofp-gateway, or run from a complete checkout"
    )


def web_root() -> Path:
    """The folder the page is served from."""
    return shipped_folder("web")
