"""Redaction (SPEC §7): every case of tests/vectors/redaction.json, named by case, through
``recuo.redact_url``, ``recuo.redact_url_detailed``, ``recuo.redact_headers`` and an attempt
record built from them; then the shapes headers come in (mapping, pairs, bytes, odd casing,
``items()``), text that is not valid Unicode, and inputs that must never raise."""

from __future__ import annotations

import http.client
import io
import random
from typing import Any

import pytest

import recuo
from conftest import vectors

# For the calls the stubs refuse, made anyway to check the runtime refuses them too.
untyped: Any = recuo

CASES = vectors("redaction.json")["cases"]


def test_the_corpus_is_large_and_full_of_secrets() -> None:
    assert len(CASES) >= 40
    assert sum(len(c["secrets"]) for c in CASES) >= 50
    assert len({c["name"] for c in CASES}) == len(CASES)


def _headers(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in case["headers"]]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_redaction_case(case: dict[str, Any]) -> None:
    url: str = case["url"]
    headers = _headers(case)
    redacted = recuo.redact_url(url)
    detailed = recuo.redact_url_detailed(url)
    redacted_headers = recuo.redact_headers(headers)
    record = recuo.AttemptRecord(
        0, 1, "GET", url, status=503, headers=headers, delay_ms=10, decision="retry", reason="unavailable"
    ).to_json()

    assert detailed.url == redacted
    assert detailed.malformed is case["malformed"]
    if case["redacted_url"] is not None:
        assert redacted == case["redacted_url"]
    shown = redacted + "".join(f"\n{name}: {value}" for name, value in redacted_headers)
    for secret in case["secrets"]:
        assert secret not in shown, f"{secret!r} survives in {shown}"
        assert secret not in record, f"{secret!r} survives in {record}"
    for keep in case["keep"]:
        assert keep in shown, f"{keep!r} lost from {shown}"
    assert '"status":503' in record
    # Names stay as given, in order; only values change.
    assert [name for name, _ in redacted_headers] == [name for name, _ in headers]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_redaction_case_given_as_bytes(case: dict[str, Any]) -> None:
    # The same case handed over as bytes answers alike.
    url: str = case["url"]
    as_bytes = [(name.encode(), value.encode()) for name, value in _headers(case)]
    assert recuo.redact_url(url.encode()) == recuo.redact_url(url)
    assert recuo.redact_url_detailed(url.encode()) == recuo.redact_url_detailed(url)
    assert recuo.redact_headers(as_bytes) == recuo.redact_headers(_headers(case))


def test_redact_url_examples() -> None:
    assert (
        recuo.redact_url("https://alice:s3cret@api.example.com/v1/items?api_key=abc123&page=2")
        == "https://api.example.com/v1/items?api_key=[redacted]&page=2"
    )
    assert recuo.redact_url("https://h.io/cpf/123.456.789-09") == "https://h.io/cpf/[number]"
    assert recuo.redact_url("/users/ana@example.com") == "/users/[email]"
    assert recuo.redact_url("") == ""


def test_redacted_url_object() -> None:
    ok = recuo.redact_url_detailed("https://u:p@h.io/a?token=t")
    assert (ok.url, ok.malformed) == ("https://h.io/a?token=[redacted]", False)
    assert repr(ok) == "RedactedUrl(url='https://h.io/a?token=[redacted]', malformed=False)"
    bad = recuo.redact_url_detailed("ht!tp://user:pw@host/a b?token=x")
    assert bad.malformed is True
    assert "pw" not in bad.url and "token=x" not in bad.url
    assert ok == recuo.redact_url_detailed("https://v:q@h.io/a?token=other")
    assert hash(ok) == hash(recuo.redact_url_detailed("https://h.io/a?token=[redacted]"))
    assert ok != bad


SECRET_HEADERS = {
    "Authorization": "Bearer s3cr3t",
    "Cookie": "sid=abc",
    "X-Api-Key": "k-123",
    "Accept": "application/json",
    "Location": "https://u:p@h.io/next?token=z",
}
EXPECTED = [
    ("Authorization", "[redacted]"),
    ("Cookie", "[redacted]"),
    ("X-Api-Key", "[redacted]"),
    ("Accept", "application/json"),
    ("Location", "https://h.io/next?token=[redacted]"),
]


