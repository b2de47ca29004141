// The exec sandbox on this kernel, for real: the same suite against Landlock and bubblewrap. Every
// refusal is checked by its effect on the host (the secret not in the output, no file created, no
// connection accepted, no process left in /proc), so it holds when the tests run as root, whom
// file permissions do not stop but Landlock and the namespaces do.
import t, { type Test } from 'tap';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { defaults } from '../src/config/schema.js';
import { addonStatus } from '../src/native/loader.js';
import { bwrapArgs } from '../src/sandbox/bwrap.js';
import { chooseBackend, detectSandbox, type SandboxSupport } from '../src/sandbox/detect.js';
import { Sandbox, type RunResult } from '../src/sandbox/index.js';
import { pathRules } from '../src/sandbox/policy.js';
import type { BackendName, SandboxSettings } from '../src/sandbox/types.js';

interface Home {
  home: string;
  workspace: string;
  secret: string;
}

/** A $PINCLAW_HOME as pinclaw lays it out: secrets next to the workspace. */
function tempHome(t: Test): Home {
  const home = mkdtempSync(join(tmpdir(), 'pinclaw-sbx-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const secret = `secret-${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(home, 'secret.key'), secret, { mode: 0o600 });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { token: secret } }), { mode: 0o600 });
  const workspace = join(home, 'workspace');
  mkdirSync(workspace);
  return { home, workspace, secret };
}

function settings(backend: BackendName, over: Partial<SandboxSettings> = {}): SandboxSettings {
  return { ...defaults().sandbox, backend, timeoutSeconds: 20, ...over };
}

const execFileAsync = promisify(execFile);
const token = (): string => String(Math.floor(Math.random() * 900_000) + 100_000);

/** Live (not zombie) processes whose command line contains `needle`. */
function liveWith(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') pids.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** Polls until `pred` holds or the bound passes; returns whether it held. Never a timing assertion. */
async function eventually(pred: () => boolean, boundMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < boundMs; waited += 20) {
    if (pred()) return true;
    await sleep(20);
  }
  return pred();
}

async function listen(t: Test): Promise<{ port: number; received: () => string; connections: () => number }> {
  let data = '';
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { port: address.port, received: () => data, connections: () => connections };
}

function available(backend: BackendName, support: SandboxSupport): string | null {
  const c = chooseBackend(backend, support);
  return 'error' in c ? c.error : null;
}

const support = await detectSandbox();

for (const backend of ['landlock', 'bubblewrap'] as const) {
  const missing = available(backend, support);
  t.test(`${backend} backend`, { skip: missing ?? false }, async (t) => {
    const run = (h: Home, command: string, over: Partial<SandboxSettings> = {}, extra: Parameters<Sandbox['run']>[0] = { command }): Promise<RunResult> =>
      new Sandbox(h.workspace, settings(backend, over)).run({ ...extra, command });

    t.test('allowed: read /usr, write and execute in the workspace, private $TMPDIR', async (t) => {
      const h = tempHome(t);
      const r = await run(h, 'head -c 4 /usr/bin/env | od -c | head -1 && echo data > out.txt && mkdir d && cat out.txt > d/copy && printf "#!/bin/sh\\necho ran\\n" > s.sh && chmod +x s.sh && ./s.sh && echo tmp > "$TMPDIR/x" && cat "$TMPDIR/x" && pwd');
      t.equal(r.exitCode, 0, r.stderr);
      t.match(r.stdout, /177\s+E\s+L\s+F/, 'read an ELF header under /usr');
      t.match(r.stdout, /ran\ntmp\n/);
      t.equal(readFileSync(join(h.workspace, 'd', 'copy'), 'utf8'), 'data\n', 'the file reached the host workspace');
      t.equal(r.stdout.trim().split('\n').pop(), h.workspace, 'starts in the workspace');
    });

    t.test('cannot read what lies next to the workspace: secret.key, config.json, /etc/shadow, ~', async (t) => {
      const h = tempHome(t);
      const r = await run(h, `cat ${h.home}/secret.key; cat ${h.home}/config.json; ls -a ${h.home}; cat /etc/shadow; ls -a ${process.env.HOME ?? '/root'}; cat /proc/${process.pid}/environ`);
      t.notMatch(r.stdout, h.secret, 'the secret never appears');
      t.notMatch(r.stdout, /secret\.key|config\.json/, 'the home directory is not listed');
      t.notMatch(r.stdout, /^root:/m, '/etc/shadow is not readable');
      t.notMatch(r.stdout, /PATH=/, "pinclaw's environment is not readable");
      t.match(r.stderr, backend === 'landlock' ? /Permission denied/ : /No such file or directory/);
    });

    t.test('cannot write outside the workspace, nor make device nodes in it', async (t) => {
      const h = tempHome(t);
      const tag = token();
      const outside = [join(h.home, `pwned-${tag}`), join(tmpdir(), `pinclaw-pwned-${tag}`), `/usr/pinclaw-pwned-${tag}`, `/etc/pinclaw-pwned-${tag}`];
      const r = await run(h, `${outside.map((p) => `echo x > ${p}`).join('; ')}; mknod disk b 8 0; rm -f ${h.home}/secret.key; ln ${h.home}/secret.key link`);
      for (const p of outside) t.notOk(existsSync(p), `${p} was not created`);
      t.notOk(existsSync(join(h.workspace, 'disk')), 'no block device in the workspace');
      t.notOk(existsSync(join(h.workspace, 'link')), 'no hard link to the secret');
      t.ok(existsSync(join(h.home, 'secret.key')), 'secret.key is still there');
      t.not(r.exitCode, 0);
      for (const p of outside) rmSync(p, { force: true });
    });

    t.test('no capabilities, rlimits in force, cannot signal pinclaw', async (t) => {
      const h = tempHome(t);
      const r = await run(h, `grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; grep -E 'Max (cpu time|file size|address space|core)' /proc/self/limits; kill -0 ${process.pid} && echo SIGNALLED`, {
        cpuSeconds: 7,
        maxFileSizeMb: 3,
        memoryMb: 512,
      });
      t.match(r.stdout, /CapEff:\s+0000000000000000/);
      t.match(r.stdout, /CapBnd:\s+0000000000000000/);
      t.match(r.stdout, /Max cpu time\s+7\s/);
      t.match(r.stdout, /Max file size\s+3145728\s/);
      t.match(r.stdout, /Max address space\s+536870912\s/);
      t.match(r.stdout, /Max core file size\s+0\s/);
      t.notMatch(r.stdout, /SIGNALLED/, 'kill -0 on the test process failed');
    });

    t.test("cannot reach the host's System V IPC", async (t) => {
      const h = tempHome(t);
      const segments = (): string[] => readFileSync('/proc/sysvipc/shm', 'utf8').trim().split('\n').slice(1);
      const before = segments();
      const r = await run(h, 'ipcmk -M 4096 && ipcs -m');
      const created = segments().filter((l) => !before.includes(l));
      t.same(created, [], 'no segment appeared on the host');
      if (backend === 'landlock') t.match(r.stderr, /Operation not permitted/);
    });

    t.test('limits end commands by signal, reported as the signal', async (t) => {
      const h = tempHome(t);
      const cpu = await run(h, 'while :; do :; done', { cpuSeconds: 1 });
      t.equal(cpu.signal, 'SIGXCPU', 'RLIMIT_CPU');
      t.equal(cpu.timedOut, false);
      const size = await run(h, 'head -c 3000000 /dev/zero > big', { maxFileSizeMb: 1 });
      t.equal(size.signal, 'SIGXFSZ', 'RLIMIT_FSIZE');
      t.equal(readFileSync(join(h.workspace, 'big')).length, 1 << 20, 'the file stopped at the limit');
    });

    t.test('network off: no connection reaches a listener on 127.0.0.1', async (t) => {
      const h = tempHome(t);
      const server = await listen(t);
      const r = await run(h, `bash -c 'echo hello > /dev/tcp/127.0.0.1/${server.port}' && echo CONNECTED`);
      t.notMatch(r.stdout, /CONNECTED/);
      t.equal(server.connections(), 0, 'the server saw no connection');
      t.equal(r.enforcement.network, 'denied');
    });

    t.test('network on: the same connection works', async (t) => {
      const h = tempHome(t);
      const server = await listen(t);
      const r = await run(h, `bash -c 'echo hello > /dev/tcp/127.0.0.1/${server.port}' && echo CONNECTED`, { network: true });
      t.match(r.stdout, /CONNECTED/, r.stderr);
      t.ok(await eventually(() => server.received() === 'hello\n'), 'the server received the bytes');
      t.equal(r.enforcement.network, 'allowed');
    });

    t.test('the process limit holds: forks fail past maxProcesses, a fork bomb stays bounded and dies', async (t) => {
      const h = tempHome(t);
      const probe = await run(h, 'true', { maxProcesses: 16 });
      t.match(probe.enforcement.processLimit, /^16 \(/, `enforced: ${probe.enforcement.processLimit}`);
      if (!/^16 \(/.test(probe.enforcement.processLimit)) return; // never run a fork bomb unbounded

      const count = await run(h, 'i=0; while [ $i -lt 40 ]; do sleep 1000 & i=$((i+1)); echo $i; done', { maxProcesses: 16 });
      const started = Number(count.stdout.trim().split('\n').pop());
      t.ok(started < 16, `${started} background processes started with a limit of 16`);
      t.match(count.stderr, /fork/i, 'the shell reports the refused fork');

      const tag = token();
      let peak = 0;
      let done = false;
      // Every process forks two more and waits for them, so the tree stays alive; bash (unlike
      // dash, which exits on a failed fork) retries refused forks, so it keeps pushing at the limit.
      const bomb = run(h, `exec bash -c 'b() { b & b & wait; }; b # bomb-${tag}' 2>/dev/null`, { maxProcesses: 24, timeoutSeconds: 3 }).finally(() => (done = true));
      let hostForks = true;
      while (!done) {
        peak = Math.max(peak, liveWith(`bomb-${tag}`).length);
        hostForks &&= spawnSync('/bin/true').status === 0;
        await sleep(10);
      }
      const r = await bomb;
      // Everything of the sandbox counts, bwrap's own two processes included.
      t.ok(peak <= 24, `at most 24 bomb processes alive at once (peak ${peak})`);
      t.ok(peak >= 12, `the bomb did grow towards the limit (peak ${peak})`);
      t.ok(hostForks, 'pinclaw could still start processes during the bomb');
      t.ok(await eventually(() => liveWith(`bomb-${tag}`).length === 0), 'no bomb process survives the command');
      t.equal(r.timedOut, true, 'the bomb ran until the timeout killed it');
    });

    t.test('at the timeout the whole tree is killed: a child ignoring SIGTERM and a grandchild', async (t) => {
      const h = tempHome(t);
      const a = `9${token()}1`;
      const b = `9${token()}2`;
      // The child shell ignores SIGTERM and waits on its own child; the leader waits on both.
      const pending = run(h, `sh -c 'trap "" TERM; sleep ${a} & wait' & sleep ${b}; wait`, { timeoutSeconds: 2 });
      t.ok(await eventually(() => liveWith(`sleep ${a}`).length > 0 && liveWith(`sleep ${b}`).length > 0), 'child and grandchild are running');
      const r = await pending;
      t.equal(r.timedOut, true);
      t.equal(r.signal, 'SIGKILL');
      t.ok(await eventually(() => liveWith(a).length === 0 && liveWith(b).length === 0), 'none of them survives');
      t.same(liveWith(a).concat(liveWith(b)), []);
    });

    t.test('background processes die with the command', async (t) => {
      const h = tempHome(t);
      const a = `8${token()}3`;
      const r = await run(h, `sleep ${a} > /dev/null 2>&1 & echo started`);
      t.equal(r.exitCode, 0);
      t.ok(await eventually(() => liveWith(a).length === 0), 'the background sleep is gone');
    });

    // A process that leaves the command's session escapes the group kill but keeps the output pipe
    // open: the run must still end (it used to wait for it, up to forever) and take the process along.
    t.test('a process that left the session and holds the output ends with the command', async (t) => {
      const h = tempHome(t);
      const a = `9${token()}2`;
      const r = await run(h, `setsid sleep ${a} & echo started`);
      t.equal(r.exitCode, 0);
      t.match(r.stdout, /started/);
      t.equal(r.timedOut, false, 'ended when the command did, not at the timeout');
      t.ok(await eventually(() => liveWith(a).length === 0), 'the escaped sleep is gone');
    });

    t.test('output streams back in chunks and is capped with a count of the rest', async (t) => {
      const h = tempHome(t);
      let resolved = false;
      let firstBeforeEnd = false;
      const chunks: string[] = [];
      const pending = new Sandbox(h.workspace, settings(backend, { outputCap: 4096 })).run({
        command: 'echo first; while [ ! -e go ]; do sleep 0.05; done; head -c 100000 /dev/zero | tr "\\0" a; echo oops >&2',
        onOutput: (stream, chunk) => {
          chunks.push(`${stream}:${chunk.toString()}`);
          if (chunk.toString().includes('first') && !resolved) {
            firstBeforeEnd = true;
            writeFileSync(join(h.workspace, 'go'), '');
          }
        },
      });
      const r = await pending;
      resolved = true;
      t.ok(firstBeforeEnd, 'the first line arrived while the command was still running');
      t.equal(r.stdout.length, 4096, 'stdout kept up to the cap');
      t.equal(r.omittedBytes, 100000 + 6 + 5 - 4096, 'every other byte counted (stdout and stderr)');
      t.equal(r.stderr, '', 'the cap is shared: nothing left for stderr');
      t.ok(chunks.length >= 2);
    });

    t.test('an abort signal kills the command', async (t) => {
      const h = tempHome(t);
      const ac = new AbortController();
      const a = `7${token()}4`;
      const real = new Sandbox(h.workspace, settings(backend)).run({ command: `sleep ${a}`, signal: ac.signal });
      t.ok(await eventually(() => liveWith(a).length > 0), 'running');
      ac.abort();
      const r = await real;
      t.equal(r.cancelled, true);
      t.equal(r.timedOut, false);
      t.ok(await eventually(() => liveWith(a).length === 0), 'killed');
    });

    t.test("exit statuses stay right while child_process spawns alongside (nobody reaps another's child)", async (t) => {
      const h = tempHome(t);
      const sb = new Sandbox(h.workspace, settings(backend));
      const plain = (): Promise<number | null> => new Promise((resolve) => spawn('/bin/sh', ['-c', 'exit 5']).on('close', resolve));
      const results = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? sb.run({ command: `exit ${i}` }).then((r) => r.exitCode) : plain())));
      t.same(results, results.map((_, i) => (i % 2 ? i : 5)));
    });

    t.test('what was in force is reported', async (t) => {
      const h = tempHome(t);
      const r = await run(h, 'true');
      t.equal(r.backend, backend);
      t.equal(r.enforcement.backend, backend);
      t.ok(r.enforcement.summary.length >= 4);
      if (backend === 'landlock') {
        const d = r.enforcement.detail as { landlock: { abi: number; handledNet: string[]; scoped: string[]; rules: { path: string; access: string }[] }; seccomp: { arch: string } };
        t.ok(d.landlock.abi >= 1);
        if (d.landlock.abi >= 4) t.same(d.landlock.handledNet, ['bind_tcp', 'connect_tcp']);
        if (d.landlock.abi >= 6) t.same(d.landlock.scoped, ['abstract_unix_socket', 'signal']);
        t.ok(d.landlock.rules.some((rule) => rule.path === h.workspace && rule.access === 'read+write'));
        t.notOk(d.landlock.rules.some((rule) => rule.path === h.home || rule.path === '/etc' || rule.path === '/'), 'neither the home, nor /etc, nor / as a whole');
        t.equal(d.seccomp.arch, process.arch === 'arm64' ? 'aarch64' : 'x86_64');
      } else {
        const d = r.enforcement.detail as { args: string[] };
        t.ok(d.args.includes('--unshare-all') && d.args.includes('--die-with-parent'));
        t.notOk(d.args.includes('--share-net'));
      }
    });
  });
}

t.test('backend choice: auto prefers Landlock, falls back to bubblewrap, never to none', async (t) => {
  const bwrap = { bwrap: '/usr/bin/bwrap', version: '0.8.0', prlimit: '/usr/bin/prlimit', usable: true };
  const base: SandboxSupport = { landlock: { abi: 7 }, bubblewrap: bwrap, userNamespaces: { available: true }, pidsCgroup: null };
  t.same(chooseBackend('auto', base), { backend: 'landlock' });
  t.match(chooseBackend('auto', { ...base, landlock: { abi: 0, reason: 'no native addon' } }), { backend: 'bubblewrap' });
  const none = chooseBackend('auto', { ...base, landlock: { abi: 0, reason: 'no native addon' }, bubblewrap: null });
  t.match(none, { error: /no sandbox available .*no native addon.*bubblewrap is not installed.*sandbox\.backend is set to none/ });
  t.match(chooseBackend('landlock', { ...base, landlock: { abi: 0, reason: 'ENOSYS' } }), { error: /sandbox\.backend is landlock, but Landlock unavailable: ENOSYS/ });
  t.match(chooseBackend('bubblewrap', { ...base, bubblewrap: { ...bwrap, usable: false, reason: 'No permissions to create new namespace' } }), { error: /does not work here: No permissions/ });
  t.same(chooseBackend('none', { ...base, landlock: { abi: 0 }, bubblewrap: null }), { backend: 'none' });
});

t.test('cwd must stay inside the workspace', async (t) => {
  const h = tempHome(t);
  mkdirSync(join(h.workspace, 'sub'));
  const sb = new Sandbox(h.workspace, settings('none'));
  const r = await sb.run({ command: 'pwd', cwd: 'sub' });
  t.equal(r.stdout.trim(), join(h.workspace, 'sub'));
  await t.rejects(sb.run({ command: 'pwd', cwd: '..' }), /outside the workspace/);
  await t.rejects(sb.run({ command: 'pwd', cwd: h.home }), /outside the workspace/);
});

// Backend none has no namespace to end with the command: a process that left the session kept
// the output open and the run waited for it past its timeout (37 s for a `sleep 37` under an 8 s
// timeout before the output's holders were looked for).
t.test('backend none: a process that left the session and holds the output ends with the command', async (t) => {
  const h = tempHome(t);
  const a = `6${token()}1`;
  const r = await new Sandbox(h.workspace, settings('none', { timeoutSeconds: 8 })).run({ command: `setsid sleep ${a} & echo started` });
  t.equal(r.exitCode, 0);
  t.match(r.stdout, /started/);
  t.equal(r.timedOut, false, 'ended when the command did, not at the timeout');
  t.ok(await eventually(() => liveWith(a).length === 0), 'the escaped sleep is gone');
});

t.test('landlock: a setup step that fails in the child is an error naming the step', { skip: available('landlock', support) ?? false }, async (t) => {
  const { runLandlock } = await import('../src/sandbox/landlock.js');
  const { sandboxAddon } = await import('../src/sandbox/native.js');
  const base = { command: 'true', env: {}, rules: [], network: false, limits: { cpuSeconds: 5, memoryBytes: 1 << 30, maxProcesses: 8, fileSizeBytes: 1 << 20 }, timeoutMs: 5000, keepBytes: 1024, onOutput: () => {} };
  await t.rejects(runLandlock(sandboxAddon()!, { ...base, cwd: '/nonexistent-pinclaw-dir' }), /^sandbox: chdir: No such file or directory$/);
  // /bin/sh is not among the rules: Landlock refuses the execve itself.
  await t.rejects(runLandlock(sandboxAddon()!, { ...base, cwd: '/' }), /^sandbox: execve: Permission denied$/);
});

// Root is bounded by the pids cgroup above; every other uid has no cgroup to use here, and relies
// on RLIMIT_NPROC counting in the sandbox's own user namespace. Checked as uid 65534.
t.test('an unprivileged pinclaw without a cgroup: RLIMIT_NPROC in its own user namespace bounds processes', { skip: process.getuid?.() === 0 ? false : 'needs root to switch to an unprivileged uid' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-sbx-nobody-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o777);
  const loop = 'i=0; while [ $i -lt 40 ]; do sleep 1000 & i=$((i+1)); echo $i; done';
  const asNobody = (cmd: string, args: string[]) =>
    execFileAsync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', cmd, ...args], { cwd: dir, timeout: 60_000 }).catch((err: { stdout: string; stderr: string }) => err);
  const rules = pathRules({ workspace: dir, tmp: dir, allowedRoots: [] });
  const limits = { cpuSeconds: 10, memoryBytes: 1 << 30, maxProcesses: 10, fileSizeBytes: 1 << 20 };

  t.test('landlock', { skip: available('landlock', support) ?? false }, async (t) => {
    const script = join(dir, 'nproc.cjs');
    writeFileSync(script, `
      const a = require(process.argv[2]);
      const opts = JSON.parse(process.argv[3]);
      let out = '', err = '', scope = '';
      a.spawnSandboxed(opts, (kind, payload) => {
        if (kind === 1) out += payload; else if (kind === 2) err += payload;
        else if (kind === 4) scope = payload.maxProcessesScope;
        else console.log(JSON.stringify({ scope, out, err }));
      });`);
    const opts = { file: '/bin/sh', argv: ['sh', '-c', loop], env: ['PATH=/usr/bin:/bin'], cwd: dir, rules, network: false, userNamespace: true, timeoutMs: 20_000, forwardLimit: 1 << 20, limits };
    const r = await asNobody(process.execPath, [script, addonStatus('pinclaw').path!, JSON.stringify(opts)]);
    const report = JSON.parse(r.stdout) as { scope: string; out: string; err: string };
    t.equal(report.scope, 'sandbox');
    const started = Number(report.out.trim().split('\n').pop());
    t.ok(started < 10, `${started} background processes started with a limit of 10`);
    t.match(report.err, /fork/i);
  });

  t.test('bubblewrap', { skip: available('bubblewrap', support) ?? false }, async (t) => {
    const tools = support.bubblewrap!;
    const args = bwrapArgs({ command: loop, cwd: dir, env: {}, rules, network: false, limits, timeoutMs: 20_000, keepBytes: 1 << 20, onOutput: () => {} }, tools);
    const r = await asNobody(tools.bwrap, args);
    const started = Number(r.stdout.trim().split('\n').pop());
    t.ok(started < 10, `${started} background processes started with a limit of 10`);
    t.match(r.stderr, /fork/i);
  });
});

