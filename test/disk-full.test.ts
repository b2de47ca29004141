// A full disk during a turn, on a real small file system: the home is a 16 MB tmpfs, and the model
// stand-in fills it while the turn runs, so the turn's commit fails with SQLITE_FULL. The HTTP
// caller gets a 503 that says so, the turn is not run again (its tools acted once), its reply is
// kept and saved once space returns, the message is not left in 'processing', and /metrics and
// doctor show the disk. A claim (a write too) on a full disk is tried again later, not thrown from a timer.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensureWorkspace } from '../src/agent/workspace.js';
import { heuristicCount } from '../src/agent/tokens.js';
import { defaults } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import { createConductor, type ChannelAdapter } from '../src/conductor/conductor.js';
import { setLogSink } from '../src/log.js';
import { openDatabase } from '../src/store/db.js';
import { toolSet } from '../src/tools/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { bundle, cleanEnv, runPinclaw, start, tempDir } from './support/proc.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { startTelegramApi } from './support/telegram-api.js';

/** Mounts a tmpfs of `size` on a new directory; the reason when this machine cannot. */
function smallDisk(size: string): { dir: string } | { skip: string } {
  const dir = tempDir('pinclaw-disk-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): ${(err as Error).message.split('\n')[0]}` };
  }
  t.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}

