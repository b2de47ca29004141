// `pinclaw config show | unset | set` as real processes on a real home: the file holds only what the
// owner set (a set adds one key, never the defaults; a file full of defaults is left as it is), show
// prints it with secrets masked and names environment overrides, unset removes a key through the same
// checks as set, a mistyped key exits 2 naming the nearest one, and an unknown time zone names the
// nearest zone.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../src/config/index.js';
import { cleanEnv, runPinclaw, tempDir } from './support/proc.js';

function home(extra: Record<string, string> = {}) {
  const dir = tempDir();
  return { dir, file: join(dir, 'config.json'), env: cleanEnv({ PINCLAW_HOME: dir, ...extra }) };
}

t.test('set writes the one key; show prints what was set, secrets masked; unset takes it out again', async (t) => {
  const h = home();
  const none = runPinclaw(['config', 'show'], { env: h.env });
  t.equal(none.code, 0, none.stderr);
  t.equal(none.stdout, `${h.file} does not exist yet: every key has its default (pinclaw config set KEY VALUE to change one)\n`);
  t.equal(runPinclaw(['config', 'set', 'gateway.port', '8081'], { env: h.env }).code, 0);
  t.same(JSON.parse(readFileSync(h.file, 'utf8')), { gateway: { port: 8081 } }, 'only the key set is in the file, no defaults');
  t.equal(runPinclaw(['config', 'set', 'providers.anthropic.apiKey', 'sk-ant-very-secret'], { env: h.env }).code, 0);
  t.equal(runPinclaw(['config', 'set', 'channels.telegram.allowFrom', '["@me"]'], { env: h.env }).code, 0);
  const show = runPinclaw(['config', 'show'], { env: h.env });
  t.equal(show.code, 0, show.stderr);
  t.equal(show.stdout, 'gateway.port = 8081\nproviders.anthropic.apiKey = ********\nchannels.telegram.allowFrom = ["@me"]\n');
  t.notMatch(show.stdout + show.stderr, /sk-ant|enc:/, 'the secret is not shown, not even encrypted');
  const json = JSON.parse(runPinclaw(['config', 'show', '--json'], { env: h.env }).stdout) as { file: string; values: unknown; environment: unknown[] };
  t.same(json, { file: h.file, exists: true, values: { gateway: { port: 8081 }, providers: { anthropic: { apiKey: '********' } }, channels: { telegram: { allowFrom: ['@me'] } } }, environment: [] });

  const overridden = runPinclaw(['config', 'show'], { env: { ...h.env, PINCLAW_GATEWAY_PORT: '9000' } });
  t.match(overridden.stderr, /note: set in the environment, over the file: gateway\.port \(PINCLAW_GATEWAY_PORT\)/);

  const unset = runPinclaw(['config', 'unset', 'gateway.port'], { env: h.env });
  t.equal(unset.code, 0, unset.stderr);
  t.equal(unset.stdout, `unset gateway.port (back to its default: ${defaults().gateway.port})\n`);
  const after = JSON.parse(readFileSync(h.file, 'utf8')) as Record<string, unknown>;
  t.notOk('gateway' in after, 'the section left empty goes too');
  t.match(after, { providers: { anthropic: { apiKey: /^enc:/ } } }, 'the rest is kept as it was');
  const again = runPinclaw(['config', 'unset', 'gateway.port'], { env: h.env });
  t.equal(again.code, 0);
  t.equal(again.stdout, `gateway.port is not set in ${h.file}; nothing changed\n`);
});

t.test("a list is stored as the owner wrote it: its items' defaults stay out of the file", async (t) => {
  const h = home();
  const lines = [{ name: 'relay', line: 'GPIO17', direction: 'output' }];
  const r = runPinclaw(['config', 'set', 'hardware.lines', JSON.stringify(lines)], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(readFileSync(h.file, 'utf8')), { hardware: { lines } }, 'no activeLow: false added');
  const bad = runPinclaw(['config', 'set', 'hardware.lines', '[{"name":"relay","line":"GPIO17","direction":"sideways"}]'], { env: h.env });
  t.not(bad.code, 0, 'a bad item is still refused');
  t.same(JSON.parse(readFileSync(h.file, 'utf8')), { hardware: { lines } }, 'and nothing written');
});

t.test('a file full of defaults (written by an older version) is left as it is; a set changes one key', async (t) => {
  const h = home();
  const full = { gateway: { ...defaults().gateway }, log: { ...defaults().log } };
  const text = JSON.stringify(full, null, 2) + '\n';
  writeFileSync(h.file, text);
  t.equal(runPinclaw(['config', 'set', 'log.level', 'debug'], { env: h.env }).code, 0);
  t.same(JSON.parse(readFileSync(h.file, 'utf8')), { ...full, log: { ...full.log, level: 'debug' } }, 'the keys the file held stay, only log.level changed');
});

