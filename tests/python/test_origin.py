"""Who answered (SPEC §7): every case of tests/vectors/origin.json, named by case; then one
test per CDN and proxy signal the core names, the negatives, the content type, and the shapes
headers come in."""

from __future__ import annotations

from typing import Any

import pytest

import recuo
from conftest import vectors

# For the calls the stubs refuse, made anyway to check the runtime refuses them too.
untyped: Any = recuo

CASES = vectors("origin.json")["cases"]


def test_the_vector_file_covers_every_origin() -> None:
    assert len(CASES) >= 15
    assert {c["origin"] for c in CASES} == {"api", "proxy", "cdn", "unknown"}
    assert {c["confidence"] for c in CASES} == {"low", "medium", "high"}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_origin_case(case: dict[str, Any]) -> None:
    headers = [(name, value) for name, value in case["headers"]]
    answer = recuo.who_answered(headers, case["expected_content_type"])
    assert (answer.origin, answer.confidence) == (case["origin"], case["confidence"]), answer.evidence
    for part in case["evidence_contains"]:
        assert any(part in line for line in answer.evidence), f"{part!r} not in {answer.evidence}"
    for part in case.get("evidence_excludes", []):
        assert not any(part in line for line in answer.evidence), f"{part!r} in {answer.evidence}"
    # The same case as a dict, as bytes, and with the content type by keyword, answers alike.
    as_bytes = [(name.encode(), value.encode()) for name, value in headers]
    again = recuo.who_answered(as_bytes, expected_content_type=case["expected_content_type"])
    assert again == answer


# One signal each, as a CDN's edge adds it to whatever the API answered: a clear signal is
# medium confidence, never high on its own.
CDN_SIGNALS = [
    ("Cloudflare", {"CF-Ray": "8a1b2c3d4e5f-GRU"}, "cf-ray → Cloudflare"),
    ("Cloudflare", {"CF-Cache-Status": "HIT"}, "cf-cache-status → Cloudflare"),
    ("CloudFront", {"X-Amz-Cf-Id": "nC3Nj0Jw=="}, "x-amz-cf-id → CloudFront"),
    ("CloudFront", {"X-Amz-Cf-Pop": "GRU1-C1"}, "x-amz-cf-pop → CloudFront"),
    ("CloudFront", {"Via": "1.1 abc.cloudfront.net (CloudFront)"}, "→ CloudFront"),
    ("Fastly", {"X-Served-By": "cache-gru-sbgr1234-GRU"}, "→ Fastly"),
    ("Fastly", {"X-Fastly-Request-Id": "f1e2d3"}, "x-fastly-request-id → Fastly"),
    ("Fastly", {"Fastly-Debug-Digest": "abc"}, "fastly-debug-digest → Fastly"),
    ("Akamai", {"X-Akamai-Transformed": "9 - 0 pmb=mRUM,1"}, "x-akamai-transformed → Akamai"),
    ("Akamai", {"X-Akamai-Request-ID": "a1b2"}, "x-akamai-request-id → Akamai"),
    ("Akamai", {"Akamai-GRN": "0.1234.5678"}, "akamai-grn → Akamai"),
    ("Azure Front Door", {"X-Azure-Ref": "0abcDEF"}, "x-azure-ref → Azure Front Door"),
    ("Azure CDN", {"X-MSEdge-Ref": "Ref A: 123"}, "x-msedge-ref → Azure CDN"),
]


@pytest.mark.parametrize(
    ("vendor", "headers", "evidence"), CDN_SIGNALS, ids=[f"{v}:{next(iter(h))}" for v, h, _ in CDN_SIGNALS]
)
def test_each_cdn_signal(vendor: str, headers: dict[str, str], evidence: str) -> None:
    answer = recuo.who_answered(headers)
    assert (answer.origin, answer.confidence) == ("cdn", "medium")
    assert any(evidence in line and vendor in line for line in answer.evidence), answer.evidence
    # With an error page where JSON was expected, the page is the CDN's: high confidence.
    page = recuo.who_answered({**headers, "Content-Type": "text/html"}, "application/json")
    assert (page.origin, page.confidence) == ("cdn", "high")
    # With the API's own JSON, the answer merely passed through the CDN.
    passed = recuo.who_answered({**headers, "Content-Type": "application/json"}, "application/json")
    assert passed.origin == "api"


BRANDS = [
    ("cloudflare", "Cloudflare"),
    ("CloudFront", "CloudFront"),
    ("AkamaiGHost", "Akamai"),
    ("ECAcc (gru/1234)", "Edgecast"),
]


@pytest.mark.parametrize(("server", "vendor"), BRANDS, ids=[b for b, _ in BRANDS])
def test_a_brand_alone_is_weak(server: str, vendor: str) -> None:
    answer = recuo.who_answered({"Server": server})
    assert (answer.origin, answer.confidence) == ("cdn", "low")
    assert answer.evidence == (f"server: {server} → {vendor} (a brand, weak evidence)",)
    # Even with an HTML page where JSON was expected: never high on a brand alone.
    page = recuo.who_answered({"Server": server, "Content-Type": "text/html"}, "application/json")
    assert page.confidence != "high"


