// recuo/otel where the portable tests run (a browser page, a Worker): the spans and the
// metrics of a task retried twice, through the SDK's in-memory exporters. (The Node tests,
// test/otel.test.js, add a fetch under a span of the caller's and the vector.)

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

import { comRetry } from '../../index.js';
import { instrument, uninstrument } from '../../otel.js';

test('recuo/otel: a task retried twice is one operation span around three attempt spans, two delays', async () => {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  instrument({ tracerProvider, meterProvider });
  let calls = 0;
  try {
    const value = await comRetry(async () => {
      calls += 1;
      if (calls < 3) throw new Error('down');
      return 'ok';
    }, { sleep: async () => {} });
    assert.equal(value, 'ok');
  } finally {
    uninstrument();
  }
  const finished = spans.getFinishedSpans();
  assert.deepEqual(finished.map((s) => s.name), ['recuo.attempt', 'recuo.attempt', 'recuo.attempt', 'recuo.operation']);
  const op = finished[3];
  assert.ok(finished.slice(0, 3).every((s) => s.parentSpanContext?.spanId === op.spanContext().spanId));
  assert.deepEqual(finished.slice(0, 3).map((s) => s.attributes['http.request.resend_count']), [undefined, 1, 2]);
  assert.equal(op.attributes['recuo.attempts'], 3);
  await reader.forceFlush();
  const metrics = exporter.getMetrics().flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics));
  const delays = metrics.find((m) => m.descriptor.name === 'recuo.retry.delay');
  assert.deepEqual(delays.dataPoints.map((p) => p.value.count), [2]);
});
