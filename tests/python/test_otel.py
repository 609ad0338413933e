"""recuo.otel: tests/vectors/telemetry.json through the binding, then real loops seen by
OpenTelemetry's SDK (in-memory span exporter and metric reader) — a request retried twice after
503s, through requests, httpx and aiohttp (each with its own instrumentation) and through
``recuo.retry`` — and the Prometheus text of the same metrics through the OTel Prometheus
exporter."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
import requests
from opentelemetry import trace
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import recuo
import recuo.aiohttp
import recuo.httpx
import recuo.otel
import recuo.requests
from conftest import vectors
from recuo._recuo import _instruments, _telemetry_of
from serving import scripted_serve

DOC = vectors("telemetry.json")
# Three answers for each client: 503 twice (Retry-After 0), then 200.
SCRIPT = {"requests": [{"id": "twice", "script": [
    {"status": 503, "headers": {"Retry-After": "0"}},
    {"status": 503, "headers": {"Retry-After": "0"}},
    {"status": 200},
]}]}


@pytest.mark.parametrize("case", DOC["cases"], ids=lambda c: str(c["name"]))
def test_each_record_means_the_cores_span_and_points(case: dict[str, Any]) -> None:
    got = _telemetry_of(case["record"])
    assert (got["span"], got["points"]) == (case["span"], case["points"])


def test_the_instruments_are_the_cores() -> None:
    listed, buckets = _instruments()
    assert [{k: i[k] for k in ("otel_name", "unit", "kind", "prometheus")} for i in listed] == DOC["instruments"]
    assert buckets == DOC["histogram_buckets_s"]


def test_a_record_that_is_none_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown reason"):
        _telemetry_of({"type": "result", "start_unix_ms": 0, "method": "", "url": "", "attempts": 1, "reason": "tired", "total_ms": 0})


class Seen:
    """An SDK tracer and meter provider, in memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def points(self) -> dict[str, list[Any]]:
        """Each metric's data points, by name."""
        out: dict[str, list[Any]] = {}
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    out[m.name] = list(m.data.data_points)
        return out


@pytest.fixture
def seen() -> Iterator[Seen]:
    s = Seen()
    recuo.otel.instrument(s.tracer_provider, s.meter_provider)
    try:
        yield s
    finally:
        recuo.otel.uninstrument()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    script = tmp_path_factory.mktemp("otel") / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with scripted_serve(script) as url:
        yield url


