// The exec tool over the real sandbox: input checking, what the model reads back (output, stderr,
// how it ended, the truncation notice, what confined it), refusals, cancellation, concurrency.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaults } from '../src/config/schema.js';
import { chooseBackend, detectSandbox } from '../src/sandbox/detect.js';
import type { SandboxSettings } from '../src/sandbox/types.js';
import { execTool } from '../src/tools/exec.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ToolContext } from '../src/tools/types.js';
import { validateInput } from '../src/tools/validate.js';

const ctx: ToolContext = { sessionKey: 'test', channel: 'cli', chatId: 'local' };

function workspace(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-exec-ws-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function tool(t: Test, over: Partial<SandboxSettings> = {}) {
  return execTool({ workspace: workspace(t), sandbox: { ...defaults().sandbox, timeoutSeconds: 20, ...over } });
}

const support = await detectSandbox();
const auto = chooseBackend('auto', support);
const confined = 'error' in auto ? null : auto.backend;

t.test('shape: parallel-safe, with its own limits for the registry', async (t) => {
  const exec = tool(t, { timeoutSeconds: 45, outputCap: 10_000 });
  t.equal(exec.name, 'exec');
  t.equal(exec.sequential, false);
  t.equal(exec.timeoutMs, 55_000, 'the sandbox times out first; the registry is a backstop');
  t.ok(exec.maxOutputBytes! > 10_000, 'room for the notices after capped output');
  t.same(validateInput(exec.inputSchema, { command: 'ls' }), []);
  t.same(validateInput(exec.inputSchema, { command: 'ls', timeoutSeconds: 45, cwd: 'sub' }), []);
  t.match(validateInput(exec.inputSchema, { command: '' }).join('\n'), /input\.command: must be at least 1 characters/);
  t.match(validateInput(exec.inputSchema, { command: 'ls', timeoutSeconds: 46 }).join('\n'), /input\.timeoutSeconds: must be <= 45/);
  t.match(validateInput(exec.inputSchema, { command: 'ls', shell: 'bash' }).join('\n'), /input\.shell: unknown field/);
});

t.test('what the model reads back', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t);
  const r = await exec.execute({ command: 'echo out; echo err >&2; exit 3' }, ctx);
  t.equal(r.isError, false, 'a non-zero exit is an answer, not a tool failure');
  t.match(r.content, /^out\n\[stderr\]\nerr\n\[exit code 3\]\n\[sandbox: /);
  t.match(r.content, new RegExp(`\\[sandbox: ${confined === 'landlock' ? 'landlock ABI \\d+' : 'bubblewrap'}.*network denied; processes `));

  const quiet = await exec.execute({ command: 'true' }, ctx);
  t.match(quiet.content, /^\(no output\)\n\[exit code 0\]/);
});

t.test('timeout and truncation are stated', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t, { outputCap: 1024 });
  const slow = await exec.execute({ command: 'echo started; sleep 30', timeoutSeconds: 1 }, ctx);
  t.equal(slow.isError, true);
  t.match(slow.content, /started\n\[killed with its process group: timed out after 1 s\]/);
  const big = await exec.execute({ command: 'head -c 5000 /dev/zero | tr "\\0" x' }, ctx);
  t.match(big.content, /^x{1024}\n\[exit code 0\]\n\[output truncated: 3976 more bytes not shown \(sandbox\.outputCap\)\]/);
});

t.test('the CPU limit kills with SIGXCPU', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t, { cpuSeconds: 1 });
  const r = await exec.execute({ command: 'while :; do :; done' }, ctx);
  t.equal(r.isError, true);
  t.match(r.content, /\[(exit code 152: )?killed by SIGXCPU: CPU time limit \(sandbox\.cpuSeconds\)\]/);
});

t.test('cwd: inside the workspace only', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t);
  const made = await exec.execute({ command: 'mkdir -p a/b && echo ok' }, ctx);
  t.match(made.content, /^ok/);
  const inSub = await exec.execute({ command: 'pwd', cwd: 'a/b' }, ctx);
  t.match(inSub.content, /\/a\/b\n\[exit code 0\]/);
  const out = await exec.execute({ command: 'pwd', cwd: '../..' }, ctx);
  t.equal(out.isError, true);
  t.match(out.content, /^exec failed: cwd \.\.\/\.\. is outside the workspace/);
  const missing = await exec.execute({ command: 'pwd', cwd: 'nope' }, ctx);
  t.match(missing.content, /cwd nope does not exist/);
});

t.test('the turn being aborted kills the command', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t);
  const ac = new AbortController();
  const pending = exec.execute({ command: 'echo go; sleep 60' }, { ...ctx, signal: ac.signal });
  setImmediate(() => ac.abort());
  const r = await pending;
  t.equal(r.isError, true);
  t.match(r.content, /the call was cancelled/);
});

t.test('commands run side by side', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const exec = tool(t);
  // Each waits for the next one's file, so they can only all finish if they run at once.
  const n = 4;
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      exec.execute({ command: `touch f${i}; while [ ! -e f${(i + 1) % n} ]; do sleep 0.02; done; echo done ${i}`, timeoutSeconds: 15 }, ctx),
    ),
  );
  results.forEach((r, i) => t.match(r.content, new RegExp(`^done ${i}\\n\\[exit code 0\\]`)));
});

t.test('a bad sandbox.allowedRoots refuses exec', async (t) => {
  const ws = workspace(t);
  const exec = execTool({ workspace: ws, sandbox: { ...defaults().sandbox, allowedRoots: ['relative/path'] } });
  const r = await exec.execute({ command: 'true' }, ctx);
  t.equal(r.isError, true);
  t.match(r.content, /^exec refused: sandbox\.allowedRoots: 'relative\/path' is not an absolute path/);
});

t.test('output streams to the context as it arrives, decoded and redacted, before the result', { skip: confined ? false : 'no sandbox on this host' }, async (t) => {
  const reg = createRegistry([tool(t)], { redact: (s) => s.replaceAll('hunter2', '[redacted]') });
  const chunks: { stream: string; text: string; at: number }[] = [];
  const started = Date.now();
  // "é" is written a byte at a time: the decoder must not split it into two replacement characters.
  const r = await reg.run(
    { name: 'exec', input: { command: "printf 'first\\n'; sleep 0.5; printf '\\303'; printf '\\251 hunter2\\n'; echo oops >&2" } },
    { ...ctx, onOutput: (stream, text) => chunks.push({ stream, text, at: Date.now() - started }) },
  );
  const out = chunks.filter((c) => c.stream === 'stdout').map((c) => c.text).join('');
  t.equal(out, 'first\né [redacted]\n');
  t.equal(chunks.filter((c) => c.stream === 'stderr').map((c) => c.text).join(''), 'oops\n');
  t.ok(chunks[0]!.text.startsWith('first') && chunks.some((c) => c.at - chunks[0]!.at >= 400), 'the first line arrived before the sleep ended');
  t.match(r.content, /^first\né \[redacted\]\n\[stderr\]\noops\n\[exit code 0\]/, 'the result holds it too');
});
