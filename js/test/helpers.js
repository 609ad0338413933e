// What the tests share: the repository's paths and a `recuo serve` of their own.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RECUO_BIN = process.env.RECUO_BIN || `${ROOT}target/debug/recuo`;
export const PYTHON = process.env.RECUO_PYTHON || `${ROOT}.venv/bin/python`;
export const haveServe = existsSync(RECUO_BIN);
export const havePython = existsSync(PYTHON);

/** Starts `recuo serve ARGS` on 127.0.0.1: `{ url, stop() }`. */
export async function serve(...args) {
  const child = spawn(RECUO_BIN, ['serve', '--stop-after', '120s', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`recuo serve exited with ${code}`)));
  });
  if (!first.startsWith('listening on http://127.0.0.1:')) throw new Error(`recuo serve said ${first}`);
  return {
    url: first.split(' ').at(-1),
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
    }),
  };
}

export async function stats(url) {
  const response = await fetch(`${url}/stats`);
  return response.json();
}
