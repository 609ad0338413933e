"""A policy as one plain value: ``recuo.Policy.from_dict``, ``Policy.to_dict`` and pickling,
against the shared vectors of tests/vectors/policies.json."""

from __future__ import annotations

import copy
import json
import pickle
import types
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import recuo
from conftest import vectors

POLICIES = vectors("policies.json")
VALID = POLICIES["valid"]
INVALID = POLICIES["invalid"]
PRESETS = POLICIES["presets"]

# The core's stable numbers for the names the vector uses.
CODES = {
    "zero_attempts": 1,
    "cap_below_base": 5,
    "invalid_header_name": 6,
    "status_out_of_range": 7,
    "unknown_name": 8,
    "invalid_value": 9,
}


def exact(value: Any) -> str:
    """``value`` as sorted JSON: equal only when keys, values and types (int, not float or
    bool) all agree."""
    return json.dumps(value, sort_keys=True)


def refused(value: Any) -> recuo.ConfigError:
    with pytest.raises(recuo.ConfigError) as caught:
        recuo.Policy.from_dict(value)
    return caught.value


# --- the shared vectors ------------------------------------------------------------------


def test_the_vector_has_cases() -> None:
    assert (len(VALID), len(INVALID)) == (8, 21)


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_a_valid_value_is_written_back_as_expected(case: dict[str, Any]) -> None:
    policy = recuo.Policy.from_dict(case["value"])
    assert exact(policy.to_dict()) == exact(case["expect"])
    assert recuo.Policy.from_dict(case["expect"]) == policy


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_an_invalid_value_is_refused_with_its_name(case: dict[str, Any]) -> None:
    error = refused(case["value"])
    assert error.name == case["error"]
    assert error.code == CODES[case["error"]]


@pytest.mark.parametrize("case", PRESETS, ids=[c["name"] for c in PRESETS])
def test_each_preset_writes_its_plain_form(case: dict[str, Any]) -> None:
    preset = getattr(recuo.Policy, case["name"])
    assert exact(preset().to_dict()) == exact(case["expect"])


# --- what to_dict answers ----------------------------------------------------------------


def test_guide_b_written_out() -> None:
    assert exact(recuo.Policy.guide_b().to_dict()) == exact(
        {
            "max_attempts": 5,
            "base_ms": 1000,
            "cap_ms": 8000,
            "jitter": "full",
            "deadline_ms": 30000,
            "spread_ms": None,
            "idempotency_header": "Idempotency-Key",
            "use_date_header": False,
            "server_honours_keys": False,
            "quota_403_as_rate_limit": True,
            "status_retry": {},
            "transport_retry": {},
            "idempotent_methods": {},
        }
    )


def test_rule_changes_are_written_as_the_core_writes_them() -> None:
    p = (
        recuo.Policy(max_attempts=3, base=0.05, cap=2, jitter="equal", spread=0.25, server_honours_keys=True)
        .with_status_retry(418, "always")
        .with_status_retry(503, "never")
        .with_transport_retry("connect", "never")
        .with_method_idempotent("post", True)
        .with_method_idempotent("DELETE", False)
        .with_quota_403_as_rate_limit(False)
    )
    d = p.to_dict()
    assert (d["max_attempts"], d["base_ms"], d["cap_ms"], d["jitter"]) == (3, 50, 2000, "equal")
    assert (d["deadline_ms"], d["spread_ms"], d["server_honours_keys"]) == (None, 250, True)
    assert d["quota_403_as_rate_limit"] is False
    assert d["status_retry"] == {"418": "always", "503": "never"}
    assert d["transport_retry"] == {"connect": "never"}
    assert d["idempotent_methods"] == {"DELETE": False, "POST": True}
    assert recuo.Policy.from_dict(d) == p


def test_to_dict_answers_a_new_dict_each_time() -> None:
    p = recuo.Policy.guide_a()
    d = p.to_dict()
    d["max_attempts"] = 9
    assert p.to_dict()["max_attempts"] == 5


# --- what from_dict reads (Python's side of the conversion) --------------------------------


