"""Runs the README's Python, PHP and C examples against the built artifacts.

The README promises what each example prints; this check holds it to that, so the examples
cannot rot. Usage: check_examples.py ROOT (after build-c, build-python and build-php).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def blocks(readme: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", readme, flags=re.S)


def run(cmd: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    readme = (root / "README.md").read_text()
    out = root / "target" / "readme"
    out.mkdir(parents=True, exist_ok=True)
    lib = root / "target" / "debug"
    expected = {"python": ["12000.0", "ok"], "php": ["12000", "ok"], "c": ["12000", "ok after 3 attempts"]}
    checked = 0
    for lang, wanted in expected.items():
        found = blocks(readme, lang)
        if len(found) != 1:
            raise SystemExit(f"README: expected one {lang} example, found {len(found)}")
        src = found[0]
        if lang == "python":
            printed = run([str(root / ".venv" / "bin" / "python"), "-c", src])
        elif lang == "php":
            path = out / "example.php"
            path.write_text(src)
            printed = run(["php", "-n", "-d", f"extension={lib / 'librecuo_php.so'}", str(path)])
        else:
            path = out / "example.c"
            path.write_text(src)
            exe = out / "example-c"
            run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{root / 'include'}", str(path),
                 f"-L{lib}", "-lrecuo", f"-Wl,-rpath,{lib}", "-o", str(exe)])
            printed = run([str(exe)])
        lines = [line.strip() for line in printed.strip().splitlines()]
        if lines != wanted:
            raise SystemExit(f"README {lang} example printed {lines}, the README promises {wanted}")
        checked += 1
    print(f"readme examples: {checked} passed, 0 failed")


if __name__ == "__main__":
    main()
