// Small helpers the benchmarks share.
import { rmSync } from 'node:fs';

/** A seeded generator (mulberry32) of numbers in [0, 1): the same inputs on every run. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Children and temp dirs registered here are killed and removed however the run ends (an exception,
 * Ctrl-C, a hung gateway), so no listening process or extracted addon outlives it. 'exit' handlers
 * must be synchronous, which kill() and rmSync() are.
 */
export function cleanupOnExit() {
  const children = new Set();
  const tempDirs = new Set();
  function cleanup() {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    children.clear();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    tempDirs.clear();
  }
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      cleanup();
      process.exit(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig]);
    });
  }
  return { children, tempDirs, cleanup };
}

/**
 * Resolves with the URL of the first "listening on http://…" line the child writes to stderr;
 * rejects when it exits first or stays silent for `timeoutMs`. `stderr()` is what it wrote so far.
 */
export function listeningUrl(child, timeoutMs, label = '') {
  let stderr = '';
  const prefix = label ? `${label}: ` : '';
  const url = new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${prefix}no "listening on" line within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    child.once('error', rej);
    child.once('exit', (code, signal) => rej(new Error(`${prefix}exited ${code ?? signal} before listening\n${stderr}`)));
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
  });
  return { url, stderr: () => stderr, trim: () => (stderr = stderr.slice(-4000)) };
}
