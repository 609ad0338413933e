"""The package itself: version, exports, documentation, typing files."""

from __future__ import annotations

import doctest
import importlib.metadata
import inspect
import pydoc
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

import recuo
import recuo._recuo
import recuo._retry
from conftest import ROOT

PACKAGE = Path(recuo.__file__).parent


def workspace_version() -> str:
    """[workspace.package] version in the root Cargo.toml."""
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pass
    else:
        return str(tomllib.loads(text)["workspace"]["package"]["version"])
    section = text.split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    found = re.search(r'^version\s*=\s*"([^"]+)"', section, re.MULTILINE)
    assert found, "no version in [workspace.package]"
    return found.group(1)


def test_version_is_the_workspace_version() -> None:
    assert recuo.__version__ == workspace_version()
    assert importlib.metadata.version("recuo") == recuo.__version__


def test_all_lists_every_public_name_and_only_those() -> None:
    # The adapters' modules (recuo.httpx, ...) are attributes once imported: not names.
    public = {name for name, value in vars(recuo).items() if not name.startswith("_") and not inspect.ismodule(value)}
    assert set(recuo.__all__) == public | {"__version__"}
    assert sorted(recuo.__all__) == recuo.__all__
    # Everything comes from the native module, but the Python glue: `retry` and `call` (the
    # asyncio loop and the decorator), `GiveUp` and `buscar_com_retry` (the HTTP adapters'),
    # and the values generated from the core's declarations (recuo/_values.py).
    generated = set(recuo._values.__all__)
    python_side = {"retry", "call", "GiveUp", "buscar_com_retry", "Resposta"} | generated
    assert set(recuo._recuo.__all__) == set(recuo.__all__) - python_side
    assert generated <= set(recuo.__all__) and not generated & set(recuo._recuo.__all__)
    for name in recuo._recuo.__all__:
        assert getattr(recuo, name) is getattr(recuo._recuo, name)
    for name in generated:
        assert getattr(recuo, name) is getattr(recuo._values, name)
    assert recuo.retry is recuo._retry.retry and recuo.call is recuo._retry.call
    assert recuo.retry.__module__ == "recuo._retry"


def test_config_error_is_a_value_error_named_in_recuo() -> None:
    assert issubclass(recuo.ConfigError, ValueError)
    assert recuo.ConfigError.__module__ == "recuo"
    assert recuo.ConfigError.__qualname__ == "ConfigError"
    assert "code" in (recuo.ConfigError.__doc__ or "")
    assert recuo.RetryAfter.__module__ == "recuo"


def test_every_config_error_code_and_name() -> None:
    cases: dict[tuple[int, str], Callable[[], object]] = {
        (1, "zero_attempts"): lambda: recuo.com_retry(dict, 0),
        (2, "negative_duration"): lambda: recuo.com_retry(dict, base=-1),
        (3, "not_a_number"): lambda: recuo.com_retry(dict, base=float("nan")),
        (4, "duration_too_large"): lambda: recuo.com_retry(dict, maximo=float("inf")),
        (5, "cap_below_base"): lambda: recuo.backoff_window_ms(0, 2, 1),
    }
    for (code, name), call in cases.items():
        with pytest.raises(recuo.ConfigError) as caught:
            call()
        assert (caught.value.code, caught.value.name) == (code, name)
        assert type(caught.value.code) is int
        assert caught.value.args == (str(caught.value),)


