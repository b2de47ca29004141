// doctor's hooks check: each configured hook with its program (found or not, inside the sandbox's
// reach or not), its sandbox, its onFailure and timeout; through a real `pinclaw doctor --json`
// (the bundle and its hooks chunk) and, for the finer cases, the check itself.
import t from 'tap';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig } from '../src/config/index.js';
import { commandWords, hooksCheck } from '../src/hooks/doctor.js';
import { chooseBackend, detectSandbox } from '../src/sandbox/detect.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

const auto = chooseBackend('auto', await detectSandbox());
const confined = !('error' in auto) && auto.backend !== 'none';

type Check = { name: string; state: string; detail: string };

t.test('pinclaw doctor lists every hook: program found, sandbox, onFailure, timeout; a missing program of a blocking hook fails', async (t) => {
  const home = tempDir();
  const ws = join(home, 'workspace');
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'guard.sh'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(ws, 'guard.sh'), 0o755);
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    hooks: {
      PreToolUse: [{ matcher: 'relay_write', command: 'sh guard.sh', timeoutMs: 3000 }],
      PostToolUse: [{ command: 'no-such-hook-program --flag', onFailure: 'continue' }],
      HardwareTrigger: [{ command: 'exit 0' }],
    },
  }));
  const r = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  const hooks = (JSON.parse(r.stdout) as { checks: Check[] }).checks.find((c) => c.name === 'hooks');
  t.ok(hooks, 'doctor has a hooks check');
  t.equal(hooks!.state, 'warn', 'a missing program of a hook that continues on failure is a warning');
  const lines = hooks!.detail.split('; hooks.');
  t.match(lines[0], /^hooks\.PreToolUse\[0\] \(matcher relay_write\): sh guard\.sh: \/\S+\/sh \/\S+\/workspace\/guard\.sh; (sandbox (landlock|bubblewrap)|unconfined|no sandbox)/);
  t.match(lines[0], /onFailure block \(default\), timeout 3000 ms$/);
  t.match(hooks!.detail, /PostToolUse\[0\]: no-such-hook-program --flag: its program no-such-hook-program is not installed \(not in \/usr\/local\/bin:\/usr\/bin:\/bin, the sandbox's PATH\); .*onFailure continue, timeout 10000 ms/);
  t.match(hooks!.detail, /HardwareTrigger\[0\]: exit 0: exit \(a shell builtin\); .*onFailure block \(default\)/);

  writeFileSync(join(home, 'config.json'), JSON.stringify({ hooks: { PreToolUse: [{ command: 'no-such-hook-program' }] } }));
  const failing = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  const check = (JSON.parse(failing.stdout) as { ok: boolean; checks: Check[] }).checks.find((c) => c.name === 'hooks');
  t.equal(check!.state, 'fail', 'a PreToolUse hook that cannot run blocks every tool call: a failure');
  t.match(check!.detail, /so every event it matches is blocked/);

  writeFileSync(join(home, 'config.json'), JSON.stringify({}));
  const none = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.notOk((JSON.parse(none.stdout) as { checks: Check[] }).checks.some((c) => c.name === 'hooks'), 'no hooks, no check');
});

t.test('a script outside the sandbox\'s reach is named with the way out', { skip: confined ? false : 'no confining sandbox here' }, async (t) => {
  const home = tempDir();
  const ws = join(home, 'workspace');
  mkdirSync(ws, { recursive: true });
  const outside = join(home, 'hook.py');
  writeFileSync(outside, 'print(1)\n');
  const { config } = validateConfig({ hooks: { PostToolUse: [{ command: `python3 ${outside}` }, { command: `${outside} --x` }] } });
  const c = await hooksCheck(config!, ws);
  t.match(c.detail, new RegExp(`its script ${outside} is outside the sandbox's reach \\(move it into the workspace, or add its directory to sandbox\\.allowedRoots\\)`));
  t.match(c.detail, new RegExp(`its program ${outside} is not executable \\(chmod \\+x\\)`));
  chmodSync(outside, 0o755);
  const allowed = validateConfig({ sandbox: { allowedRoots: [home] }, hooks: { PostToolUse: [{ command: `${outside} --x` }] } }).config!;
  t.match((await hooksCheck(allowed, ws)).detail, new RegExp(`: ${outside} --x: ${outside}; sandbox`), 'inside sandbox.allowedRoots it is found');
});

t.test('commandWords: assignments skipped, quotes taken off, the first simple command only', async (t) => {
  t.same(commandWords(`FOO=1 BAR='a b' "/opt/my hooks/run" --x && other`), ['/opt/my hooks/run', '--x']);
  t.same(commandWords('jq .tool_name | grep -q relay'), ['jq', '.tool_name']);
  t.same(commandWords('   '), []);
});
