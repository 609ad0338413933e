"""The wheel ``make wheel`` builds installs and runs with no Rust: it goes into a fresh virtual
environment (no ``cargo`` or ``rustc`` on ``PATH``, nothing else installed) and runs the
README's Python example there, from a folder where the source tree cannot be imported; then
the HTTP clients' scenarios of test_http.py run against that installed wheel (the clients and
pytest come from .venv's site-packages on ``PYTHONPATH``, which holds no ``recuo`` of its
own: .venv's is an editable install, a ``.pth`` file that ``PYTHONPATH`` does not read).

The wheel is ``RECUO_WHEEL``: ``make test-wheel`` (in ``make test``) builds it and runs this
module; without it the test is skipped, saying so (a wheel left in target/wheels/ may be
older than the source)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from installs import fresh_venv, run_readme_example
from serving import RECUO_BIN


def _wheel() -> Path | None:
    given = os.environ.get("RECUO_WHEEL")
    return Path(given) if given else None


WHEEL = _wheel()


@pytest.mark.skipif(WHEEL is None, reason="RECUO_WHEEL names no wheel: make test-wheel builds one and runs this")
@pytest.mark.timeout(420)
def test_the_wheel_installs_without_rust_and_runs_the_readme_example_and_the_http_clients(tmp_path: Path) -> None:
    assert WHEEL is not None
    # One wheel for every CPython from 3.10 (abi3), for glibc 2.17 and newer.
    assert re.fullmatch(r"recuo-[0-9.]+-cp310-abi3-manylinux2014_x86_64\.manylinux_2_17_x86_64\.whl", WHEEL.name), WHEEL.name
    # The license files travel in the wheel's metadata, named by it.
    with zipfile.ZipFile(WHEEL) as wheel:
        names = set(wheel.namelist())
        (metadata,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        fields = wheel.read(metadata).decode()
    info = metadata.removesuffix("METADATA")
    assert {f"{info}licenses/LICENSE-MIT", f"{info}licenses/LICENSE-APACHE"} <= names, sorted(names)
    assert "License-Expression: MIT OR Apache-2.0" in fields and "License-File: LICENSE-MIT" in fields
    python = fresh_venv(tmp_path)
    path = f"{python.parent}:/usr/bin:/bin"
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"}
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(WHEEL)], check=True, env=env, timeout=120, cwd=tmp_path
    )

    where = "import recuo, sys; print(recuo.__file__.startswith(sys.prefix), sorted(sys.modules).count('httpx'))"
    assert run_readme_example(python, env, tmp_path, where) == ["12000.0", "ok", "True 0"]

    if not RECUO_BIN.is_file():
        pytest.skip(f"no recuo command at {RECUO_BIN} (make build-cli): the HTTP scenarios need it")
    clients = {**env, "PYTHONPATH": sysconfig.get_paths()["purelib"], "RECUO_BIN": str(RECUO_BIN)}
    installed = subprocess.run(
        [str(python), "-c", "import recuo, sys; print(recuo.__file__.startswith(sys.prefix))"],
        capture_output=True, text=True, env=clients, timeout=60, cwd=tmp_path,
    )
    assert installed.stdout.strip() == "True", installed.stderr
    scenarios = "(ends_200 and seconds) or spent_quota or generator or old_call_form or requests_404"
    ran = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "python" / "test_http.py"), "-k", scenarios],
        capture_output=True, text=True, env=clients, timeout=300, cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert re.search(r"\b1[0-9] passed\b", ran.stdout), ran.stdout[-500:]
