"""recuo from Python: guide B's delays for a few Retry-After values, then guide A's loop
succeeding on the third attempt.

Run it with `make demo-python` (which builds the package first).
"""

from __future__ import annotations

import email.utils

import recuo

NOW_MS = 1_700_000_000_000  # a fixed "now", so the output is the same on every run


def http_date(ms: int) -> str:
    return email.utils.formatdate(ms / 1000, usegmt=True)


def guide_b() -> None:
    print(f"guide B: retry_delay_ms(retry_after, attempt=1, now={http_date(NOW_MS)})")
    values: list[tuple[str, str | None]] = [
        ("seconds", "12"),
        ("date, 30 s ahead", http_date(NOW_MS + 30_000)),
        ("date, in the past", http_date(NOW_MS - 60_000)),
        ("invalid", "soon"),
        ("absent", None),
        ("huge", "9" * 20),
    ]
    for label, value in values:
        parsed = recuo.parse_retry_after(value, NOW_MS)
        delay = recuo.retry_delay_ms(value, 1, NOW_MS, seed=42)
        print(f"  {label:<18} {value!r:<33} {parsed.kind:<9} -> {delay:>9.0f} ms")


def guide_a() -> None:
    print("guide A: com_retry(tarefa, tentativas=5, base=0.02, maximo=0.1)")
    attempt = 0

    def tarefa() -> str:
        nonlocal attempt
        attempt += 1
        if attempt < 3:
            print(f"  attempt {attempt}: ConnectionError, retrying")
            raise ConnectionError("connection refused")
        print(f"  attempt {attempt}: ok")
        return "payment created"

    result = recuo.com_retry(tarefa, tentativas=5, base=0.02, maximo=0.1)
    print(f"  -> {result!r} after {attempt} attempts")


def main() -> None:
    print(f"recuo {recuo.__version__} (Python)")
    guide_b()
    guide_a()


if __name__ == "__main__":
    main()