@pytest.mark.parametrize(
    ("function", "signature"),
    [
        (
            recuo.com_retry,
            "(tarefa, tentativas=5, base=0.2, maximo=5.0, repetir_se=None, *, prazo=None, ao_repetir=None,"
            " seed=None, sleep=None, gate=None, request=None)",
        ),
        (
            recuo.Policy,
            "(*, max_attempts=5, base=0.2, cap=5.0, jitter='full', deadline=None, spread=None,"
            " idempotency_header='Idempotency-Key', use_date_header=False, server_honours_keys=False)",
        ),
        (
            recuo.classify,
            "(status=None, *, error=None, method='GET', idempotency_key=False, headers=None,"
            " now_ms=None, policy=None)",
        ),
        (
            recuo.retry,
            "(fn=None, /, *args, policy=None, classify=None, on_retry=None, on_give_up=None, seed=None,"
            " sleep=None, gate=None, request=None, **kwargs)",
        ),
        (
            recuo.Operation,
            "(policy=None, *, seed=None, gate=None, stats=None, request=None, records=None,"
            " classify_last_failure=True, idempotency_key=None, pool=None)",
        ),
        (
            recuo.BatchQueue,
            "(policy, len, now_ms, deadline_ms=None, *, stop_when_a_wait_exceeds_the_deadline=False,"
            " stats=None, requests=None, unix_ms=None)",
        ),
        (recuo.Operation.poll_gate, "(self, /, now_ms)"),
        (recuo.Operation.poll_gate_at, "(self, /, now_ms, regulator_now_ns)"),
        (recuo.Operation.start_after_first, "(self, /, now_ms, unix_ms=None)"),
        (recuo.Operation.success_needs_machine, "(gate=None, *, stats=False, records=None)"),
        (recuo.BatchQueue.end_of, "(report, *, gate_failed=False)"),
        (recuo.current_attempt, "()"),
        (recuo.IdempotencyKey, "()"),
        (recuo.retry_delay_ms, "(retry_after, attempt, now_ms=None, *, seed=None)"),
        (recuo.parse_retry_after, "(value, now_ms=None)"),
        (recuo.backoff_window_ms, "(attempt, base_ms=200, cap_ms=5000)"),
        (recuo.Regulator, "(rate, burst=1, *, adaptive=False)"),
        (recuo.Regulator.shared, "(path, rate, burst=1, *, adaptive=False)"),
        (recuo.Regulator.redis, "(url, key, rate, burst=1, *, adaptive=False)"),
        (recuo.Regulator.acquire, "(self, /, timeout=None, *, cost=1)"),
        (recuo.Regulator.acquire_async, "(self, /, timeout=None, *, cost=1)"),
        (recuo.Regulator.try_acquire, "(self, /, *, cost=1)"),
        (recuo.Regulator.try_acquire_at, "(self, /, now_ns, *, cost=1)"),
        (recuo.ConcurrencyLimit, "(limit)"),
        (recuo.ConcurrencyLimit.shared, "(path, limit)"),
        (recuo.ConcurrencyLimit.acquire, "(self, /, timeout=None)"),
        (recuo.RetryBudget, "(ratio=0.1, floor_per_s=1.0, window_s=10)"),
        (recuo.RetryBudget.shared, "(path, ratio=0.1, floor_per_s=1.0, window_s=10)"),
        (recuo.Gate, "(*, regulator=None, limit=None, budget=None)"),
        (recuo.plan, "(requests, allowance, target, latency, retry_fraction=0.0)"),
        (
            recuo.run_batch,
            "(operations, *, policy=None, gate=None, workers=1, deadline=None, classify=None,"
            " stop_when_a_wait_exceeds_the_deadline=False, on_progress=None)",
        ),
        (recuo.monotonic_ns, "()"),
        (recuo.redact_url, "(url, /)"),
        (recuo.redact_url_detailed, "(url, /)"),
        (recuo.redact_headers, "(headers, /)"),
        (recuo.who_answered, "(headers, expected_content_type=None)"),
        (recuo.StatsRecorder, "()"),
        (recuo.StatsRecorder.start, "(self, /, attempt, now_ns=None)"),
        (recuo.StatsRecorder.saw, "(self, /, cause)"),
        (
            recuo.AttemptRecord,
            "(start_ms, elapsed_ms, method, url, *, status=None, error=None, headers=None, delay_ms=None,"
            " decision, reason)",
        ),
        (recuo.ResultRecord, "(start_ms, method, url, *, attempts, total_ms, reason=None, stopped_by=None)"),
        (recuo.Attempt.record_request, "(self, /, method, url)"),
        (recuo.Attempt.record_response, "(self, /, status, headers=None)"),
    ],
    ids=lambda v: getattr(v, "__name__", "signature"),
)
def test_signatures_and_docstrings(function: object, signature: str) -> None:
    doc = inspect.getdoc(function)
    assert doc and len(doc.splitlines()) >= 3
    if isinstance(function, type) and sys.version_info < (3, 10):
        return  # CPython 3.9's limited API gives native classes no __text_signature__
    # As help() shows them, without the annotations of the Python glue.
    sig = inspect.signature(function)  # type: ignore[arg-type]
    bare = sig.replace(
        parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )
    assert str(bare) == signature