t.test('a mistyped key exits 2 with the nearest key, for get, set and unset; the file is untouched', async (t) => {
  const h = home();
  runPinclaw(['config', 'set', 'gateway.port', '8081'], { env: h.env });
  const before = readFileSync(h.file, 'utf8');
  for (const [args, usage] of [[['config', 'set', 'gateway.prot', '1'], 'pinclaw config set'], [['config', 'get', 'gateway.prot'], 'pinclaw config get'], [['config', 'unset', 'gateway.prot'], 'pinclaw config unset']] as const) {
    const r = runPinclaw([...args], { env: h.env });
    t.equal(r.code, 2, `${args.join(' ')} → exit 2`);
    t.match(r.stderr, /pinclaw: config: unknown key 'gateway\.prot' \(did you mean 'gateway\.port'\?\)/);
    t.match(r.stderr, `usage: ${usage}`);
  }
  t.equal(readFileSync(h.file, 'utf8'), before);
  const far = runPinclaw(['config', 'unset', 'zzzzzz'], { env: h.env });
  t.equal(far.code, 2);
  t.match(far.stderr, /unknown key 'zzzzzz'\n/, 'no suggestion when nothing is near');
  t.equal(runPinclaw(['config', 'shwo'], { env: h.env }).code, 2, 'a mistyped subcommand');
  t.match(runPinclaw(['config', 'shwo'], { env: h.env }).stderr, /unknown subcommand 'shwo' \(did you mean 'show'\?\)/);
});

t.test('an unknown time zone is refused naming the nearest one; the file keeps what it had', async (t) => {
  const h = home();
  runPinclaw(['config', 'set', 'gateway.port', '8081'], { env: h.env });
  const before = readFileSync(h.file, 'utf8');
  const r = runPinclaw(['config', 'set', 'agent.timezone', 'Europe/Berln'], { env: h.env });
  t.equal(r.code, 78);
  t.match(r.stderr, /agent\.timezone: unknown time zone 'Europe\/Berln' \(did you mean 'Europe\/Berlin'\?\); use an IANA name such as Europe\/Berlin/);
  t.match(r.stderr, `${h.file} was not changed`);
  t.equal(readFileSync(h.file, 'utf8'), before);
  t.equal(runPinclaw(['config', 'set', 'agent.timezone', 'Europe/Berlin'], { env: h.env }).code, 0, 'the right name is taken');
  // A zone written by hand is caught where it matters: the gateway does not start with it.
  writeFileSync(h.file, JSON.stringify({ agent: { timezone: 'America/Nwe_York' } }));
  const v = runPinclaw(['config', 'validate'], { env: h.env });
  t.equal(v.code, 78);
  t.match(v.stdout, /agent\.timezone: unknown time zone 'America\/Nwe_York' \(did you mean 'America\/New_York'\?\)/);
  const cron = runPinclaw(['cron', 'add', '--every', '1h', '--message', 'x', '--tz', 'Asia/Tokio'], { env: cleanEnv({ PINCLAW_HOME: tempDir() }) });
  t.equal(cron.code, 2);
  t.match(cron.stderr, /--tz: unknown time zone 'Asia\/Tokio' \(did you mean 'Asia\/Tokyo'\?\)/);
});

t.test('unset runs the same checks as set: a removal the gateway would refuse is refused', async (t) => {
  const h = home();
  writeFileSync(h.file, JSON.stringify({ gateway: { host: '0.0.0.0', token: 'a-long-enough-token' } }, null, 2));
  const before = readFileSync(h.file, 'utf8');
  const r = runPinclaw(['config', 'unset', 'gateway.token'], { env: h.env });
  t.equal(r.code, 78);
  t.match(r.stderr, /gateway\.host: refusing to listen on 0\.0\.0\.0 without gateway\.token/);
  t.match(r.stderr, `${h.file} was not changed`);
  t.equal(readFileSync(h.file, 'utf8'), before, 'nothing the owner set is lost');
  t.equal(runPinclaw(['config', 'unset', 'gateway.host'], { env: h.env }).code, 0, 'back to 127.0.0.1 first');
  t.equal(runPinclaw(['config', 'unset', 'gateway.token'], { env: h.env }).code, 0, 'then the token may go');
  t.same(JSON.parse(readFileSync(h.file, 'utf8')), {});
});
