"""Typed use of recuo, checked by `mypy --strict` (make lint-python) and run by pytest.

The `# type: ignore[...]` lines are wrong on purpose: under --strict an ignore that is not
needed is itself an error, so each one proves the stubs refuse that call.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, Optional

import recuo

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:

    def assert_type(value: Any, _type: Any) -> Any:
        return value


def fetch() -> dict[str, int]:
    return {"status": 200}


def transient(erro: Exception) -> bool:
    return isinstance(erro, (ConnectionError, TimeoutError))


def no_sleep(seconds: float) -> None:
    assert seconds >= 0


def main() -> None:
    answer = recuo.com_retry(fetch, 3, 0.01, 0.05, transient, seed=7, sleep=no_sleep)
    assert_type(answer, dict[str, int])
    assert answer == {"status": 200}
    assert_type(recuo.com_retry(lambda: 1, tentativas=2, base=1, maximo=2), int)

    delay = recuo.retry_delay_ms("12", 0, 784111777000)
    assert_type(delay, float)
    assert delay == 12000.0
    assert recuo.retry_delay_ms(b"soon", 3, seed=1) <= 8000.0
    assert recuo.retry_delay_ms(None, 0) <= 1000.0
    assert math.isinf(recuo.retry_delay_ms("99999999999999999999", 0))

    parsed = recuo.parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777000 - 30_000)
    assert_type(parsed, recuo.RetryAfter)
    kind = parsed.kind
    assert_type(kind, Literal["seconds", "date", "unbounded", "invalid"])
    wait = parsed.wait_ms
    assert_type(wait, Optional[int])
    assert (kind, wait) == ("date", 30_000)

    window = recuo.backoff_window_ms(3, base_ms=100, cap_ms=1000)
    assert_type(window, int)
    assert window == 800

    try:
        recuo.com_retry(fetch, tentativas=0)
    except recuo.ConfigError as erro:
        assert_type(erro.code, int)
        assert (erro.code, erro.name) == (1, "zero_attempts")
    version: str = recuo.__version__
    assert version


def refused_by_the_stubs() -> None:
    """Never called: each line is a type error the stubs must report."""
    recuo.retry_delay_ms(12, 0)  # type: ignore[arg-type]
    recuo.com_retry(fetch, repetir_se=lambda: True)  # type: ignore[arg-type,misc]
    recuo.com_retry(fetch, seed="7")  # type: ignore[arg-type]
    recuo.backoff_window_ms(1.5)  # type: ignore[arg-type]
    recuo.parse_retry_after("12").kind = "date"  # type: ignore[misc]
    text: str = recuo.com_retry(fetch)  # type: ignore[assignment]
    del text


if __name__ == "__main__":
    main()
