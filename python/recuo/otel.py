"""recuo's retries in OpenTelemetry: spans and metrics from every operation's records.

    import recuo.otel
    recuo.otel.instrument()        # the global tracer and meter providers

Each operation is an INTERNAL span ``recuo.operation``; each physical attempt a span of its
own under it — a CLIENT span named by the method (``GET``), with OpenTelemetry's HTTP client
attributes (``http.request.method``, ``url.full`` redacted, ``http.response.status_code``,
``error.type``) and ``http.request.resend_count`` from the second attempt on — and recuo's
``recuo.attempt``, ``recuo.decision``, ``recuo.reason``, ``recuo.wait.source``. The spans are
made from the records as the loop makes them, with the attempts' own start and end times, under
the span current at that moment: inside requests' or aiohttp's instrumentation, which wrap the
whole call, recuo's spans nest under theirs. httpx's instrumentation makes a span per attempt
already: pass ``httpx_request_hook`` to it and ``attempt_spans=False`` here, and its spans carry
the resend count.

Metrics go to the meter: ``recuo.attempts``, ``recuo.retry.delay`` (seconds),
``recuo.give_ups``, ``recuo.gate.wait`` (seconds), ``recuo.budget.refusals`` — a Prometheus
exporter shows them as ``recuo_attempts_total``, ``recuo_retry_delay_seconds`` and so on.

What a record means (the span's name and attributes, the points) is the core's, the same in
every language; this module only hands it to OpenTelemetry. Needs ``opentelemetry-api``
(``pip install recuo[otel]``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Optional

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from . import _http, _recuo

__all__ = ["httpx_request_hook", "instrument", "uninstrument"]

_VERSION = "0.1.0"
#: Operations whose result has not come yet, at most: the oldest is ended past it.
_MOST_OPEN = 10_000


def _ns(unix_ms: int) -> int:
    return int(unix_ms) * 1_000_000


class _Telemetry:
    """Spans and metric points from the records' telemetry, as the core maps each record."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, attempt_spans: bool) -> None:
        self.tracer = trace.get_tracer("recuo", _VERSION, tracer_provider=tracer_provider)
        meter = metrics.get_meter("recuo", _VERSION, meter_provider=meter_provider)
        listed, buckets = _recuo._instruments()
        self.instruments: dict[str, Any] = {}
        for i in listed:
            if i["kind"] == "counter":
                self.instruments[i["otel_name"]] = meter.create_counter(
                    i["otel_name"], unit=i["unit"], description=i["description"]
                )
            else:
                self.instruments[i["otel_name"]] = meter.create_histogram(
                    i["otel_name"],
                    unit=i["unit"],
                    description=i["description"],
                    explicit_bucket_boundaries_advisory=buckets,
                )
        self.attempt_spans = attempt_spans
        self.lock = threading.Lock()
        self.open: OrderedDict[int, Span] = OrderedDict()

    def __call__(self, t: dict[str, Any]) -> None:
        for p in t["points"]:
            instrument = self.instruments[p["instrument"]]
            if hasattr(instrument, "add"):
                instrument.add(p["value"], p["attributes"])
            else:
                instrument.record(p["value"], p["attributes"])
        span = t["span"]
        operation = int(t["operation"])
        if span["name"] == "recuo.operation":
            with self.lock:
                parent = self.open.pop(operation, None)
            if parent is None:
                parent = self.tracer.start_span(
                    "recuo.operation", kind=SpanKind.INTERNAL, start_time=_ns(span["start_unix_ms"])
                )
            self._finish(parent, span)
            return
        if not self.attempt_spans:
            return
        parent = self._operation(operation, span["start_unix_ms"])
        child = self.tracer.start_span(
            span["name"],
            context=trace.set_span_in_context(parent),
            kind=SpanKind.CLIENT if span["kind"] == "client" else SpanKind.INTERNAL,
            start_time=_ns(span["start_unix_ms"]),
        )
        self._finish(child, span)

    def _operation(self, operation: int, start_unix_ms: int) -> Span:
        """The span of `operation`, started at its first attempt under the span current now."""
        with self.lock:
            span = self.open.get(operation)
            if span is None:
                span = self.tracer.start_span(
                    "recuo.operation", kind=SpanKind.INTERNAL, start_time=_ns(start_unix_ms)
                )
                self.open[operation] = span
                if len(self.open) > _MOST_OPEN:
                    self.open.popitem(last=False)[1].end()
            return span

    @staticmethod
    def _finish(span: Span, data: dict[str, Any]) -> None:
        span.set_attributes(data["attributes"])
        if data["error"]:
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=_ns(data["end_unix_ms"]))


_installed: Optional[_Telemetry] = None


def instrument(
    tracer_provider: Any = None, meter_provider: Any = None, *, attempt_spans: bool = True
) -> None:
    """Sends every operation's spans and metrics to OpenTelemetry, from now on, in every thread:
    to ``tracer_provider`` and ``meter_provider`` (``None``: the global ones). With
    ``attempt_spans=False``, the operation's span and the metrics only (httpx's own
    instrumentation makes the attempts' spans: see ``httpx_request_hook``). The records
    logged to the ``recuo`` logger stay as the logger's level says. Called again, it replaces
    the providers."""
    global _installed
    _installed = _Telemetry(tracer_provider, meter_provider, attempt_spans)
    _recuo._set_telemetry(_installed)
    _http.TELEMETRY = True


def uninstrument() -> None:
    """Stops sending spans and metrics."""
    global _installed
    _recuo._set_telemetry(None)
    _http.TELEMETRY = False
    _installed = None


def httpx_request_hook(span: Span, request: Any) -> None:
    """For ``HTTPXClientInstrumentor().instrument(request_hook=recuo.otel.httpx_request_hook)``:
    marks httpx's span of each attempt made through ``recuo.httpx.RetryTransport`` with
    ``recuo.attempt`` (from 1) and, from the second attempt on, ``http.request.resend_count``."""
    extensions = getattr(request, "extensions", None) or {}
    number = extensions.get("recuo.attempt")
    if not isinstance(number, int):
        return  # not a request recuo is making
    span.set_attribute("recuo.attempt", number + 1)
    if number > 0:
        span.set_attribute("http.request.resend_count", number)
