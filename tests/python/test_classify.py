"""recuo.classify and recuo.Verdict: the arguments, the header forms, and bad input.

The verdicts themselves are the shared vectors' (test_vectors.py); here, the Python surface.
"""

from __future__ import annotations

import email.utils
import http.client
import io
from collections import OrderedDict
from typing import Any, Iterator, Mapping

import pytest

import recuo

NOW = 1_700_000_000_000


def test_status_is_positional_and_the_rest_keyword_only() -> None:
    assert recuo.classify(200).verdict == "success"
    with pytest.raises(TypeError):
        recuo.classify(200, "GET")  # type: ignore[call-arg, arg-type]


def test_a_verdict_answers_its_parts() -> None:
    v = recuo.classify(429, headers={"Retry-After": "3"}, now_ms=NOW)
    assert (v.verdict, v.reason, v.wait_ms, v.wait_unbounded) == ("retry", "rate_limited", 3000, False)
    assert type(v.wait_ms) is int
    assert repr(v) == "Verdict(verdict='retry', reason='rate_limited', wait_ms=3000, wait_unbounded=False)"


def test_an_unbounded_wait() -> None:
    v = recuo.classify(503, headers=[("Retry-After", "9" * 20)])
    assert (v.verdict, v.wait_ms, v.wait_unbounded) == ("retry", None, True)


def test_transport_errors() -> None:
    assert recuo.classify(error="connect", method="POST").verdict == "retry"
    assert recuo.classify(error="tls").reason == "tls"
    assert recuo.classify(error="timeout", method="POST").reason == "not_idempotent"
    assert recuo.classify(error="reset", method="PATCH", idempotency_key=True).verdict == "retry"
    assert recuo.classify(None, error="other").reason == "other"


@pytest.mark.parametrize("key", [True, "5f1c...", recuo.IdempotencyKey()])
def test_a_request_with_a_key_is_idempotent(key: Any) -> None:
    assert recuo.classify(500, method="POST", idempotency_key=key).verdict == "retry"


@pytest.mark.parametrize("key", [False, None, ""])
def test_a_request_without_a_key(key: Any) -> None:
    assert recuo.classify(500, method="POST", idempotency_key=key).reason == "not_idempotent"


def test_methods_are_matched_without_regard_to_case_and_unknown_ones_are_not_idempotent() -> None:
    assert recuo.classify(502, method="put").verdict == "retry"
    assert recuo.classify(502, method="BREW").reason == "not_idempotent"
    assert recuo.classify(502, method="").reason == "not_idempotent"


@pytest.mark.parametrize("status", [0, 99, 600, 999, 65535, 65536, -1, 2**80])
def test_a_status_outside_100_599_counts_as_500(status: int) -> None:
    assert recuo.classify(status).reason == "server_error"
    assert recuo.classify(status, method="POST").reason == "not_idempotent"


# --- header forms -------------------------------------------------------------------------


class Headers(Mapping[str, str]):
    """A read-only mapping, as HTTP clients' header objects are."""

    def __init__(self, **items: str) -> None:
        self._items = {k.replace("_", "-"): v for k, v in items.items()}

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def http_message(text: str) -> http.client.HTTPMessage:
    return http.client.parse_headers(io.BytesIO(text.encode("latin-1")))


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "7"},
        {"retry-after": "7"},
        OrderedDict([("Retry-After", "7")]),
        Headers(Retry_After="7"),
        [("Retry-After", "7")],
        [["Retry-After", "7"]],
        (("Retry-After", "7"),),
        iter([("Retry-After", "7")]),
        [(b"Retry-After", b"7")],
        {b"Retry-After": b"7"},
        [("Retry-After", b" 7 ")],
        http_message("Retry-After: 7\r\nContent-Type: text/plain\r\n\r\n"),
    ],
    ids=lambda h: type(h).__name__,
)
def test_every_header_form(headers: Any) -> None:
    assert recuo.classify(503, headers=headers, now_ms=NOW).wait_ms == 7000


def test_an_http_date_in_the_headers() -> None:
    date = email.utils.formatdate((NOW + 30_000) / 1000, usegmt=True)
    assert recuo.classify(429, headers={"Retry-After": date}, now_ms=NOW).wait_ms == 30_000


def test_the_date_header_is_now_when_the_policy_says_so() -> None:
    date = email.utils.formatdate((NOW + 30_000) / 1000, usegmt=True)
    server_now = email.utils.formatdate((NOW + 20_000) / 1000, usegmt=True)
    headers = [("Retry-After", date), ("Date", server_now)]
    assert recuo.classify(429, headers=headers, now_ms=NOW).wait_ms == 30_000
    p = recuo.Policy(use_date_header=True)
    assert recuo.classify(429, headers=headers, now_ms=NOW, policy=p).wait_ms == 10_000