def test_help_shows_com_retry_signature_and_doc() -> None:
    # What `python -c "import recuo; help(recuo.com_retry)"` prints.
    text = subprocess.run(
        [sys.executable, "-c", "import recuo; help(recuo.com_retry)"],
        capture_output=True,
        text=True,
        check=True,
        env={"PAGER": "cat", "TERM": "dumb", "PATH": ""},
    ).stdout
    assert (
        "com_retry(tarefa, tentativas=5, base=0.2, maximo=5.0, repetir_se=None, *, prazo=None,"
        " ao_repetir=None, seed=None, sleep=None, gate=None, request=None)"
    ) in text
    assert "The retry loop of “Como repetir requisições com backoff exponencial (retry)”" in text
    assert "KeyboardInterrupt" in text
    assert pydoc.render_doc(recuo.RetryAfter).count("wait_ms") >= 1


def test_the_typing_files_ship_with_the_package() -> None:
    assert (PACKAGE / "py.typed").is_file()
    stub = (PACKAGE / "_recuo.pyi").read_text(encoding="utf-8")
    for name in recuo._recuo.__all__:
        assert re.search(rf"^(def|class) {name}\b|^{name}:", stub, re.MULTILINE), name
    # The glue is typed inline (checked by mypy --strict, and by stubtest as its own stub).
    glue = (PACKAGE / "_retry.py").read_text(encoding="utf-8")
    assert re.search(r"^def retry\(\n    fn: Callable\[\.\.\., Any\] \| None = None,", glue, re.MULTILINE)


def test_the_typed_usage_file_runs() -> None:
    # tests/python/typed_usage.py is checked by mypy --strict (make lint-python); here it runs.
    from typed_usage import main, policy_engine, records, shared_limits

    main()
    policy_engine()
    shared_limits()
    records()


def test_the_demo_runs_and_shows_both_guides() -> None:
    # examples/python/demo.py is what `make demo` prints: it must not rot.
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "demo.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert f"recuo {recuo.__version__} (Python)" in out
    assert re.search(r"'12' +seconds +-> +12000 ms", out)
    assert re.search(r"date +-> +30000 ms", out)
    assert re.search(r"date +-> +0 ms", out)
    assert re.search(r"'9{20}' +unbounded +-> +inf ms", out)
    assert "attempt 3: ok" in out and "attempt 4" not in out
    assert "after 3 attempts" in out
    assert re.search(r"500 on a POST +-> give_up \(not_idempotent\)", out)
    assert re.search(r"429 Retry-After: 3 +-> retry \(rate_limited, wait 3000 ms\)", out)
    assert "sleep(1.0): the server's wait" in out and "sleep(2.0): the server's wait" in out
    assert "-> 'pay_123'; 1 idempotency key for the 3 attempts" in out
    assert "daily quota: gave up after 1 attempt (wait_exceeds_deadline)" in out
    assert "-> '200 /status'" in out
    assert "-> 667 ms apart, 400 s, 3 in flight" in out
    assert "batch: 12 succeeded, 0 gave up, 0 not started; 12 first attempts + 2 retries" in out
    assert "redact_url     -> https://api.example.com/v1/users/[email]?api_key=[redacted]&page=2" in out
    assert "who_answered   -> cdn (high)" in out
    assert re.search(r"INFO +attempt 503: retry \(unavailable\), request id req-9, delay 1\d\d\d ms", out)
    assert re.search(r"INFO +result +success after 2 attempts", out)
    assert "s3cr3t" not in out and "pw@" not in out


def test_the_package_docstring_examples_run() -> None:
    result = doctest.testmod(recuo, raise_on_error=False, verbose=False)
    assert result.attempted >= 3
    assert result.failed == 0
