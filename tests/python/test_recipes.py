"""docs/recipes.md, run as written: its Python code is taken from the page verbatim (only the
API's address, ``https://api.example.com``, is replaced by a local server's) and run against
``recuo serve`` on 127.0.0.1 — scripted to answer 500, then 429 with ``Retry-After: 1``, then
201, and logging each request's ``Idempotency-Key`` — or, for guide B's four workers, the
simulated API. The JavaScript and PHP code of the page is run by js/test/recipes.test.js and
tests/php/RecipesTest.php; guide B's worker files are the ones tests/guide_b runs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import recuo
from conftest import ROOT
from serving import RECUO_BIN, recuo_serve, script_log, scripted_serve, stats

DOC = ROOT / "docs" / "recipes.md"
PLACEHOLDER = "https://api.example.com"
SECTIONS = [
    "A payment, retried safely",
    "600 calls from four workers against 120 a minute",
    "Guzzle in a Laravel app",
]
# What the scripted server answers on any path ending in /payments (each path its own count).
SCRIPT = {
    "requests": [
        {
            "id": "payments",
            "script": [{"status": 500}, {"status": 429, "headers": {"Retry-After": "1"}}, {"status": 201}],
        }
    ]
}


def section(title: str) -> str:
    """The text of docs/recipes.md under ``## title``, up to the next ``## `` heading."""
    text = DOC.read_text(encoding="utf-8")
    head = f"\n## {title}\n"
    assert head in text, f"docs/recipes.md has no section {title!r}"
    return text.split(head, 1)[1].split("\n## ", 1)[0]


def blocks(text: str, language: str) -> list[tuple[str, str | None]]:
    """The fenced ``language`` blocks of ``text``, each with the ``text`` block right after it
    (what it prints), or None."""
    found = re.findall(rf"^```{language}\n(.*?)^```\n(?:\s*^```text\n(.*?)^```\n)?", text, re.M | re.S)
    return [(code, printed or None) for code, printed in found]


def only(text: str, language: str, containing: str) -> tuple[str, str | None]:
    """The one ``language`` block of ``text`` that contains ``containing``."""
    found = [b for b in blocks(text, language) if containing in b[0]]
    assert len(found) == 1, f"{len(found)} {language} blocks with {containing!r}"
    return found[0]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    script = tmp_path_factory.mktemp("recipes") / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with scripted_serve(script) as url:
        yield url


def test_the_page_has_the_three_recipes_in_order() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.startswith("# Recipes\n")
    assert re.findall(r"^## (.*)$", text, re.M) == SECTIONS


def test_the_python_payment_sends_the_orders_key_on_every_attempt(scripted: str) -> None:
    code, _ = only(section(SECTIONS[0]), "python", "def pay_order")
    assert code.count(PLACEHOLDER) == 1
    base = f"{scripted}/python"
    namespace: dict[str, object] = {"__name__": "recipe"}
    exec(compile(code.replace(PLACEHOLDER, base), "docs/recipes.md (pay_order)", "exec"), namespace)
    pay_order = namespace["pay_order"]
    assert callable(pay_order)
    started = time.monotonic()
    answer = pay_order(SimpleNamespace(id=42, amount=1990))
    took = time.monotonic() - started
    assert answer == {"request": 2, "status": 201}
    # 500 (retried: the key is the caller's), 429 (its Retry-After: 1 waited out), 201.
    assert script_log(scripted, "python/payments") == [{"method": "POST", "key": "pedido-42"}] * 3
    assert 1.0 <= took < 6.0


def test_without_the_orders_key_the_500_is_not_retried(scripted: str) -> None:
    """The trap the recipe describes, in Python: recuo's own key, one attempt, a give-up."""
    with pytest.raises(recuo.GiveUp, match=r"^recuo gave up after 1 attempt \(permanent\): HTTP 500$"):
        recuo.buscar_com_retry(f"{scripted}/trap/payments", metodo="POST", dados="{}")
    [seen] = script_log(scripted, "trap/payments")
    assert seen["method"] == "POST" and re.fullmatch(r"[0-9a-f-]{36}", seen["key"])


def run_shell(code: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def test_recuo_plan_prints_what_the_page_says() -> None:
    code, printed = only(section(SECTIONS[1]), "sh", "recuo plan")
    assert printed is not None
    env = {**os.environ, "PATH": f"{RECUO_BIN.parent}:{os.environ['PATH']}"}
    assert run_shell(code, env) == printed


def test_the_planner_api_prints_what_the_page_says() -> None:
    code, printed = only(section(SECTIONS[1]), "python", "recuo.plan(")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/recipes.md (plan)", "exec"), {"__name__": "recipe"})
    assert out.getvalue() == printed


def fake(folder: Path, name: str, fixed: int, real: list[str]) -> None:
    """``folder/name``: an interpreter that writes its arguments (one JSON line) to $LAUNCHES,
    then runs ``real`` with the first ``fixed`` arguments and only the first id after them, so
    that the launch's four workers each make one request."""
    script = folder / name
    record = f"{sys.executable} -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \"$@\" >> \"$LAUNCHES\""
    script.write_text(f"#!/bin/bash\n{record}\nexec {' '.join(real)} \"${{@:1:{fixed}}}\" \"${{@:{fixed + 1}:1}}\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_the_python_workers_launch_as_the_page_says(tmp_path: Path) -> None:
    """The page's Python worker (the file tests/guide_b runs) started by the page's launch
    lines: four processes, two with requests and two with httpx, every id once, the plan's
    rate; each worker, given one id of its share, reads it through the shared limits."""
    text = section(SECTIONS[1])
    worker, _ = only(text, "python", "def main()")
    launch, _ = only(text, "sh", "python worker.py")
    assert launch.count(PLACEHOLDER) == 1
    (tmp_path / "worker.py").write_text(worker)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake(bin_dir, "python", 8, [sys.executable])
    launches = tmp_path / "launches.jsonl"
    with recuo_serve("--port", "0", "--allowance", "100000/min", "--burst", "1000", "--latency", "1ms", "--fail-rate", "0") as api:
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LAUNCHES": str(launches)}
        out = run_shell(launch.replace(PLACEHOLDER, api), env, cwd=tmp_path)
        seen = stats(api)
    args = [json.loads(line) for line in launches.read_text().splitlines()]
    for folder in {a[6] for a in args}:
        shutil.rmtree(folder, ignore_errors=True)  # the launch's mktemp -d
    assert len(args) == 4
    assert sorted(a[1] for a in args) == ["httpx", "httpx", "requests", "requests"]
    assert {tuple(a[:1] + a[2:5] + a[7:8]) for a in args} == {("worker.py", api, "90/min", "600", "steady")}
    assert len({a[6] for a in args}) == 1  # one folder for the four
    ids = sorted(int(i) for a in args for i in a[8:])
    assert ids == list(range(600))
    assert float(args[0][4]) >= recuo.plan(600, "120/min", "90/min", 2.0).duration_s
    printed = [recuo.Stats.from_dict(json.loads(line)) for line in out.splitlines()]
    total = sum(printed, recuo.Stats())
    assert (len(printed), total.successes, total.failures, seen["requests"]) == (4, 4, 0, 4)
