"""Runs the README's examples against the built artifacts.

The README promises what each example prints; this check holds it to that, so the examples
cannot rot:

- the examples that check an install (one ```python, ```php and ```c block, which the release's
  tests also run against each installed artifact);
- the requests retried (```python request, ```js request, ```php request, ```c request): each
  runs as written, its address `https://api.example.com` replaced by a `recuo serve --script`
  on 127.0.0.1 that answers 429 with `Retry-After: 1`, then 200; the server's log must show
  the two requests, and the example must print what its comment says.

Usage: check_examples.py ROOT RECUO_BIN (after build-c, build-python, build-php, build-cli and
wasm).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path


def blocks(readme: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", readme, flags=re.S)


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, cwd=cwd)
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
    checked += check_requests(root, Path(sys.argv[2]).resolve(), out)
    print(f"readme examples: {checked} passed, 0 failed")


API = "https://api.example.com"
# What each request example prints last: the response's status (C: and the attempts).
PRINTS = {"python": "200", "js": "200", "php": "200", "c": "HTTP 200 after 2 attempts"}


def check_requests(root: Path, recuo: Path, out: Path) -> int:
    """The `request` examples, each against its own path of one scripted server."""
    script = out / "script.json"
    first = {"status": 429, "headers": {"Retry-After": "1"}}
    script.write_text(json.dumps({"requests": [{"id": "42", "script": [first, {"status": 200}]}]}))
    server = subprocess.Popen(
        [str(recuo), "serve", "--script", str(script), "--stop-after", "120s"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        base = server.stdout.readline().split()[-1]
        for lang, wanted in PRINTS.items():
            found = re.findall(rf"```{lang} request\n(.*?)```", (root / "README.md").read_text(), flags=re.S)
            if len(found) != 1:
                raise SystemExit(f"README: expected one {lang} request example, found {len(found)}")
            if API not in found[0]:
                raise SystemExit(f"README: the {lang} request example does not call {API}")
            src = found[0].replace(API, f"{base}/{lang}")
            printed = run_request_example(root, out, lang, src)
            last = printed.strip().splitlines()[-1].strip() if printed.strip() else ""
            if last != wanted:
                raise SystemExit(f"README {lang} request example printed {printed!r}, the README promises {wanted!r}")
            with urllib.request.urlopen(f"{base}/__script/log/{lang}/orders/42", timeout=10) as answer:
                log = json.load(answer)
            if [entry["method"] for entry in log] != ["GET", "GET"]:
                raise SystemExit(f"README {lang} request example: the server saw {log}, not two GETs")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return len(PRINTS)


def run_request_example(root: Path, out: Path, lang: str, src: str) -> str:
    lib = root / "target" / "debug"
    if lang == "python":
        return run([str(root / ".venv" / "bin" / "python"), "-c", src])
    if lang == "js":
        # The package as an app would import it: node_modules/recuo beside the example.
        app = out / "js-app"
        (app / "node_modules").mkdir(parents=True, exist_ok=True)
        link = app / "node_modules" / "recuo"
        if not link.exists():
            link.symlink_to(root / "js")
        (app / "example.mjs").write_text(src)
        return run(["node", "example.mjs"], cwd=app)
    if lang == "php":
        # The PHP library on the include path as `Recuo/` (where the packages put it), Debian's
        # Guzzle and its error_reporting (Guzzle 7.4's deprecations on PHP 8.2 are not shown).
        includes = out / "php-include"
        includes.mkdir(exist_ok=True)
        if not (includes / "Recuo").exists():
            (includes / "Recuo").symlink_to(root / "php" / "lib")
        path = out / "request.php"
        path.write_text(src)
        return run(["php", "-n", "-d", f"extension={lib / 'librecuo_php.so'}", "-d", "extension=curl",
                    "-d", "error_reporting=E_ALL & ~E_DEPRECATED",
                    "-d", f"include_path=.:/usr/share/php:{includes}", str(path)])
    path = out / "request.c"
    path.write_text(src)
    exe = out / "request-c"
    curl = run(["pkg-config", "--cflags", "--libs", "libcurl"]).split()
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{root / 'include'}", str(path),
         f"-L{lib}", "-lrecuo", *curl, f"-Wl,-rpath,{lib}", "-o", str(exe)])
    return run([str(exe)])


if __name__ == "__main__":
    main()
