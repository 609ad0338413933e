// The portable tests as a browser page runs them: those of run.js, and recuo/otel through the
// OpenTelemetry SDK's in-memory exporters (its Node packages are not a Worker's).

import './otel.js';

export { runAll } from './run.js';
