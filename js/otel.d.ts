// recuo/otel: recuo's retries in OpenTelemetry (needs @opentelemetry/api).

import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

/** Where the spans and metrics go, and which spans recuo makes. */
export interface InstrumentOptions {
  /** The tracer provider (default: the global one). */
  tracerProvider?: TracerProvider;
  /** The meter provider (default: the global one). */
  meterProvider?: MeterProvider;
  /** Whether recuo makes a span per attempt (default true); false: the operation's span and the metrics only. */
  attemptSpans?: boolean;
}

/**
 * Sends every operation's spans and metrics to OpenTelemetry from now on: a `recuo.operation`
 * span per operation, a span per attempt under it (`http.request.resend_count` from the
 * second attempt on), and the counters and histograms `recuo.attempts`, `recuo.retry.delay`,
 * `recuo.give_ups`, `recuo.gate.wait` and `recuo.budget.refusals`. Called again, it replaces
 * the providers.
 */
export function instrument(options?: InstrumentOptions): void;

/** Stops sending spans and metrics. */
export function uninstrument(): void;