class _Items:
    """A header object with ``items()`` only, as many HTTP libraries have."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def items(self) -> list[tuple[str, str]]:
        return list(self.pairs)


@pytest.mark.parametrize(
    "headers",
    [
        SECRET_HEADERS,
        list(SECRET_HEADERS.items()),
        tuple(SECRET_HEADERS.items()),
        [[name, value] for name, value in SECRET_HEADERS.items()],
        {name.encode(): value.encode() for name, value in SECRET_HEADERS.items()},
        [(name, value.encode()) for name, value in SECRET_HEADERS.items()],
        _Items(list(SECRET_HEADERS.items())),
        (pair for pair in SECRET_HEADERS.items()),
    ],
    ids=["dict", "pairs", "tuple", "lists", "bytes", "mixed", "items", "generator"],
)
def test_headers_in_every_shape(headers: Any) -> None:
    assert recuo.redact_headers(headers) == EXPECTED


def test_http_message_headers_keep_duplicates() -> None:
    message = http.client.parse_headers(
        io.BytesIO(b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Request-Id: req-9\r\n\r\n")
    )
    assert recuo.redact_headers(message) == [
        ("Set-Cookie", "[redacted]"),
        ("Set-Cookie", "[redacted]"),
        ("X-Request-Id", "req-9"),
    ]


@pytest.mark.parametrize("name", ["authorization", "AUTHORIZATION", "aUtHoRiZaTiOn", " Authorization ", "x-API-key"])
def test_odd_casing_is_still_a_secret(name: str) -> None:
    [(kept, value)] = recuo.redact_headers([(name, "Basic dXNlcjpwYXNz")])
    assert (kept, value) == (name, "[redacted]")


def test_no_headers() -> None:
    assert recuo.redact_headers({}) == []
    assert recuo.redact_headers([]) == []
    assert recuo.redact_headers(None) == []


def test_bytes_that_are_not_utf8_are_never_an_error_nor_raw() -> None:
    # Header bytes: UTF-8 when valid, else ISO-8859-1 (one character per byte).
    assert recuo.redact_headers([(b"X-Note", "José".encode())]) == [("X-Note", "José")]
    assert recuo.redact_headers([(b"X-Note", b"caf\xe9")]) == [("X-Note", "café")]
    assert recuo.redact_headers([(b"Authorization", b"\xff\xfe secret")]) == [("Authorization", "[redacted]")]
    # URL bytes: invalid UTF-8 is percent-encoded.
    assert recuo.redact_url(b"https://h.io/caf\xe9?q=1") == "https://h.io/caf%E9?q=1"
    assert recuo.redact_url("https://h.io/é".encode()) == "https://h.io/é"
    assert recuo.redact_url(b"https://u:p@h.io/\xff\xfe?token=\xff") == "https://h.io/%FF%FE?token=[redacted]"
    # A str with lone surrogates (os.fsdecode of bad bytes) is read with U+FFFD in their place.
    url = recuo.redact_url("https://h.io/\udcff?token=x")
    assert url.startswith("https://h.io/\ufffd") and url.endswith("?token=[redacted]")
    url.encode("utf-8")  # valid text: no surrogate left
    [(_, value)] = recuo.redact_headers([("X-Odd", "a\udcffb")])
    assert value.startswith("a\ufffd") and value.endswith("b")
    value.encode("utf-8")


def test_redaction_never_raises_on_junk() -> None:
    rng = random.Random(6)
    alphabet = "ab:/@?#&;=%.-_ 0123456789\x00\n\t\u00e9\u2028\U0001f600[]"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        out = recuo.redact_url_detailed(text)
        assert isinstance(out.url, str) and isinstance(out.malformed, bool)
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 30)))
        assert isinstance(recuo.redact_url(raw), str)
        [(name, value)] = recuo.redact_headers([(raw, text)])
        assert isinstance(name, str) and isinstance(value, str)
    for junk in ["", "@", "://", "?", "#", "%", "%4", "a@b", "http://", "http://@", "\x00"]:
        recuo.redact_url(junk)
    assert recuo.redact_url_detailed("http://").malformed


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: untyped.redact_url(None), "url must be str or bytes, not NoneType"),
        (lambda: untyped.redact_url(42), "url must be str or bytes, not int"),
        (lambda: untyped.redact_url_detailed(bytearray(b"x")), "url must be str or bytes, not bytearray"),
        (lambda: untyped.redact_headers("Authorization: x"), "headers must be a mapping"),
        (lambda: untyped.redact_headers(b"Authorization: x"), "headers must be a mapping"),
        (lambda: untyped.redact_headers(42), "headers must be a mapping"),
        (lambda: untyped.redact_headers([("a",)]), "each header must be a (name, value) pair"),
        (lambda: untyped.redact_headers({"a": 1}), "a header value must be str or bytes"),
        (lambda: untyped.redact_headers({"a": ["x", "y"]}), "a header value must be str or bytes"),
    ],
)
def test_wrong_types_are_type_errors(call: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