def test_a_status_may_be_an_int_key() -> None:
    p = recuo.Policy.from_dict({"status_retry": {418: "always"}})
    assert p == recuo.Policy().with_status_retry(418, "always")
    assert p.to_dict()["status_retry"] == {"418": "always"}


def test_any_mapping_is_read() -> None:
    p = recuo.Policy.from_dict(types.MappingProxyType({"max_attempts": 3, "deadline_ms": 1500}))
    assert p == recuo.Policy(max_attempts=3, deadline=1.5)


@pytest.mark.parametrize("value", [None, [("max_attempts", 3)], '{"max_attempts": 3}', 3, recuo.Policy()])
def test_a_value_that_is_not_a_mapping_is_a_type_error(value: Any) -> None:
    with pytest.raises(TypeError) as caught:
        recuo.Policy.from_dict(value)
    assert str(caught.value) == f"value must be a mapping (a dict), not {type(value).__name__}"


@pytest.mark.parametrize(
    "value",
    [
        {"base_ms": float("nan")},
        {"cap_ms": float("inf")},
        {"base_ms": 200.0},
        {"max_attempts": True},
        {"base_ms": 2**64},
        {"status_retry": {"418": {"always"}}},
        {"status_retry": ["418"]},
        {"idempotent_methods": {("POST",): True}},
        {1: 2},
    ],
)
def test_data_that_is_not_a_policy_value_is_invalid_value(value: Any) -> None:
    error = refused(value)
    assert (error.code, error.name) == (9, "invalid_value")


def test_invalid_value_says_why_in_the_callers_terms() -> None:
    message = str(refused({"maxAttempts": 3}))
    assert message.startswith("not a policy value: an object of the known fields with the right types (")
    assert "unknown field `maxAttempts`" in message
    assert "line 1" not in message  # the JSON text is recuo's, not the caller's
    assert not hasattr(refused({"maxAttempts": 3}), "__notes__")
    assert "not JSON compliant" in str(refused({"base_ms": float("nan")}))


def test_unknown_name_says_what() -> None:
    error = refused({"jitter": "wild"})
    assert (error.code, error.name, str(error)) == (8, "unknown_name", "unknown jitter name")


def test_the_builders_errors_keep_their_messages() -> None:
    error = refused({"base_ms": 2000, "cap_ms": 1000})
    assert str(error) == "the maximum (1000 ms) must not be below the base (2000 ms)"


def test_an_error_inside_the_mapping_is_raised_as_it_is() -> None:
    class Broken(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise LookupError("broken")

        def __iter__(self) -> Iterator[str]:
            return iter(["max_attempts"])

        def __len__(self) -> int:
            return 1

    with pytest.raises(LookupError, match="broken"):
        recuo.Policy.from_dict(Broken())


# --- pickling and copying ------------------------------------------------------------------

POLICIES_TO_PICKLE = [
    recuo.Policy.guide_a(),
    recuo.Policy.guide_b(),
    recuo.Policy.adapters(),
    recuo.Policy(max_attempts=2, jitter="none", spread=0, idempotency_header="X-Key", server_honours_keys=True)
    .with_status_retry(404, "if_idempotent")
    .with_transport_retry("tls", "always")
    .with_method_idempotent("PATCH", True)
    .with_quota_403_as_rate_limit(False),
]


@pytest.mark.parametrize("policy", POLICIES_TO_PICKLE, ids=["guide_a", "guide_b", "adapters", "rule_changes"])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_policy_pickles(policy: recuo.Policy, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(policy, protocol))
    assert type(back) is recuo.Policy
    assert back == policy
    assert hash(back) == hash(policy)
    assert repr(back) == repr(policy)


def test_reduce_is_from_dict_of_to_dict() -> None:
    p = POLICIES_TO_PICKLE[3]
    assert p.__reduce__() == (recuo.Policy.from_dict, (p.to_dict(),))


def test_copies_are_the_policy_itself() -> None:
    p = POLICIES_TO_PICKLE[3]
    assert copy.copy(p) is p
    assert copy.deepcopy(p) is p
    assert copy.deepcopy([p])[0] is p