def attempts_under(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def check_retried_twice(seen: Seen, url: str) -> ReadableSpan:
    """Three attempt spans under one operation span, resend counts 1 and 2 on the last two;
    two delays, three attempts counted; answers the operation span."""
    spans = seen.finished()
    operation = [s for s in spans if s.name == "recuo.operation"]
    assert len(operation) == 1, [s.name for s in spans]
    op = operation[0]
    assert op.kind == trace.SpanKind.INTERNAL
    assert op.attributes is not None and op.attributes["recuo.attempts"] == 3
    attempts = attempts_under(spans, op)
    assert [s.name for s in attempts] == ["GET", "GET", "GET"]
    assert all(s.kind == trace.SpanKind.CLIENT for s in attempts)
    assert [(s.attributes or {}).get("http.request.resend_count") for s in attempts] == [None, 1, 2]
    assert [(s.attributes or {})["http.response.status_code"] for s in attempts] == [503, 503, 200]
    assert [(s.attributes or {})["url.full"] for s in attempts] == [url] * 3
    assert [s.status.status_code for s in attempts] == [trace.StatusCode.ERROR, trace.StatusCode.ERROR, trace.StatusCode.UNSET]
    assert all(s.start_time is not None and op.start_time is not None and s.start_time >= op.start_time for s in attempts)
    points = seen.points()
    delays = points["recuo.retry.delay"]
    assert [(dict(p.attributes), p.count) for p in delays] == [({"recuo.reason": "unavailable", "recuo.wait.source": "server"}, 2)]
    counted = sorted((dict(p.attributes)["recuo.outcome"], p.value) for p in points["recuo.attempts"])
    assert counted == [("200", 1), ("503", 2)]
    return op


def test_requests_instrumentation_wraps_recuos_spans(seen: Seen, server: str) -> None:
    RequestsInstrumentor().instrument(tracer_provider=seen.tracer_provider)
    try:
        session = requests.Session()
        session.mount("http://", recuo.requests.RetryAdapter())
        url = f"{server}/py-otel-requests/twice"
        assert session.get(url, timeout=10).status_code == 200
    finally:
        RequestsInstrumentor().uninstrument()
    op = check_retried_twice(seen, url)
    outer = [s for s in seen.finished() if s.kind == trace.SpanKind.CLIENT and s.parent is None]
    assert len(outer) == 1, "requests' one span for the call"
    assert op.parent is not None and op.parent.span_id == outer[0].context.span_id


def test_aiohttp_instrumentation_wraps_recuos_spans(seen: Seen, server: str) -> None:
    AioHttpClientInstrumentor().instrument(tracer_provider=seen.tracer_provider)
    url = f"{server}/py-otel-aiohttp/twice"

    async def main() -> int:
        async with aiohttp.ClientSession(middlewares=(recuo.aiohttp.RetryMiddleware(),)) as session:
            async with session.get(url) as response:
                return response.status

    try:
        assert asyncio.run(main()) == 200
    finally:
        AioHttpClientInstrumentor().uninstrument()
    op = check_retried_twice(seen, url)
    outer = [s for s in seen.finished() if s.kind == trace.SpanKind.CLIENT and s.parent is None]
    assert len(outer) == 1, "aiohttp's one span for the call"
    assert op.parent is not None and op.parent.span_id == outer[0].context.span_id


def test_plain_httpx_gets_recuos_attempt_spans(seen: Seen, server: str) -> None:
    url = f"{server}/py-otel-httpx/twice"
    with httpx.Client(transport=recuo.httpx.RetryTransport()) as client:
        assert client.get(url).status_code == 200
    check_retried_twice(seen, url)


def test_httpx_instrumentations_spans_are_the_attempts_marked_with_the_resend_count(server: str) -> None:
    s = Seen()
    recuo.otel.instrument(s.tracer_provider, s.meter_provider, attempt_spans=False)
    HTTPXClientInstrumentor().instrument(tracer_provider=s.tracer_provider, request_hook=recuo.otel.httpx_request_hook)
    url = f"{server}/py-otel-httpx-hook/twice"
    try:
        with httpx.Client(transport=recuo.httpx.RetryTransport()) as client:
            assert client.get(url).status_code == 200
    finally:
        HTTPXClientInstrumentor().uninstrument()
        recuo.otel.uninstrument()
    spans = s.finished()
    httpx_spans = [x for x in spans if x.name == "GET"]
    assert [(x.attributes or {}).get("http.request.resend_count") for x in httpx_spans] == [None, 1, 2]
    assert [(x.attributes or {}).get("recuo.attempt") for x in httpx_spans] == [1, 2, 3]
    assert [x.name for x in spans].count("recuo.operation") == 1
    assert [p.count for p in s.points()["recuo.retry.delay"]] == [2]


def test_a_task_retried_by_recuo_retry_is_internal_spans(seen: Seen) -> None:
    calls = []

    @recuo.retry(policy=recuo.Policy(max_attempts=3), sleep=lambda seconds: None)
    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("down")
        return "ok"

    assert flaky() == "ok"
    spans = seen.finished()
    assert [x.name for x in spans] == ["recuo.attempt", "recuo.attempt", "recuo.attempt", "recuo.operation"]
    assert [(x.attributes or {}).get("http.request.resend_count") for x in spans[:3]] == [None, 1, 2]
    assert [p.count for p in seen.points()["recuo.retry.delay"]] == [2]


def test_a_first_success_is_seen_too_sync_and_async(seen: Seen) -> None:
    @recuo.retry
    def once() -> int:
        return 1

    @recuo.retry
    async def once_async() -> int:
        return 2

    assert once() == 1
    assert asyncio.run(once_async()) == 2
    names = [x.name for x in seen.finished()]
    assert names == ["recuo.attempt", "recuo.operation"] * 2
    assert sorted(p.value for p in seen.points()["recuo.attempts"]) == [2]


def test_nothing_is_sent_after_uninstrument(server: str) -> None:
    s = Seen()
    recuo.otel.instrument(s.tracer_provider, s.meter_provider)
    recuo.otel.uninstrument()
    with httpx.Client(transport=recuo.httpx.RetryTransport()) as client:
        client.get(f"{server}/py-otel-off/twice")
    assert s.finished() == []


def series(text: str, name: str, **labels: str) -> float:
    """The value of the series ``name`` whose labels include ``labels`` (the exporter adds
    its own ``otel_scope_*`` labels), in a Prometheus text."""
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} {labels} in\n{text}")


def test_the_prometheus_exporter_shows_the_cores_prometheus_names(server: str) -> None:
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import generate_latest
    from prometheus_client.core import REGISTRY

    reader = PrometheusMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    recuo.otel.instrument(TracerProvider(), provider)
    try:
        with httpx.Client(transport=recuo.httpx.RetryTransport()) as client:
            assert client.get(f"{server}/py-otel-prometheus/twice").status_code == 200
        text = generate_latest(REGISTRY).decode()
    finally:
        recuo.otel.uninstrument()
        provider.shutdown()
    for i in DOC["instruments"][:2]:
        assert f"# TYPE {i['prometheus']} {i['kind']}" in text, text
    assert series(text, "recuo_attempts_total", recuo_outcome="503", recuo_reason="unavailable") == 2
    assert series(text, "recuo_attempts_total", recuo_outcome="200", recuo_reason="success") == 1
    assert series(text, "recuo_retry_delay_seconds_count", recuo_reason="unavailable", recuo_wait_source="server") == 2
