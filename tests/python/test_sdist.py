"""The sdist ``make dist`` builds installs where no wheel fits, as pip builds it: into a fresh
virtual environment, with Rust on ``PATH`` and maturin fetched by pip's isolated build; then
the README's Python example runs against that install, from a folder where the source tree
cannot be imported.

The sdist is ``RECUO_SDIST``: ``make test-dist-python`` (in ``make test``) builds it and runs
this module; without it the test is skipped, saying so. ``RECUO_SDIST_TARGET`` names a cargo
target folder to build in (the repository's, so that ``make test`` does not compile the crates
a second time from nothing, as a user's first install does)."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from installs import fresh_venv, run_readme_example

SDIST = Path(os.environ["RECUO_SDIST"]) if os.environ.get("RECUO_SDIST") else None


@pytest.mark.skipif(SDIST is None, reason="RECUO_SDIST names no sdist: make test-dist-python builds one and runs this")
@pytest.mark.timeout(900)
def test_the_sdist_builds_with_rust_and_runs_the_readme_example(tmp_path: Path) -> None:
    assert SDIST is not None
    with tarfile.open(SDIST) as sdist:
        names = set(sdist.getnames())
    top = SDIST.name.removesuffix(".tar.gz")
    for member in ("PKG-INFO", "pyproject.toml", "Cargo.lock", "LICENSE-MIT", "LICENSE-APACHE", "python/Cargo.toml", "core/Cargo.toml"):
        assert f"{top}/{member}" in names, member

    python = fresh_venv(tmp_path)
    cargo_bin = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "bin"
    env = {
        "PATH": f"{python.parent}:{cargo_bin}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    if target := os.environ.get("RECUO_SDIST_TARGET"):
        env["CARGO_TARGET_DIR"] = target
    built = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(SDIST)],
        capture_output=True, text=True, env=env, timeout=840, cwd=tmp_path,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]

    where = "import recuo, sys; print(recuo.__file__.startswith(sys.prefix), recuo.__version__)"
    version = top.removeprefix("recuo-")
    assert run_readme_example(python, env, tmp_path, where) == ["12000.0", "ok", f"True {version}"]
