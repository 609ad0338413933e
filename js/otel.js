// recuo/otel: recuo's retries in OpenTelemetry — spans and metrics from every operation's
// records, through @opentelemetry/api (an optional peer dependency: your SDK and exporters).
//
// Each operation is an INTERNAL span `recuo.operation`; each physical attempt a span under it
// (a CLIENT span named by the method, `http.request.resend_count` from the second attempt on),
// made once the attempt's outcome is known, with its own start and end times, under the span
// active at that moment. Metrics go to the meter `recuo`. What a record means — the span's
// name and attributes, the points — is the core's, the same in every language; this module
// only hands it to OpenTelemetry.

import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

import recuo from './index.js';

/** Operations whose result has not come yet, at most: the oldest is ended past it. */
const MOST_OPEN = 10_000;

/** Spans and metric points from each record's telemetry. */
class Telemetry {
  constructor({ tracerProvider, meterProvider, attemptSpans = true } = {}) {
    this.tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer('recuo', recuo.version);
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('recuo', recuo.version);
    const { instruments, buckets_s: buckets } = recuo._instruments();
    this.instruments = new Map(instruments.map((i) => {
      const options = { unit: i.unit, description: i.description };
      return [i.otel_name, i.kind === 'counter'
        ? { add: meter.createCounter(i.otel_name, options) }
        : { record: meter.createHistogram(i.otel_name, { ...options, advice: { explicitBucketBoundaries: buckets } }) }];
    }));
    this.attemptSpans = attemptSpans;
    this.open = new Map();
  }

  /** One record's telemetry: `{ operation, span, points }`. */
  take(t) {
    for (const p of t.points) {
      const i = this.instruments.get(p.instrument);
      if (i.add) i.add.add(p.value, p.attributes);
      else i.record.record(p.value, p.attributes);
    }
    const { span } = t;
    if (span.name === 'recuo.operation') {
      const parent = this.open.get(t.operation) ?? this.tracer.startSpan('recuo.operation', { kind: SpanKind.INTERNAL, startTime: span.start_unix_ms });
      this.open.delete(t.operation);
      finish(parent, span);
      return;
    }
    if (!this.attemptSpans) return;
    const parent = this.operation(t.operation, span.start_unix_ms);
    const child = this.tracer.startSpan(span.name, {
      kind: span.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
      startTime: span.start_unix_ms,
    }, trace.setSpan(context.active(), parent));
    finish(child, span);
  }

  /** The span of `operation`, started at its first attempt under the span active now. */
  operation(operation, startMs) {
    let span = this.open.get(operation);
    if (!span) {
      span = this.tracer.startSpan('recuo.operation', { kind: SpanKind.INTERNAL, startTime: startMs });
      this.open.set(operation, span);
      if (this.open.size > MOST_OPEN) {
        const [oldest, s] = this.open.entries().next().value;
        this.open.delete(oldest);
        s.end();
      }
    }
    return span;
  }
}

function finish(span, data) {
  span.setAttributes(data.attributes);
  if (data.error) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(data.end_unix_ms);
}

/**
 * Sends every operation's spans and metrics to OpenTelemetry, from now on: to
 * `tracerProvider` and `meterProvider` (default: the global ones). With `attemptSpans: false`,
 * the operation's span and the metrics only. Called again, it replaces the providers.
 */
export function instrument(options = {}) {
  const t = new Telemetry(options);
  recuo._setTelemetry((data) => t.take(data));
}

/** Stops sending spans and metrics. */
export function uninstrument() {
  recuo._setTelemetry(null);
}
