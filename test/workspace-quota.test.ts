// files.workspaceQuotaMb on a real small file system (a tmpfs mounted for the test): write_file and
// edit_file refuse a write past it, and a sandboxed exec that writes file after file (each under
// RLIMIT_FSIZE, which bounds one file only) is stopped by the watcher far below what it asked for,
// its overshoot measured; an `rm` still runs at the quota, and writing works again after it.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../src/config/schema.js';
import { chooseBackend, detectSandbox } from '../src/sandbox/detect.js';
import { execTool } from '../src/tools/exec.js';
import { fileTools } from '../src/tools/files/index.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ToolContext, ToolResult } from '../src/tools/types.js';
import { MIB, workspaceBytes } from '../src/tools/workspace-quota.js';
import { tempDir } from './support/proc.js';

const ctx: ToolContext = { sessionKey: 'q', channel: 'cli', chatId: 'local', caller: 'owner' };

/** Why this machine cannot mount a tmpfs (not root, no CAP_SYS_ADMIN), or false when it can. */
function cannotMount(): string | false {
  const dir = tempDir('pinclaw-quota-probe-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir]);
    return false;
  } catch (err) {
    return `cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): ${(err as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const noMount = cannotMount();

/** A tmpfs of `size` with a workspace in it. */
function smallDisk(t: Test, size: string): string {
  const dir = tempDir('pinclaw-quota-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  t.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const ws = join(dir, 'workspace');
  mkdirSync(ws);
  return ws;
}

function tools(ws: string, quotaMb: number) {
  const files = { ...defaults().files, workspaceQuotaMb: quotaMb, maxWriteBytes: 4 * MIB };
  const reg = createRegistry([
    ...fileTools({ workspace: ws, settings: files }),
    execTool({ workspace: ws, sandbox: { ...defaults().sandbox, timeoutSeconds: 60 }, workspaceQuotaMb: quotaMb }),
  ]);
  return async (name: string, input: unknown): Promise<ToolResult> => (await reg.call({ name, input }, ctx)).result;
}

t.test('write_file and edit_file refuse a write past files.workspaceQuotaMb', { skip: noMount }, async (t) => {
  const ws = smallDisk(t, '64m');
  const run = tools(ws, 2);
  const mb = 'x'.repeat(MIB);
  t.match(await run('write_file', { path: 'a.txt', content: mb }), { content: /^wrote 1048576 bytes to a\.txt/ });
  const refused = await run('write_file', { path: 'b.txt', content: mb + mb });
  t.match(refused, { isError: true, content: /^write_file refused by rule "files\.workspaceQuotaMb": the workspace holds 1\.0 MB; 2\.1 MB more would take it past files\.workspaceQuotaMb \(2 MiB\); remove files from it \(exec rm\) or raise the quota$/ });
  t.match(await run('write_file', { path: 'a.txt', content: 'small now\n' }), { content: /^wrote 10 bytes to a\.txt/ }, 'replacing a file with a smaller one is fine');
  t.match(await run('write_file', { path: 'b.txt', content: mb }), { content: /^wrote/ });
  writeFileSync(join(ws, 'c.txt'), 'grow me\n');
  t.match(await run('edit_file', { path: 'c.txt', old_string: 'grow me', new_string: mb }), { isError: true, content: /^edit_file refused by rule "files\.workspaceQuotaMb"/ });
  t.match(await run('edit_file', { path: 'c.txt', old_string: 'grow me', new_string: 'grown' }), { content: /^edited c\.txt/ }, 'an edit that fits goes through');
});

const support = await detectSandbox();
const auto = chooseBackend('auto', support);

t.test('exec writing file after file is stopped near the quota; rm still runs', { skip: 'error' in auto ? `no sandbox backend here: ${auto.error}` : noMount }, async (t) => {
  const ws = smallDisk(t, '1g');
  const quotaMb = 32;
  const run = tools(ws, quotaMb);
  // 100 files of 8 MiB: 800 MiB asked, each file well under RLIMIT_FSIZE (sandbox.maxFileSizeMb, 256).
  const r = await run('exec', { command: 'i=0; while [ $i -lt 100 ]; do head -c 8388608 /dev/zero > f$i || exit 1; i=$((i+1)); done; echo finished' });
  const held = await workspaceBytes(ws);
  t.match(r, { isError: true, content: /\[killed with its process group: its writes passed what was left of files\.workspaceQuotaMb \(32 MiB; the workspace held .*\); what it wrote is still there: remove files \(rm\) before writing more\]/ });
  t.notMatch(r.content, /finished/, 'it did not run to the end');
  const over = held - quotaMb * MIB;
  t.comment(`asked 800 MiB; the workspace holds ${(held / MIB).toFixed(1)} MiB after the kill: ${(over / MIB).toFixed(1)} MiB past the ${quotaMb} MiB quota (what one 100 ms look lets through at this disk's speed)`);
  t.ok(held < 400 * MIB, `stopped below half of the 800 MiB asked (${(held / MIB).toFixed(1)} MiB)`);

  // At the quota, a command that frees space still runs, and then writing works again.
  t.match(await run('write_file', { path: 'n.txt', content: 'x' }), { isError: true, content: /files\.workspaceQuotaMb/ });
  t.match(await run('exec', { command: 'rm -f f*; echo cleaned' }), { content: /^cleaned\n\[exit code 0\]/ });
  t.match(await run('write_file', { path: 'n.txt', content: 'x' }), { content: /^wrote 1 bytes to n\.txt/ });
});
