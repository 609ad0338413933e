// A `redis-server` of the tests' own, as tests/c/redis_server.h and tests/python/redis_server.py
// start theirs: on a free port of 127.0.0.1, without persistence (`--save "" --appendonly
// no`), asked by redis-cli whether it is up (no protocol spoken here), stopped by `stop()`.
// Every wait is bounded.

import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);
const START_TIMEOUT_MS = 10000;
const STOP_TIMEOUT_MS = 5000;

/** A port of 127.0.0.1 nothing listens on now (the kernel's choice). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function answers(port) {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { timeout: 2000 });
    return stdout.trim() === 'PONG';
  } catch {
    return false;
  }
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts the server: `{ url, port, stop() }`, the URL `redis://127.0.0.1:PORT`. */
export async function redisServer() {
  for (let tries = 0; tries < 5; tries++) { // another process may take the port meanwhile
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let failed = false;
    child.once('error', () => { failed = true; });
    const until = Date.now() + START_TIMEOUT_MS;
    let up = false;
    while (!failed && child.exitCode === null && Date.now() < until && !(up = await answers(port))) {
      await new Promise((r) => setTimeout(r, 20));
    }
    if (up) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: () => stop(child),
        /** SIGSTOP (true) or SIGCONT (false): a server that keeps its connections and never answers. */
        freeze: (frozen) => process.kill(child.pid, frozen ? 'SIGSTOP' : 'SIGCONT'),
      };
    }
    await stop(child);
    if (failed) break;
  }
  throw new Error('redis-server did not start on 127.0.0.1 (make deps installs it)');
}

/** Whether redis-server and redis-cli are installed. */
export async function haveRedis() {
  try {
    await run('redis-server', ['--version'], { timeout: 5000 });
    await run('redis-cli', ['--version'], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}
