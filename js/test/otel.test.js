// recuo/otel: tests/vectors/telemetry.json through the package, then real loops seen by
// OpenTelemetry's SDK (in-memory span exporter and metric reader): a fetch retried twice after
// 503s through `retry`, nested under a span of the caller's; a task through `comRetry`; a
// batch; and nothing sent after `uninstrument`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

import recuo, { comRetry, Policy, retry, runBatch } from '../index.js';
import { recuoApi } from '../lib/api.js';
import { instantiate } from '../lib/wasm.js';
import { instrument, uninstrument } from '../otel.js';
import { haveServe, RECUO_BIN, ROOT, serve } from './helpers.js';

const doc = JSON.parse(readFileSync(fileURLToPath(new URL('../../tests/vectors/telemetry.json', import.meta.url)), 'utf8'));
const skip = haveServe ? false : `no recuo command at ${RECUO_BIN} (cargo build -p recuo-cli)`;
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

// Reading a record's plain form is left out of the package's module (16 kB): the vector runs
// through the tests' build of the same module (make wasm writes both).
const testBuild = `${ROOT}target/wasm/recuo-test.wasm`;

test('telemetry.json: each record means the core\'s span and points', () => {
  const full = recuoApi(instantiate(new WebAssembly.Module(readFileSync(testBuild)), { path: testBuild }));
  assert.throws(() => recuo._telemetryOf(doc.cases[0].record), TypeError, 'the package\'s module has no record reader');
  assert.equal(doc.cases.length, 10);
  for (const c of doc.cases) {
    const got = full._telemetryOf(c.record);
    assert.deepEqual({ span: got.span, points: got.points }, { span: c.span, points: c.points }, c.name);
  }
  const { instruments, buckets_s: buckets } = recuo._instruments();
  assert.deepEqual(instruments.map(({ otel_name, unit, kind, prometheus }) => ({ otel_name, unit, kind, prometheus })), doc.instruments);
  assert.deepEqual(buckets, doc.histogram_buckets_s);
  assert.throws(() => full._telemetryOf({ type: 'result', start_unix_ms: 0, method: '', url: '', attempts: 1, reason: 'tired', total_ms: 0 }), /invalid_value/);
});

/** An SDK tracer and meter provider, in memory. */
function seen() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider, meterProvider,
    spans: () => spans.getFinishedSpans(),
    /** Each metric's data points, by name. */
    async points() {
      await reader.forceFlush();
      const out = {};
      for (const rm of exporter.getMetrics()) {
        for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out[m.descriptor.name] = m.dataPoints;
      }
      return out;
    },
  };
}

const SCRIPT = { requests: [{ id: 'twice', script: [
  { status: 503, headers: { 'Retry-After': '0' } },
  { status: 503, headers: { 'Retry-After': '0' } },
  { status: 200 },
] }] };

test('a fetch retried twice after 503s: one operation span, three attempt spans under it, two delays', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-otel-'));
  writeFileSync(join(dir, 'script.json'), JSON.stringify(SCRIPT));
  const server = await serve('--port', '0', '--script', join(dir, 'script.json'));
  const s = seen();
  instrument({ tracerProvider: s.tracerProvider, meterProvider: s.meterProvider });
  const url = `${server.url}/js-otel/twice`;
  try {
    const outer = s.tracerProvider.getTracer('caller').startSpan('caller');
    const response = await context.with(trace.setSpan(context.active(), outer), () =>
      retry(async (attempt) => fetch(url, { signal: attempt.signal }), { request: { method: 'GET', url } }));
    outer.end();
    assert.equal(response.status, 200);
  } finally {
    uninstrument();
    await server.stop();
  }
  const spans = s.spans();
  const caller = spans.find((x) => x.name === 'caller');
  const op = spans.find((x) => x.name === 'recuo.operation');
  assert.equal(op.kind, SpanKind.INTERNAL);
  assert.equal(op.parentSpanContext?.spanId, caller.spanContext().spanId, 'under the span active when it ran');
  assert.equal(op.attributes['recuo.attempts'], 3);
  const attempts = spans.filter((x) => x.parentSpanContext?.spanId === op.spanContext().spanId);
  assert.deepEqual(attempts.map((x) => x.name), ['GET', 'GET', 'GET']);
  assert.ok(attempts.every((x) => x.kind === SpanKind.CLIENT));
  assert.deepEqual(attempts.map((x) => x.attributes['http.request.resend_count']), [undefined, 1, 2]);
  assert.deepEqual(attempts.map((x) => x.attributes['http.response.status_code']), [503, 503, 200]);
  assert.deepEqual(attempts.map((x) => x.status.code), [SpanStatusCode.ERROR, SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
  assert.ok(attempts.every((x) => x.attributes['url.full'] === url));
  const points = await s.points();
  assert.deepEqual(points['recuo.retry.delay'].map((p) => [p.attributes, p.value.count]),
    [[{ 'recuo.reason': 'unavailable', 'recuo.wait.source': 'server' }, 2]]);
  assert.deepEqual(points['recuo.attempts'].map((p) => [p.attributes['recuo.outcome'], p.value]).sort(), [['200', 1], ['503', 2]]);
});

test('a task through comRetry and a batch: internal attempt spans, an operation span each', async () => {
  const s = seen();
  instrument({ tracerProvider: s.tracerProvider, meterProvider: s.meterProvider });
  try {
    let calls = 0;
    assert.equal(await comRetry(async () => {
      calls += 1;
      if (calls < 2) throw new Error('down');
      return 'ok';
    }, { sleep: async () => {} }), 'ok');
    assert.equal(await comRetry(async () => 'at once'), 'at once', 'a first success is seen too');
    const report = await runBatch([async () => 1, async () => 2], { policy: new Policy({ maxAttempts: 2 }), workers: 2 });
    assert.equal(report.results.length, 2);
  } finally {
    uninstrument();
  }
  const names = s.spans().map((x) => x.name);
  assert.equal(names.filter((n) => n === 'recuo.operation').length, 4);
  assert.equal(names.filter((n) => n === 'recuo.attempt').length, 5);
  const points = await s.points();
  assert.deepEqual(points['recuo.retry.delay'].map((p) => p.value.count), [1]);
});

test('nothing is sent after uninstrument; a sink that is not a function is refused', async () => {
  const s = seen();
  instrument({ tracerProvider: s.tracerProvider, meterProvider: s.meterProvider });
  uninstrument();
  await retry(async () => 1);
  assert.deepEqual(s.spans(), []);
  assert.throws(() => recuo._setTelemetry(42), TypeError);
});