// The addon's spawn for a long-lived child (an MCP server under Landlock): its stdin a pipe whose
// write end JavaScript gets, and terminate() (SIGTERM to the group, from the supervising thread).
t.test('landlock: stdinPipe gives the child a pipe for stdin; terminate() sends its group SIGTERM', { skip: available('landlock', support) ?? false }, async (t) => {
  const { sandboxAddon, EVENT } = await import('../src/sandbox/native.js');
  const { Socket } = await import('node:net');
  const a = sandboxAddon()!;
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-sbx-pipe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const base = { env: ['PATH=/usr/bin:/bin'], cwd: dir, rules: pathRules({ workspace: dir, tmp: dir, allowedRoots: [] }), network: false, userNamespace: true, timeoutMs: 20_000, forwardLimit: 1 << 20, limits: { cpuSeconds: 10, memoryBytes: 1 << 30, maxProcesses: 16, fileSizeBytes: 1 << 20 } };
  type Ended = { out: string; exit: { code: number | null; signal: number | null; cancelled: boolean } };
  const run = (o: Record<string, unknown>) => {
    let out = '';
    let ready!: () => void;
    const started = new Promise<void>((r) => (ready = r));
    let handle!: ReturnType<typeof a.spawnSandboxed>;
    const ended = new Promise<Ended>((resolve) => {
      handle = a.spawnSandboxed({ ...base, file: '/bin/sh', argv: ['sh', '-c', String(o.script)], ...(o.stdinPipe !== undefined ? { stdinPipe: o.stdinPipe as boolean } : {}) }, (kind, payload) => {
        if (kind === EVENT.stdout) out += String(payload);
        if (out.includes('ready')) ready();
        if (kind === EVENT.exit) resolve({ out, exit: payload as Ended['exit'] });
      });
    });
    return { handle, ended, started };
  };

  const piped = run({ script: 'while read line; do echo "got $line"; done; echo eof', stdinPipe: true });
  t.type(piped.handle.stdin, 'number', 'the write end is handed over');
  const stdin = new Socket({ fd: piped.handle.stdin!, readable: false, writable: true });
  stdin.write('one\n');
  stdin.end('two\n');
  const p = await piped.ended;
  t.equal(p.out, 'got one\ngot two\neof\n', 'what is written reaches the child, and the end of the pipe is its EOF');
  t.equal(p.exit.code, 0);

  const plain = run({ script: 'cat; echo done' });
  t.equal(plain.handle.stdin, undefined, 'without stdinPipe there is no write end');
  t.equal((await plain.ended).out, 'done\n', 'and stdin is /dev/null');

  const polite = run({ script: 'trap "echo term; exit 3" TERM; echo ready; while :; do sleep 0.05; done' });
  // Once it says so, its trap is set.
  await polite.started;
  t.equal(polite.handle.terminate(), true);
  const r = await polite.ended;
  t.equal(r.out, 'ready\nterm\n', 'the trap ran');
  t.same([r.exit.code, r.exit.cancelled], [3, false], 'its own exit, not a cancellation');
  t.equal(polite.handle.terminate(), false, 'nothing to terminate once it has ended');
  t.equal(polite.handle.kill(), false);

  t.throws(() => a.spawnSandboxed({ ...base, file: '/bin/true', argv: ['true'], stdinPipe: 'yes' as unknown as boolean }, () => undefined), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'spawnSandboxed: options.stdinPipe must be a boolean, got a string' });
});
