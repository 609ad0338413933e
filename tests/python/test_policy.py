"""recuo.Policy: construction, validation by the core, presets, the classification sets."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

import recuo

# --- construction and the presets --------------------------------------------------------


def test_the_defaults_are_guide_a() -> None:
    p = recuo.Policy()
    assert (p.max_attempts, p.base, p.cap, p.jitter) == (5, 0.2, 5.0, "full")
    assert (p.deadline, p.spread, p.idempotency_header, p.use_date_header) == (None, None, "Idempotency-Key", False)
    assert p.quota_403_as_rate_limit is True
    assert p == recuo.Policy.guide_a()


def test_guide_b() -> None:
    b = recuo.Policy.guide_b()
    assert (b.max_attempts, b.base, b.cap, b.jitter, b.deadline) == (5, 1.0, 8.0, "full", 30.0)
    assert b == recuo.Policy(base=1, cap=8, deadline=30)
    assert b != recuo.Policy.guide_a()


def test_every_setting() -> None:
    p = recuo.Policy(
        max_attempts=3,
        base=0.05,
        cap=2,
        jitter="decorrelated",
        deadline=12.5,
        spread=0.25,
        idempotency_header="X-Request-Key",
        use_date_header=True,
    )
    assert (p.max_attempts, p.base, p.cap, p.jitter) == (3, 0.05, 2.0, "decorrelated")
    assert (p.deadline, p.spread, p.idempotency_header, p.use_date_header) == (12.5, 0.25, "X-Request-Key", True)
    assert all(type(v) is float for v in (p.base, p.cap, p.deadline, p.spread))


@pytest.mark.parametrize("jitter", ["full", "equal", "decorrelated", "none"])
def test_every_jitter_mode(jitter: str) -> None:
    assert recuo.Policy(jitter=jitter).jitter == jitter  # type: ignore[arg-type]


def test_seconds_are_kept_as_whole_milliseconds() -> None:
    assert recuo.Policy(base=0.0004, cap=0.0016).base == 0.0
    assert recuo.Policy(base=0.0004, cap=0.0016).cap == 0.002
    assert recuo.Policy(base=0, cap=0).cap == 0.0
    assert recuo.Policy(deadline=0).deadline == 0.0
    assert recuo.Policy(spread=0).spread == 0.0


def test_the_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        recuo.Policy(3)  # type: ignore[call-arg]


# --- validation: the core's ConfigError, with its code and name ----------------------------


@pytest.mark.parametrize(
    ("kwargs", "code", "name"),
    [
        ({"max_attempts": 0}, 1, "zero_attempts"),
        ({"max_attempts": -3}, 1, "zero_attempts"),
        ({"max_attempts": -(2**70)}, 1, "zero_attempts"),
        ({"base": -0.001}, 2, "negative_duration"),
        ({"cap": -1}, 2, "negative_duration"),
        ({"deadline": -1}, 2, "negative_duration"),
        ({"spread": -0.5}, 2, "negative_duration"),
        ({"base": -(10**400)}, 2, "negative_duration"),
        ({"base": math.nan}, 3, "not_a_number"),
        ({"deadline": math.nan}, 3, "not_a_number"),
        ({"cap": math.inf}, 4, "duration_too_large"),
        ({"deadline": math.inf}, 4, "duration_too_large"),
        ({"spread": 1e17}, 4, "duration_too_large"),
        ({"deadline": 10**400}, 4, "duration_too_large"),
        ({"base": 2, "cap": 1}, 5, "cap_below_base"),
        ({"idempotency_header": ""}, 6, "invalid_header_name"),
        ({"idempotency_header": "Bad Name"}, 6, "invalid_header_name"),
        ({"idempotency_header": "Key:"}, 6, "invalid_header_name"),
        ({"idempotency_header": "Clé"}, 6, "invalid_header_name"),
        ({"idempotency_header": "\ud800"}, 6, "invalid_header_name"),
    ],
)
def test_bad_policies_are_refused_with_the_cores_code(kwargs: dict[str, Any], code: int, name: str) -> None:
    with pytest.raises(recuo.ConfigError) as caught:
        recuo.Policy(**kwargs)
    assert (caught.value.code, caught.value.name) == (code, name)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_attempts": 2.0}, TypeError),
        ({"max_attempts": True}, TypeError),
        ({"max_attempts": "5"}, TypeError),
        ({"max_attempts": 2**32}, ValueError),
        ({"base": "0.2"}, TypeError),
        ({"cap": None}, TypeError),
        ({"base": True}, TypeError),
        ({"deadline": "30"}, TypeError),
        ({"jitter": "fulll"}, ValueError),
        ({"jitter": "FULL"}, ValueError),
        ({"jitter": 1}, TypeError),
        ({"idempotency_header": b"Idempotency-Key"}, TypeError),
        ({"use_date_header": 1}, TypeError),
        ({"use_date_header": None}, TypeError),
        ({"unknown": 1}, TypeError),
    ],
)
def test_wrong_types_and_values(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        recuo.Policy(**kwargs)
    assert not isinstance(caught.value, recuo.ConfigError)


def test_the_largest_counts_are_accepted() -> None:
    assert recuo.Policy(max_attempts=2**32 - 1).max_attempts == 2**32 - 1
    huge = recuo.Policy(base=1e15, cap=1e16, deadline=1e16)
    assert huge.cap == 1e16


# --- immutable, comparable, hashable, printable ----------------------------------------------


def test_policies_are_frozen() -> None:
    p = recuo.Policy()
    with pytest.raises(AttributeError):
        p.max_attempts = 3  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        p.anything = 1  # type: ignore[attr-defined]


def test_equal_policies_hash_alike() -> None:
    a = recuo.Policy(max_attempts=3, deadline=30)
    b = recuo.Policy(max_attempts=3, deadline=30.0)
    assert a == b and hash(a) == hash(b)
    assert len({a, b, recuo.Policy()}) == 2
    assert a != recuo.Policy(max_attempts=3, deadline=31)
    assert a.with_status_retry(408, "if_idempotent") != a
    assert (a == "policy") is False


def test_copies_are_the_same_immutable_policy() -> None:
    p = recuo.Policy(max_attempts=2)
    assert copy.copy(p) is p
    assert copy.deepcopy({"p": p})["p"] is p


@pytest.mark.parametrize(
    "policy",
    [
        recuo.Policy(),
        recuo.Policy.guide_b(),
        recuo.Policy(
            max_attempts=7, base=0.05, cap=2.5, jitter="none", spread=0.0, idempotency_header="X-Key", use_date_header=True
        ),
        recuo.Policy()
        .with_status_retry(408, "if_idempotent")
        .with_status_retry(429, "never")
        .with_status_retry(500, "always")
        .with_transport_retry("timeout", "always")
        .with_transport_retry("connect", "never")
        .with_method_idempotent("post", True)
        .with_method_idempotent("DELETE", False)
        .with_quota_403_as_rate_limit(False),
        recuo.Policy(idempotency_header="It's"),
    ],
)
def test_the_repr_rebuilds_the_policy(policy: recuo.Policy) -> None:
    text = repr(policy)
    assert text.startswith("Policy(")
    assert eval(text, {"Policy": recuo.Policy}) == policy


def test_the_repr_names_every_setting() -> None:
    assert repr(recuo.Policy.guide_b()) == (
        "Policy(max_attempts=5, base=1.0, cap=8.0, jitter='full', deadline=30.0, spread=None, "
        "idempotency_header='Idempotency-Key', use_date_header=False)"
    )
    assert repr(recuo.Policy().with_status_retry(408, "if_idempotent")).endswith(
        "use_date_header=False).with_status_retry(408, 'if_idempotent')"
    )


# --- the classification sets ----------------------------------------------------------------


def test_the_default_rules_are_the_table_of_the_spec() -> None:
    p = recuo.Policy()
    assert [p.status_retry(s) for s in (429, 503)] == ["always", "always"]
    assert [p.status_retry(s) for s in (500, 502, 504, 507, 508, 599)] == ["if_idempotent"] * 6
    assert [p.status_retry(s) for s in (400, 401, 403, 404, 408, 422, 501, 505)] == ["never"] * 8
    assert p.transport_retry("connect") == "always"
    assert [p.transport_retry(k) for k in ("timeout", "reset", "other")] == ["if_idempotent"] * 3
    assert p.transport_retry("tls") == "never"
    for method in ("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "get"):
        assert p.method_idempotent(method)
    for method in ("POST", "PATCH", "CONNECT"):
        assert not p.method_idempotent(method)


def test_a_status_rule_changes_the_verdict() -> None:
    p = recuo.Policy().with_status_retry(408, "if_idempotent")
    assert p.status_retry(408) == "if_idempotent"
    assert recuo.classify(408, policy=p).verdict == "retry"
    assert recuo.classify(408, method="POST", policy=p).reason == "not_idempotent"
    assert recuo.classify(408).verdict == "give_up"  # the default is untouched

    always = p.with_status_retry(408, "always")
    assert recuo.classify(408, method="POST", policy=always).verdict == "retry"
    never = recuo.Policy().with_status_retry(503, "never")
    assert (recuo.classify(503, policy=never).verdict, recuo.classify(503, policy=never).reason) == (
        "give_up",
        "permanent",
    )


def test_a_transport_rule_changes_the_verdict() -> None:
    p = recuo.Policy().with_transport_retry("timeout", "always")
    assert recuo.classify(error="timeout", method="POST", policy=p).verdict == "retry"
    p = recuo.Policy().with_transport_retry("connect", "if_idempotent")
    assert recuo.classify(error="connect", method="POST", policy=p).reason == "not_idempotent"
    p = recuo.Policy().with_transport_retry("reset", "never")
    assert recuo.classify(error="reset", policy=p).reason == "permanent"


def test_a_method_rule_changes_the_verdict() -> None:
    p = recuo.Policy().with_method_idempotent("post", True)
    assert p.method_idempotent("POST") and p.method_idempotent("Post")
    assert recuo.classify(500, method="POST", policy=p).verdict == "retry"
    q = recuo.Policy().with_method_idempotent("GET", False)
    assert recuo.classify(500, method="GET", policy=q).reason == "not_idempotent"
    assert recuo.classify(500, method="GET", idempotency_key=True, policy=q).verdict == "retry"


def test_the_403_quota_rule() -> None:
    spent = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"}
    assert recuo.classify(403, headers=spent, now_ms=0).reason == "rate_limited"
    p = recuo.Policy().with_quota_403_as_rate_limit(False)
    assert not p.quota_403_as_rate_limit
    assert recuo.classify(403, headers=spent, now_ms=0, policy=p).reason == "permanent"
    assert p.with_quota_403_as_rate_limit(True) == recuo.Policy()


def test_with_methods_answer_new_policies_and_keep_the_rest() -> None:
    p = recuo.Policy(max_attempts=3, deadline=10)
    q = p.with_status_retry(408, "always")
    assert q is not p and p.status_retry(408) == "never"
    assert (q.max_attempts, q.deadline) == (3, 10.0)
    assert q.with_status_retry(408, "never") == p


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda p: p.with_status_retry(200, "always"), ValueError),
        (lambda p: p.with_status_retry(399, "never"), ValueError),
        (lambda p: p.with_status_retry(600, "always"), ValueError),
        (lambda p: p.with_status_retry(-1, "always"), ValueError),
        (lambda p: p.with_status_retry(2**70, "always"), ValueError),
        (lambda p: p.with_status_retry(408, "sometimes"), ValueError),
        (lambda p: p.with_status_retry(408, None), TypeError),
        (lambda p: p.with_status_retry("408", "always"), TypeError),
        (lambda p: p.with_status_retry(True, "always"), TypeError),
        (lambda p: p.status_retry(302), ValueError),
        (lambda p: p.with_transport_retry("dns", "always"), ValueError),
        (lambda p: p.with_transport_retry(None, "always"), TypeError),
        (lambda p: p.transport_retry("TLS"), ValueError),
        (lambda p: p.with_method_idempotent("BREW", True), ValueError),
        (lambda p: p.with_method_idempotent("BREW", False), ValueError),
        (lambda p: p.with_method_idempotent("GET", 1), TypeError),
        (lambda p: p.method_idempotent(b"GET"), TypeError),
        (lambda p: p.with_quota_403_as_rate_limit(None), TypeError),
    ],
)
def test_bad_rules_are_refused(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call(recuo.Policy())
