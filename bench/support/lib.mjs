// Small helpers the benchmarks share.
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** The architecture an ELF file is built for ('x64', 'arm64', 'arm'), or null when it is not ELF. */
export function elfArch(file) {
  const head = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (head.readUInt32BE(0) !== 0x7f454c46) return null;
  return { 62: 'x64', 183: 'arm64', 40: 'arm' }[head.readUInt16LE(18)] ?? `e_machine ${head.readUInt16LE(18)}`;
}

/**
 * The Node binary build:sea embeds (dist/.cache/node-<version>-linux-<arch>/bin/node): `preferred`
 * when present, else the newest there. Null when there is none; the caller decides what to use then.
 */
export function cachedNode(root, arch, preferred) {
  const cache = join(root, 'dist', '.cache');
  const suffix = `-linux-${arch}`;
  const dirs = existsSync(cache) ? readdirSync(cache).filter((d) => d.startsWith('node-v') && d.endsWith(suffix)) : [];
  const version = (d) => d.slice('node-v'.length, -suffix.length).split('.').map(Number);
  const byVersion = (a, b) => { const [x, y] = [version(a), version(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; };
  const pick = dirs.includes(`node-${preferred}${suffix}`) ? `node-${preferred}${suffix}` : dirs.sort(byVersion).at(-1);
  const candidate = pick && join(cache, pick, 'bin', 'node');
  return candidate && existsSync(candidate) ? candidate : null;
}

/**
 * The memory figures of a running process from /proc/<pid>/status, in KiB: VmRSS (what `ps` and
 * `top` show), RssAnon (heap, stacks, malloc: what the process itself allocated), RssFile (pages of
 * the executable and libraries, which the kernel can drop and reread), VmHWM (the peak VmRSS).
 * Null when the process is gone.
 */
export function procMemory(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name) => {
    const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  return { vmRss: field('VmRSS'), rssAnon: field('RssAnon'), rssFile: field('RssFile'), vmHwm: field('VmHWM') };
}

/**
 * What every command-line benchmark shares: progress and warnings on stderr (so `--json` leaves
 * stdout parseable), a failure that names the benchmark, integer flags, and temporary directories
 * and children removed on exit (cleanupOnExit).
 */
export function benchRun(name) {
  const note = (msg) => process.stderr.write(`${msg}\n`);
  const warnings = [];
  const warn = (msg) => {
    warnings.push(msg);
    note(`warning: ${msg}`);
  };
  const fail = (msg) => {
    process.stderr.write(`${name}: ${msg}\n`);
    process.exit(1);
  };
  const integer = (text, flag, min) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) fail(`${flag} wants an integer >= ${min}, got '${text}'`);
    return n;
  };
  const { children, tempDirs } = cleanupOnExit();
  const tempDir = (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    tempDirs.add(dir);
    return dir;
  };
  return { note, warnings, warn, fail, integer, children, tempDirs, tempDir };
}

/** CPU seconds (user + system) of a process so far, from /proc/<pid>/stat; null when it is gone. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}
