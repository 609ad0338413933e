"""The examples of docs/python.md run, in order, as one doctest: the guide cannot rot. The
Redis example runs against a `redis-server` this module starts (the ``redis_url`` fixture)."""

from __future__ import annotations

import doctest
import re

import pytest

from conftest import ROOT

GUIDE = ROOT / "docs" / "python.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_every_python_block_is_a_doctest() -> None:
    blocks = python_blocks(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 10
    for block in blocks:
        assert block.lstrip().startswith(">>> "), block[:60]


def test_the_guides_examples_run(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Redis example reads REDIS_URL: this module's own server.
    monkeypatch.setenv("REDIS_URL", redis_url)
    source = "\n".join(python_blocks(GUIDE.read_text(encoding="utf-8")))
    parser = doctest.DocTestParser()
    test = parser.get_doctest(source, {}, "docs/python.md", str(GUIDE), 0)
    assert len(test.examples) >= 40
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed (output above)"
