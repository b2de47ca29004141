// Without the native addon (native.enabled = false here, in a process that never loaded it): auto
// falls back to bubblewrap, an explicit landlock is refused with the reason, and doctor says so.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaults } from '../src/config/schema.js';
import { configureNative } from '../src/native/loader.js';
import { sandboxCheck } from '../src/sandbox/doctor.js';
import { detectSandbox, execSandbox } from '../src/sandbox/detect.js';
import { execTool } from '../src/tools/exec.js';

configureNative({ enabled: false });
const support = await detectSandbox();
const ctx = { sessionKey: 'test', channel: 'cli', chatId: 'local' };

t.test('no addon: no Landlock, and the reason', async (t) => {
  t.equal(support.landlock.abi, 0);
  t.match(support.landlock.reason, /no native addon: disabled by configuration/);
});

t.test('auto falls back to bubblewrap', { skip: support.bubblewrap?.usable ? false : 'bubblewrap unavailable here' }, async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'pinclaw-fallback-'));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  const exec = execTool({ workspace: ws, sandbox: defaults().sandbox });
  const r = await exec.execute({ command: 'echo $PINCLAW_SANDBOX' }, ctx);
  t.match(r.content, /^bubblewrap\n\[exit code 0\]\n\[sandbox: bubblewrap /);
  const check = await sandboxCheck(defaults().sandbox);
  t.equal(check.state, 'ok');
  t.match(check.detail, /^bubblewrap .*\(no Landlock \(no native addon.*; exec is in the standard tool profile$/);
  t.same(await execSandbox('auto'), { inForce: true, backend: 'bubblewrap' }, 'the standard profile offers exec inside bubblewrap');
});

t.test('an explicit landlock backend is refused, never silently replaced', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'pinclaw-fallback-'));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  const exec = execTool({ workspace: ws, sandbox: { ...defaults().sandbox, backend: 'landlock' } });
  const r = await exec.execute({ command: 'true' }, ctx);
  t.equal(r.isError, true);
  t.match(r.content, /^exec refused: sandbox\.backend is landlock, but Landlock unavailable: no native addon/);
  const check = await sandboxCheck({ ...defaults().sandbox, backend: 'landlock' });
  t.equal(check.state, 'fail');
  t.match(check.detail, /so exec is not in the standard tool profile/);
  t.match(await execSandbox('landlock'), { inForce: false, reason: /^sandbox\.backend is landlock, but Landlock unavailable: no native addon/ }, 'so exec stays opt-in');
  t.match(await execSandbox('none'), { inForce: false, reason: /unconfined/ });
});
