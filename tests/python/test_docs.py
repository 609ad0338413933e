"""The examples of docs/python.md run, in order, as one doctest: the guide cannot rot. The
Redis example runs against a `redis-server` this module starts (the ``redis_url`` fixture),
the HTTP clients' examples against two ``recuo serve`` (``serving.recuo_serve``): one with
503s and 429s, one whose daily quota is spent."""

from __future__ import annotations

import doctest
import re

import pytest

from conftest import ROOT
from serving import RECUO_BIN, recuo_serve

GUIDE = ROOT / "docs" / "python.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_page_starts_as_every_language_page_does() -> None:
    # A title, then the recipes this page links. The order of every language page's first
    # sections is held by tests/docs/check_docs.py (make test-docs), for all four pages.
    text = GUIDE.read_text(encoding="utf-8")
    assert text.startswith("# recuo for Python\n")
    recipes = text[text.index("\n## Recipes\n") :].split("\n## ", 2)[1]
    assert "recipes.md#a-payment-retried-safely" in recipes
    assert "recipes.md#600-calls-from-four-workers-against-120-a-minute" in recipes


def test_every_python_block_is_a_doctest() -> None:
    blocks = python_blocks(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 10
    for block in blocks:
        assert block.lstrip().startswith(">>> "), block[:60]


@pytest.mark.skipif(not RECUO_BIN.is_file(), reason=f"no recuo command at {RECUO_BIN} (make build-cli)")
def test_the_guides_examples_run(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Redis example reads REDIS_URL: this module's own server; the HTTP examples read
    # RECUO_SERVE_URL and RECUO_SPENT_URL.
    monkeypatch.setenv("REDIS_URL", redis_url)
    api = ["--allowance", "6000/min", "--fail-rate", "0.2", "--seed", "5", "--latency", "1ms"]
    with recuo_serve(*api) as url, recuo_serve("--quota", "0", "--latency", "1ms") as spent:
        monkeypatch.setenv("RECUO_SERVE_URL", url)
        monkeypatch.setenv("RECUO_SPENT_URL", spent)
        _run_the_guide()


def _run_the_guide() -> None:
    source = "\n".join(python_blocks(GUIDE.read_text(encoding="utf-8")))
    parser = doctest.DocTestParser()
    test = parser.get_doctest(source, {}, "docs/python.md", str(GUIDE), 0)
    assert len(test.examples) >= 40
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed (output above)"