def test_rate_limit_hints() -> None:
    assert recuo.classify(429, headers={"RateLimit": '"default";r=0;t=12'}).wait_ms == 12_000
    h = {"RateLimit-Remaining": "0", "RateLimit-Reset": "5"}
    assert recuo.classify(429, headers=h).wait_ms == 5000
    h = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(NOW // 1000 + 60)}
    assert recuo.classify(403, headers=h, now_ms=NOW).wait_ms == 60_000


def test_non_ascii_and_odd_values_are_no_wait_never_an_error() -> None:
    for value in ["١٢", "12\x00", "\ud800", "ｓｏｏｎ", "1" * 10_000]:
        assert recuo.classify(503, headers={"Retry-After": value}).wait_ms is None
    assert recuo.classify(503, headers=[(b"Retry-After", b"\xff\xfe")]).wait_ms is None


def test_now_defaults_to_the_system_clock() -> None:
    date = email.utils.formatdate(None, usegmt=True)  # now, to the second
    v = recuo.classify(503, headers={"Retry-After": date})
    assert v.wait_ms is not None and v.wait_ms <= 1000


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, TypeError, "needs a status"),
        ({"status": None}, TypeError, "needs a status"),
        ({"status": 500, "error": "timeout"}, TypeError, "not both"),
        ({"status": "500"}, TypeError, "status must be an int"),
        ({"status": 500.0}, TypeError, "status must be an int"),
        ({"status": True}, TypeError, "status must be an int"),
        ({"error": "dns"}, ValueError, "'connect', 'tls', 'timeout', 'reset' or 'other'"),
        ({"error": "TIMEOUT"}, ValueError, "error must be one of"),
        ({"error": 1}, TypeError, "error must be a str"),
        ({"status": 500, "method": None}, TypeError, "method must be a str"),
        ({"status": 500, "method": b"GET"}, TypeError, "method must be a str"),
        ({"status": 500, "idempotency_key": 1}, TypeError, "idempotency_key must be"),
        ({"status": 500, "headers": "Retry-After: 3"}, TypeError, "headers must be"),
        ({"status": 500, "headers": b"Retry-After: 3"}, TypeError, "headers must be"),
        ({"status": 500, "headers": 3}, TypeError, "headers must be"),
        ({"status": 500, "headers": ["Retry-After"]}, TypeError, "(name, value) pair"),
        ({"status": 500, "headers": [("Retry-After", "3", "x")]}, TypeError, "(name, value) pair"),
        ({"status": 500, "headers": [("Retry-After",)]}, TypeError, "(name, value) pair"),
        ({"status": 500, "headers": [3]}, TypeError, "(name, value) pair"),
        ({"status": 500, "headers": {"Retry-After": 3}}, TypeError, "a header value must be str or bytes"),
        ({"status": 500, "headers": {3: "3"}}, TypeError, "a header name must be str or bytes"),
        ({"status": 500, "headers": [(None, "3")]}, TypeError, "a header name must be"),
        ({"status": 500, "now_ms": 1.5}, TypeError, "now_ms must be an int"),
        ({"status": 500, "now_ms": 2**63}, ValueError, "now_ms must be between"),
        ({"status": 500, "policy": "guide_a"}, TypeError, "Policy"),
        ({"status": 500, "unknown": 1}, TypeError, "unknown"),
    ],
)
def test_bad_input(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        recuo.classify(**kwargs)
    assert message in str(caught.value)


def test_an_exception_from_the_headers_iteration_propagates() -> None:
    class Broken:
        def items(self) -> Any:
            raise LookupError("no headers today")

    with pytest.raises(LookupError, match="no headers today"):
        recuo.classify(503, headers=Broken())


# --- Verdict ------------------------------------------------------------------------------


def test_verdicts_made_by_hand() -> None:
    assert recuo.Verdict.retry() == recuo.classify(500)
    assert recuo.Verdict.retry(1500).wait_ms == 1500
    assert recuo.Verdict.retry(reason="rate_limited", wait_ms=3000) == recuo.classify(
        429, headers={"Retry-After": "3"}
    )
    assert recuo.Verdict.retry(unbounded=True).wait_unbounded
    assert recuo.Verdict.give_up() == recuo.classify(404)
    assert recuo.Verdict.give_up("tls") == recuo.classify(error="tls")
    assert recuo.Verdict.give_up("not_idempotent") == recuo.classify(500, method="POST")
    assert recuo.Verdict.success() == recuo.classify(204)
    assert recuo.Verdict.retry(reason="connect") == recuo.classify(error="connect", method="POST")


def test_verdicts_are_frozen_and_hashable() -> None:
    v = recuo.classify(429, headers={"Retry-After": "3"}, now_ms=0)
    assert len({v, recuo.Verdict.retry(3000, reason="rate_limited"), recuo.Verdict.success()}) == 2
    with pytest.raises(AttributeError):
        v.verdict = "give_up"  # type: ignore[misc]
    with pytest.raises(TypeError):
        recuo.Verdict()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: recuo.Verdict.retry(100, unbounded=True), ValueError),
        (lambda: recuo.Verdict.retry(-1), recuo.ConfigError),
        (lambda: recuo.Verdict.retry(1.5), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Verdict.retry(unbounded=1), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Verdict.retry(reason="success"), ValueError),
        (lambda: recuo.Verdict.retry(reason="flaky"), ValueError),  # type: ignore[arg-type]
        (lambda: recuo.Verdict.give_up("success"), ValueError),
        (lambda: recuo.Verdict.give_up(None), TypeError),  # type: ignore[arg-type]
    ],
)
def test_bad_verdicts(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()


# --- IdempotencyKey -----------------------------------------------------------------------


def test_idempotency_keys_are_new_uuid_v4_texts() -> None:
    import uuid

    keys = [recuo.IdempotencyKey() for _ in range(1000)]
    texts = {str(k) for k in keys}
    assert len(texts) == 1000
    for text in list(texts)[:50]:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text  # lower case, canonical form
    k = keys[0]
    assert repr(k) == f"IdempotencyKey('{k}')"
    assert k == k and k != keys[1] and hash(k) == hash(k)
    with pytest.raises(TypeError):
        recuo.IdempotencyKey("abc")  # type: ignore[call-arg]