PROXIES = [
    ({"Via": "1.1 squid"}, "via: 1.1 squid → a proxy on the path"),
    ({"X-Served-By": "host-7"}, "x-served-by: host-7 → a proxy"),
    ({"Server": "nginx/1.25.3"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "envoy"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "HAProxy"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "Varnish"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "squid/5.7"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "Apache Traffic Server/9.2"}, "a proxy or gateway (weak evidence)"),
    ({"Server": "awselb/2.0"}, "a proxy or gateway (weak evidence)"),
]


@pytest.mark.parametrize(("headers", "evidence"), PROXIES, ids=[next(iter(h.values())) for h, _ in PROXIES])
def test_each_proxy_signal(headers: dict[str, str], evidence: str) -> None:
    answer = recuo.who_answered(headers)
    assert (answer.origin, answer.confidence) == ("proxy", "low")
    assert any(evidence in line for line in answer.evidence), answer.evidence
    page = recuo.who_answered({**headers, "Content-Type": "text/html"}, "application/json")
    assert (page.origin, page.confidence) == ("proxy", "medium")


def test_caches_on_the_path() -> None:
    hit = recuo.who_answered({"X-Cache": "HIT from edge"})
    assert (hit.origin, hit.confidence) == ("cdn", "low")
    miss = recuo.who_answered({"X-Cache": "MISS"})
    assert miss.origin == "unknown"
    assert miss.evidence == ("x-cache: MISS → a cache on the path",)
    varnish = recuo.who_answered({"Via": "1.1 varnish (Varnish/7.4)"})
    assert (varnish.origin, varnish.confidence) == ("cdn", "low")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        [],
        None,
        {"Server": "gunicorn"},
        {"Server": "Apache/2.4.57"},
        {"Content-Type": "text/html"},
        {"Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Content-Length": "12"},
        {"X-Powered-By": "Express"},
        # Names that merely look like a CDN's.
        {"X-CF-Ray-Like": "1"},
        {"X-Served-By-Nothing": "cache-1"},
    ],
    ids=lambda h: repr(h)[:40],
)
def test_negatives_point_nowhere(headers: Any) -> None:
    answer = recuo.who_answered(headers)
    assert (answer.origin, answer.confidence) == ("unknown", "low")


def test_the_api_by_its_own_headers() -> None:
    alone = recuo.who_answered({"X-Request-Id": "req-1"})
    assert (alone.origin, alone.confidence) == ("api", "low")
    assert alone.evidence == ("x-request-id → set by the API",)
    limits = recuo.who_answered({"X-Request-Id": "req-1", "X-RateLimit-Remaining": "3"})
    assert (limits.origin, limits.confidence) == ("api", "medium")
    json = recuo.who_answered({"Content-Type": "application/json; charset=utf-8"}, "application/json")
    assert json.origin == "api"
    assert json.evidence == ("content-type application/json as the API sends",)


def test_the_content_type_alone_does_not_name_a_culprit() -> None:
    html = recuo.who_answered({"Content-Type": "text/html"}, "application/json")
    assert (html.origin, html.confidence) == ("unknown", "low")
    assert html.evidence == ("content-type text/html, not the application/json the API sends",)
    assert recuo.who_answered({}, "application/json").evidence == ("no content-type",)


def test_odd_casing_and_shapes() -> None:
    expected = recuo.who_answered({"cf-ray": "x"})
    for headers in (
        {"CF-RAY": "x"},
        {"Cf-Ray": "x"},
        [("cF-rAy", "x")],
        {b"CF-Ray": b"x"},
        [(b"cf-ray", "x")],
    ):
        assert recuo.who_answered(headers) == expected


def test_the_answer_object() -> None:
    answer = recuo.who_answered({"CF-Ray": "8a1b", "Server": "cloudflare"})
    assert answer.evidence == ("cf-ray → Cloudflare", "server: cloudflare → Cloudflare (a brand, weak evidence)")
    assert repr(answer) == (
        "WhoAnswered(origin='cdn', evidence=('cf-ray → Cloudflare', "
        "'server: cloudflare → Cloudflare (a brand, weak evidence)'), confidence='medium')"
    )
    assert type(answer.evidence) is tuple  # immutable, as the answer is
    with pytest.raises(AttributeError):
        answer.origin = "api"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: untyped.who_answered("CF-Ray: x"), TypeError),
        (lambda: untyped.who_answered({"CF-Ray": 1}), TypeError),
        (lambda: untyped.who_answered({}, b"application/json"), TypeError),
        (lambda: untyped.who_answered({}, 1), TypeError),
    ],
)
def test_wrong_types(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()
