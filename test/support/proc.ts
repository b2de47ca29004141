// Runs pinclaw as a real process (the dev bundle or a single executable) and waits for what it prints.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const root = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
export const bundle = join(root, 'dist', 'pinclaw.cjs');
export const seaX64 = join(root, 'dist', 'pinclaw-linux-x64');
export const seaArm64 = join(root, 'dist', 'pinclaw-linux-arm64');
export const arm64Sysroot = '/usr/aarch64-linux-gnu';

// The arm64 build of pinclaw's addon and the arm64 Node that build:sea left, for the tests that hold
// the arm64 addon to its reference under qemu-aarch64-static.
const nodeCache = join(root, 'dist', '.cache');
export const arm64Addon = join(root, 'dist', '.build', 'arm64', 'addons', 'pinclaw', 'build', 'Release', 'pinclaw.node');
const arm64NodeDir = existsSync(nodeCache) ? readdirSync(nodeCache).find((d) => /^node-v24\.[\d.]+-linux-arm64$/.test(d)) : undefined;
/** The arm64 Node binary (run it under qemu with -L arm64Sysroot). */
export const arm64Node = join(nodeCache, arm64NodeDir ?? 'node-v24-linux-arm64-missing', 'bin', 'node');
/** false when both are there, else why a test needing them is skipped (tap's `skip`). */
export const arm64Missing: false | string = existsSync(arm64Addon) && arm64NodeDir ? false : 'no arm64 build: run npm run build:sea -- --arch arm64 (npm test does)';

const made: string[] = [];
/**
 * A new directory under the system's temporary folder, removed when this test file's process exits
 * (PINCLAW_TEST_KEEP_TMP=1 keeps them, to look at what a test left). Before they were removed, the
 * suite left about 1 GB a run there (test/sea.test.ts copies the 116 MB executable into each of its).
 */
export function tempDir(prefix = 'pinclaw-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!process.env.PINCLAW_TEST_KEEP_TMP) {
    if (made.length === 0) process.once('exit', removeTempDirs);
    made.push(dir);
  }
  return dir;
}

function removeTempDirs(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // One a test made unreadable, or still being written by a child: left behind, as all were before.
    }
  }
}

/**
 * Which of Node's own modules a process loaded (`process.moduleLoadList`, written at its exit by a
 * script it preloads): pass `nodeOptions` as the process's NODE_OPTIONS, then read `loaded()`. With
 * `flags`, the script also records each V8 flag the process sets (v8.setFlagsFromString, which it
 * wraps, and therefore loads node:v8 first), and `underFlags()` lists the built-ins loaded while a
 * flag differed from V8's default: those Node compiled from source instead of taking its code cache.
 */
export function moduleRecorder(dir: string, o: { flags?: boolean } = {}): { nodeOptions: string; loaded(): string[]; flagsSet(): string[]; underFlags(): { module: string; flags: string[] }[] } {
  const list = join(dir, 'modules.json');
  const script = join(dir, 'modules.cjs');
  const wrap = o.flags
    ? `const v8 = require('v8'), set = v8.setFlagsFromString, flags = [];
v8.setFlagsFromString = function (flag) { flags.push([process.moduleLoadList.length, String(flag)]); return set.call(this, flag); };
`
    : 'const flags = [];\n';
  writeFileSync(script, `${wrap}process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify({ modules: process.moduleLoadList, flags })));`);
  const read = () => JSON.parse(readFileSync(list, 'utf8')) as { modules: string[]; flags: [number, string][] };
  return {
    nodeOptions: `--require ${script}`,
    loaded: () => read().modules,
    flagsSet: () => read().flags.map(([, flag]) => flag),
    underFlags() {
      const { modules, flags } = read();
      const value = (flag: string): [string, string] => {
        const f = flag.replace(/^--/, '').replaceAll('_', '-');
        const eq = f.indexOf('=');
        if (eq >= 0) return [f.slice(0, eq), f.slice(eq + 1)];
        return f.startsWith('no-') ? [f.slice(3), 'false'] : [f, 'true'];
      };
      const defaults = v8Defaults(flags.map(([, f]) => value(f)[0]));
      const now = new Map<string, string>();
      const out: { module: string; flags: string[] }[] = [];
      let next = 0;
      modules.forEach((module, i) => {
        for (; next < flags.length && flags[next]![0] <= i; next++) now.set(...value(flags[next]![1]));
        const off = [...now].filter(([name, v]) => v !== defaults.get(name)).map(([name, v]) => `${name}=${v}`);
        if (off.length && module.startsWith('NativeModule ')) out.push({ module: module.slice('NativeModule '.length), flags: off });
      });
      return out;
    },
  };
}

/** V8's defaults of the named flags ("true"/"false" or the value), from `node --v8-options`. */
function v8Defaults(names: string[]): Map<string, string> {
  const text = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
  const out = new Map<string, string>();
  for (const name of new Set(names)) {
    const m = new RegExp(`^  --${name} \\(.*\\n\\s+type: \\S+  default: --(.*)$`, 'm').exec(text);
    if (!m) throw new Error(`node --v8-options does not list --${name}`);
    const d = m[1]!;
    out.set(name, d.includes('=') ? d.slice(d.indexOf('=') + 1) : d.startsWith('no-') ? 'false' : 'true');
  }
  return out;
}

/** A minimal environment: nothing from the developer's shell leaks into the process under test. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', ...extra };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync(cmd, args, { env: opts.env ?? cleanEnv(), cwd: opts.cwd, input: opts.input, encoding: 'utf8', timeout: opts.timeoutMs ?? 120_000 });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

export function runPinclaw(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): RunResult {
  return run(process.execPath, [bundle, ...args], opts);
}

export interface Started {
  child: ChildProcess;
  stderr(): string;
  /** Resolves with the first match of `re` in stderr, rejects if the process exits first. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function start(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Started {
  const child = spawn(cmd, args, { env: opts.env ?? cleanEnv(), cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const listeners = new Set<() => void>();
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const l of listeners) l();
  });
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
  return {
    child,
    stderr: () => err,
    exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolveMatch, reject) => {
        const check = () => {
          const m = err.match(re);
          if (m) {
            cleanup();
            resolveMatch(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}; stderr so far:\n${err}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`process exited before ${re}; stderr:\n${err}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', onExit);
        };
        listeners.add(check);
        child.once('exit', onExit);
        check();
      });
    },
  };
}

/** Like runPinclaw, without blocking the event loop: needed when the test itself serves the process (stand-ins). */
export function runPinclawAsync(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<RunResult> {
  return runAsync(process.execPath, [bundle, ...args], opts);
}

/** run() without blocking the event loop (servers in this process keep answering). */
export function runAsync(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<RunResult> {
  const child = spawn(cmd, args, { env: opts.env ?? cleanEnv(), cwd: opts.cwd, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
