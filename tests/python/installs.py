"""What the install tests share (test_wheel.py, test_sdist.py): a fresh virtual environment
made by the system's Python, and the README's Python example run in it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def fresh_venv(folder: Path) -> Path:
    """A new virtual environment in ``folder/venv`` with nothing installed; its python."""
    base = getattr(sys, "_base_executable", sys.executable)  # not the .venv's own python
    env_dir = folder / "venv"
    subprocess.run([base, "-m", "venv", str(env_dir)], check=True, timeout=120)
    return env_dir / "bin" / "python"


def run_readme_example(python: Path, env: dict[str, str], cwd: Path, then: str) -> list[str]:
    """The README's Python example, then the line ``then``, run by ``python`` from ``cwd``
    (where the source tree cannot be imported): the first three lines it printed."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    done = subprocess.run([str(python), "-c", f"{example}\n{then}"], capture_output=True, text=True, env=env, timeout=60, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[:3]