/** Writes zeros to `file` until the file system refuses: the disk is full after this. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  // The last partial block too, so not even a page is left.
  const tail = openSync(`${file}.tail`, 'w');
  try {
    for (;;) writeSync(tail, Buffer.alloc(512));
  } catch {
    // full
  } finally {
    closeSync(tail);
  }
}

const disk = smallDisk('16m');
t.test('a full disk during a turn: a 503 to the caller, the reply saved once space returns, the turn not run again', { skip: 'skip' in disk ? disk.skip : false }, async (t) => {
  if (!('dir' in disk)) return;
  const home = disk.dir;
  const srv = await startAnthropicServer(textReply('a second answer: the turn ran twice'));
  t.teardown(() => srv.close());
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], {
    env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: 'd-token', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }),
  });
  t.teardown(() => gw.child.kill());
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  const auth = { authorization: 'Bearer d-token', 'content-type': 'application/json' };
  const filler = join(home, 'filler');

  // The model answers, but by then the disk is full.
  srv.enqueue(() => {
    fill(filler);
    return textReply('answered while the disk was full');
  });
  // Bounded: before the fix the caller waited for ever.
  const res = await fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'full', text: 'hello' }), signal: AbortSignal.timeout(60_000) });
  t.equal(res.status, 503, 'the caller gets an answer: service unavailable');
  const body = (await res.json()) as { error: string };
  t.match(body.error, `the reply could not be saved; it is kept and sent once there is space: the disk holding the pinclaw home (${home}) is full`);

  // While full: a new message is refused with the same reason, and the disk shows.
  const refused = await fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'other', text: 'hi' }) });
  t.equal(refused.status, 503);
  t.match(((await refused.json()) as { error: string }).error, /^message not saved: the disk holding the pinclaw home .* is full/);
  const metrics = await (await fetch(`${url}/metrics`, { headers: auth })).text();
  const free = Number(/^pinclaw_disk_free_bytes\{path="[^"]+"\} (\d+)$/m.exec(metrics)?.[1]);
  t.ok(free < 64 * 1024, `/metrics shows the disk nearly empty (${free} bytes free)`);
  t.match(metrics, /^pinclaw_disk_size_bytes\{path="[^"]+"\} \d+$/m);
  const doctor = runPinclaw(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: 'd-token', ANTHROPIC_API_KEY: 'sk-test' }) });
  const check = (JSON.parse(doctor.stdout) as { checks: { name: string; state: string; detail: string }[] }).checks.find((c) => c.name === 'disk');
  t.match(check, { state: 'fail', detail: new RegExp(`free of .* on the file system of ${home}`) }, 'doctor names the disk');

  // Space returns: the reply the turn made is saved (and sent), the model not asked again.
  rmSync(filler);
  rmSync(`${filler}.tail`);
  await gw.waitFor(/message\(s\) \d+: the reply is saved now and will be sent/);
  const deadline = Date.now() + 60_000;
  let state = '';
  while (Date.now() < deadline) {
    const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
    state = (db.prepare(`select state from inbound where session_key = 'full'`).get() as { state: string }).state;
    const replies = db.prepare(`select text from outbound where session_key = 'full' and kind = 'reply'`).all() as { text: string }[];
    db.close();
    if (state === 'done') {
      t.same(replies.map((r) => r.text), ['answered while the disk was full'], 'the reply of the one turn');
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(state, 'done', 'the message did not stay in processing');
  t.equal(srv.requests.length, 1, 'the turn ran once: its tools are not run again');
});

t.test('claiming on a full disk: the conductor tries again later instead of throwing from a timer', { skip: 'skip' in disk ? disk.skip : false }, async (t) => {
  if (!('dir' in disk)) return;
  const home = join(disk.dir, 'claim');
  mkdirSync(home);
  const db = openDatabase(join(home, 'pinclaw.db'));
  const workspace = join(home, 'workspace');
  ensureWorkspace(workspace);
  const bus = createBus();
  const channel: ChannelAdapter = { name: 'test', debounceMs: 300, send: async () => {} };
  const conductor = createConductor({
    db, config: defaults(), workspace, provider: async () => scriptedProvider([reply('claimed after all')]), tools: toolSet([]), countTokens: heuristicCount, bus, channels: [channel],
  });
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  const warnings: string[] = [];
  setLogSink((line) => void (line.startsWith('warn: ') && warnings.push(line)));
  t.teardown(() => setLogSink((line) => process.stderr.write(line + '\n')));
  conductor.start();
  // Queued with a debounce: the claim comes from a timer, after the disk is full.
  const row = conductor.submit({ sessionKey: 'c', channel: 'test', chatId: 'c', sender: 'u', text: 'later' });
  const filler = join(disk.dir, 'claim-filler');
  fill(filler);
  await new Promise<void>((resolve) => {
    const look = setInterval(() => {
      if (!warnings.some((w) => w.includes('cannot claim messages'))) return;
      clearInterval(look);
      resolve();
    }, 50);
  });
  t.match(warnings.find((w) => w.includes('cannot claim messages')), /conductor: cannot claim messages \(database or disk is full\); trying again in 5 s/);
  rmSync(filler);
  rmSync(`${filler}.tail`);
  const out = await conductor.delivered(row.id);
  t.equal(out.text, 'claimed after all', 'claimed and answered once space returned');
});

t.test('a Telegram message while the disk is full: the sender is told at once, the gateway runs on, and the message is taken once there is space', { skip: 'skip' in disk ? disk.skip : false }, async (t) => {
  if (!('dir' in disk)) return;
  const home = join(disk.dir, 'telegram');
  mkdirSync(home);
  const tg = await startTelegramApi();
  const llm = await startAnthropicServer(textReply('read it after the disk had space'));
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42'], pollTimeoutSeconds: 1, debounceMs: 0, streaming: false } } }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url }) });
  t.teardown(async () => {
    gw.child.kill('SIGKILL');
    await gw.exited;
    await Promise.all([tg.close(), llm.close()]);
  });
  await gw.waitFor(/gateway listening/);
  await tg.waitFor(() => tg.polling, 20_000);
  const filler = join(disk.dir, 'telegram-filler');
  fill(filler);
  const u = tg.userMessage({ from: { id: 42, username: 'ada', first_name: 'Ada' }, text: 'are you there?' });
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42), 30_000).catch((err: unknown) => { throw new Error(`${(err as Error).message}; gateway log: ${gw.stderr().slice(-3000)}`); });
  t.match(tg.sent[0]!.text, /^I could not take your message: the disk of the machine I run on is full\..*I will read your message as soon as there is space again/);
  await gw.waitFor(/error: telegram: update \d+ cannot be saved: .*full.*; it is kept at Telegram .* and taken once there is space/);
  t.ok(tg.confirmedOffset <= u.update_id, 'the update was not confirmed: Telegram keeps it');
  t.equal(gw.child.exitCode, null, 'the gateway runs on');
  rmSync(filler);
  rmSync(`${filler}.tail`);
  await tg.waitFor(() => tg.sent.some((m) => m.text === 'read it after the disk had space'), 60_000);
  t.equal(tg.sent.filter((m) => /disk .* is full/.test(m.text)).length, 1, 'told once, though the update came again');
  await tg.waitFor(() => tg.confirmedOffset > u.update_id, 20_000);
  t.equal(llm.requests.length, 1, 'one turn');
});
