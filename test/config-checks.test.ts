// `config set`, `config validate`, the gateway and `pinclaw agent` agree on what is a configuration
// error (exit 78): every key of the schema is walked with values picked from its kind (in range and
// out, each enum value and one more, strings empty and not, list items built from their fields),
// plus the cross-field cases that used to get through `config set`. What validate refuses, set
// refuses (nothing written); what validate accepts, set writes, and a real gateway starts with it.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolvePaths, type Paths } from '../src/paths.js';
import { leaves, type Field } from '../src/config/schema.js';
import { runConfig } from '../src/cli/config-command.js';
import type { CliContext } from '../src/cli/context.js';
import { PinclawError } from '../src/errors.js';
import { bundle, cleanEnv, runPinclaw, start, tempDir } from './support/proc.js';
import { receiveDatagrams, type Receiver } from './support/dgram-receiver.js';

interface Candidate {
  key: string;
  value: unknown;
}

/** Values for one field, picked from its kind alone; none of them is hand-chosen per key. */
function candidates(field: Field, depth = 0): unknown[] {
  switch (field.kind) {
    case 'string':
      return ['', 'x'];
    case 'integer':
    case 'number': {
      const out = new Set<number>([0, 1]);
      if (field.min !== undefined) out.add(field.min).add(field.min - 1);
      if (field.max !== undefined) out.add(field.max).add(field.max + 1);
      if (field.default !== undefined) out.add(field.default);
      out.add(field.kind === 'integer' ? 1.5 : 0.5);
      return [...out];
    }
    case 'boolean':
      return [true, false, 'yes'];
    case 'enum':
      return [...field.values, 'bogus'];
    case 'object': {
      if (depth > 2) return [{}];
      // The empty object, then one per field value (a list item is judged by its fields).
      const out: unknown[] = [{}];
      for (const [k, sub] of Object.entries(field.fields)) for (const v of candidates(sub, depth + 1)) out.push({ [k]: v });
      return out;
    }
    case 'array':
      return [[], 'x', ...candidates(field.items, depth + 1).map((v) => [v])];
    case 'record':
      return [{}, 'x', { '1bad': {} }, ...candidates(field.values, depth + 1).map((v) => ({ a: v }))];
  }
}

/** `value` at the dot path `key` of an empty config. */
function configWith(key: string, value: unknown): Record<string, unknown> {
  const segs = key.split('.');
  const root: Record<string, unknown> = {};
  let cur = root;
  for (const seg of segs.slice(0, -1)) cur = (cur[seg] = {}) as Record<string, unknown>;
  cur[segs[segs.length - 1]!] = value;
  return root;
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    const both = typeof prev === 'object' && prev !== null && !Array.isArray(prev) && typeof v === 'object' && v !== null && !Array.isArray(v);
    out[k] = both ? merge(prev as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

function home(t: Test): Paths {
  const dir = tempDir('pinclaw-config-checks-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return resolvePaths({ home: dir }, {});
}

/** Runs `pinclaw config SUB ARGS` in-process; the exit code and what it printed. */
async function config(paths: Paths, sub: string, args: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const ctx: CliContext = { paths, json: false, out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} };
  try {
    return { code: await runConfig(sub, args, ctx), text: lines.join('\n') };
  } catch (err) {
    if (!(err instanceof PinclawError)) throw err;
    return { code: err.exitCode, text: [...lines, err.message].join('\n') };
  }
}

async function validateRaw(paths: Paths, raw: Record<string, unknown>): Promise<{ code: number; text: string }> {
  mkdirSync(paths.home, { recursive: true });
  writeFileSync(paths.config, JSON.stringify(raw));
  return config(paths, 'validate', []);
}

const textOf = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * Starts a real gateway on `raw` (port 0) and stops it once it is ready. Ready is its READY=1 to
 * NOTIFY_SOCKET (as under systemd), not a log line: log.level is one of the keys walked.
 */
async function gatewayRun(raw: Record<string, unknown>, notify: Receiver, socket: string): Promise<{ listened: boolean; code: number | null; stderr: string }> {
  const dir = tempDir('pinclaw-config-gw-');
  try {
    writeFileSync(join(dir, 'config.json'), JSON.stringify(raw));
    notify.datagrams.length = 0;
    const g = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: dir, NOTIFY_SOCKET: socket }) });
    let exited = false;
    void g.exited.then(() => (exited = true));
    let listened = false;
    for (let waited = 0; !exited && waited < 30_000 && !listened; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      listened = notify.datagrams.some((d) => d.includes('READY=1'));
    }
    if (!exited) g.child.kill('SIGTERM');
    const stopTimer = setTimeout(() => g.child.kill('SIGKILL'), 20_000);
    const { code } = await g.exited;
    clearTimeout(stopTimer);
    return { listened, code, stderr: g.stderr() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('every key: what validate refuses, set refuses; what it accepts, set writes and the gateway starts with', async (t) => {
  const all: Candidate[] = leaves().flatMap(({ path, field }) => candidates(field).map((value) => ({ key: path, value })));
  t.ok(all.length > leaves().length * 2, `${all.length} values over ${leaves().length} keys`);
  const accepted: Candidate[] = [];
  let refused = 0;
  const began = performance.now();
  for (const c of all) {
    const paths = home(t);
    const v = await validateRaw(paths, configWith(c.key, c.value));
    t.not(v.code, 1, `validate does not fail unexpectedly on ${c.key}=${textOf(c.value)}: ${v.text}`);
    rmSync(paths.config);
    const s = await config(paths, 'set', ['--', c.key, textOf(c.value)]);
    const same = (v.code === 0) === (s.code === 0);
    if (!same) t.fail(`${c.key}=${textOf(c.value)}: validate ${v.code} (${v.text}), set ${s.code} (${s.text})`);
    if (v.code !== 0) {
      refused++;
      t.equal(s.code, 78, `set refuses ${c.key}=${textOf(c.value)} with exit 78`);
      t.notOk(existsSync(paths.config), `nothing written for ${c.key}=${textOf(c.value)}`);
      continue;
    }
    accepted.push(c);
    // What set wrote passes validate in turn (a secret may be stored encrypted: the file is not compared).
    const again = await config(paths, 'validate', []);
    t.equal(again.code, 0, `validate accepts what set wrote for ${c.key}=${textOf(c.value)}: ${again.text}`);
  }
  t.ok(refused > 0 && accepted.length > 0, `${refused} refused, ${accepted.length} accepted`);
  t.comment(`walk: ${Math.round(performance.now() - began)} ms`);

  // Accepted values, merged into as few configs as validate still accepts together, each started
  // as a real gateway; one that does not start is split until the values to blame are found.
  const batches: { raw: Record<string, unknown>; items: Candidate[] }[] = [];
  const probe = home(t);
  for (const c of accepted) {
    let placed = false;
    for (const b of batches) {
      if (b.items.some((i) => i.key === c.key || i.key.startsWith(`${c.key}.`) || c.key.startsWith(`${i.key}.`))) continue;
      const raw = merge(b.raw, configWith(c.key, c.value));
      if ((await validateRaw(probe, raw)).code !== 0) continue;
      b.raw = raw;
      b.items.push(c);
      placed = true;
      break;
    }
    if (!placed) batches.push({ raw: configWith(c.key, c.value), items: [c] });
  }
  t.comment(`batching: ${Math.round(performance.now() - began)} ms`);
  t.ok(batches.length < accepted.length, `${accepted.length} accepted values in ${batches.length} gateway starts`);
  const sockDir = tempDir('pinclaw-config-notify-');
  const socket = join(sockDir, 'notify.sock');
  const notify = await receiveDatagrams(socket);
  t.teardown(() => {
    notify.close();
    rmSync(sockDir, { recursive: true, force: true });
  });
  const blame = async (items: Candidate[]): Promise<void> => {
    const raw = items.reduce((acc, c) => merge(acc, configWith(c.key, c.value)), {});
    const g = await gatewayRun(raw, notify, socket);
    if (g.listened && g.code === 0) return;
    if (items.length === 1) {
      t.fail(`the gateway did not start on ${items[0]!.key}=${textOf(items[0]!.value)}, which validate accepts (exit ${g.code}): ${g.stderr}`);
      return;
    }
    const half = Math.ceil(items.length / 2);
    await blame(items.slice(0, half));
    await blame(items.slice(half));
  };
  for (const b of batches) {
    const g = await gatewayRun(b.raw, notify, socket);
    t.not(g.code, 78, `the gateway does not exit 78 on a config validate accepted (${b.items.length} values)`);
    if (!(g.listened && g.code === 0)) await blame(b.items);
    else t.pass(`the gateway started and stopped on ${b.items.length} accepted values`);
  }
});

// The cases of issue 31, each refused the same way by set, validate, the gateway and the agent.
const crossField: { name: string; before: Record<string, unknown>; key: string; value: string; message: RegExp }[] = [
  {
    name: 'a board line with a space',
    before: { board: { profile: 'rpi-3b' } },
    key: 'hardware.lines',
    value: '[{"name":"lamp","line":"GPIO 17","direction":"output"}]',
    message: /hardware\.lines\[0\]\.line: expected a line of rpi-3b .*found string "GPIO 17" \(did you mean 'GPIO17'\?\)/,
  },
  {
    name: 'a trigger on an output line',
    before: { board: { profile: 'rpi-3b' }, hardware: { lines: [{ name: 'lamp', line: 'GPIO17', direction: 'output' }] } },
    key: 'hardware.triggers',
    value: '[{"line":"lamp","session":"home","message":"pressed"}]',
    message: /hardware\.triggers\[0\]\.line: expected an input line, found string "lamp", an output/,
  },
  { name: 'a model without provider', before: {}, key: 'agent.model', value: 'gpt-5', message: /agent\.model: expected provider\/model .*found "gpt-5"/ },
  { name: 'a model of an unknown provider', before: {}, key: 'agent.model', value: 'foo/bar', message: /agent\.model: unknown provider 'foo' in "foo\/bar"; known: anthropic, openai/ },
  { name: 'a fallback of an unknown provider', before: {}, key: 'agent.fallbacks', value: '["openai/gpt-5","foo/bar"]', message: /agent\.fallbacks\[1\]: unknown provider 'foo'/ },
  { name: 'a camera port without its token', before: {}, key: 'hardware.maixcam.port', value: '7421', message: /hardware\.maixcam\.token: required when hardware\.maixcam\.port is set/ },
  { name: 'the gateway on the network without a token', before: {}, key: 'gateway.host', value: '0.0.0.0', message: /refusing to listen on 0\.0\.0\.0 without gateway\.token/ },
  { name: 'an MQTT broker that is not a URL', before: {}, key: 'mqtt.url', value: 'broker.lan', message: /mqtt\.url: "broker\.lan" is not a URL/ },
  { name: 'a heartbeat every second', before: {}, key: 'heartbeat.every', value: '1s', message: /heartbeat\.every: '1s' is shorter than a minute/ },
  { name: 'a search provider without its key', before: {}, key: 'web.search.provider', value: 'brave', message: /web\.search\.apiKey: required when web\.search\.provider is "brave"/ },
];

for (const c of crossField) {
  t.test(`${c.name}: set refuses it as validate, the gateway and the agent do`, async (t) => {
    const dir = tempDir('pinclaw-config-cross-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const env = cleanEnv({ PINCLAW_HOME: dir, ANTHROPIC_API_KEY: 'sk-test' });
    const file = join(dir, 'config.json');
    const before = JSON.stringify(c.before, null, 2);
    writeFileSync(file, before);
    t.equal(runPinclaw(['config', 'validate'], { env }).code, 0, 'the config before the change is valid');

    const set = runPinclaw(['config', 'set', c.key, c.value], { env });
    t.equal(set.code, 78, 'config set exits 78');
    t.match(set.stderr, c.message, 'config set names the problem');
    t.match(set.stderr, /was not changed/, 'and says nothing was written');
    t.equal(readFileSync(file, 'utf8'), before, 'the file is byte-identical');

    // The same change by hand: every process refuses it with the same words.
    const segs = c.key.split('.');
    const raw = merge(c.before, configWith(c.key, c.value.startsWith('[') ? JSON.parse(c.value) : /^\d+$/.test(c.value) ? Number(c.value) : c.value));
    writeFileSync(file, JSON.stringify(raw));
    t.ok(segs.length > 0);
    const validate = runPinclaw(['config', 'validate'], { env });
    t.equal(validate.code, 78, 'config validate exits 78');
    t.match(validate.stdout, c.message);
    const gateway = runPinclaw(['gateway', '--port', '0'], { env });
    t.equal(gateway.code, 78, 'the gateway exits 78 before it starts');
    t.match(gateway.stderr, c.message);
    const agent = runPinclaw(['agent', '-m', 'hi'], { env });
    t.equal(agent.code, 78, 'pinclaw agent exits 78 before it starts');
    t.match(agent.stderr, c.message);
  });
}

t.test('a problem already in the file does not block a set that fixes another, and a set adding one is refused', async (t) => {
  const paths = home(t);
  mkdirSync(paths.home, { recursive: true });
  writeFileSync(paths.config, JSON.stringify({ agent: { model: 'gpt-5' }, heartbeat: { every: '1s' } }));
  const fix = await config(paths, 'set', ['heartbeat.every', '30m']);
  t.equal(fix.code, 0, 'the fix of heartbeat.every is written');
  t.match(fix.text, /note: still to fix: agent\.model: expected provider\/model/, 'the problem left is shown');
  const worse = await config(paths, 'set', ['heartbeat.every', '2s']);
  t.equal(worse.code, 78);
  t.match(worse.text, /heartbeat\.every: '2s' is shorter than a minute/);
  t.notMatch(worse.text, /agent\.model/, 'only what the change adds is the refusal');
  t.same(JSON.parse(readFileSync(paths.config, 'utf8')).heartbeat, { every: '30m' }, 'the refused change was not written');
  t.equal((await config(paths, 'set', ['agent.model', 'openai/gpt-5'])).code, 0);
  t.equal((await config(paths, 'validate', [])).code, 0, 'valid at the end');
});

// The problems before and after a set are matched by their check, their setting and their words
// with the values taken out. Before, the message text was compared, and it carries the value: a
// heartbeat.every still too short ('1s', then '2s') counted as a problem the set added and was
// refused, though the file had that very problem already.
t.test('config set: the same problem with another value is not new; another problem at the same setting is', async (t) => {
  const paths = home(t);
  mkdirSync(paths.home, { recursive: true });
  writeFileSync(paths.config, JSON.stringify({ heartbeat: { every: '1s' } }));
  const same = await config(paths, 'set', ['heartbeat.every', '2s']);
  t.equal(same.code, 0, same.text);
  t.match(same.text, /note: still to fix: heartbeat\.every: '2s' is shorter than a minute/, 'and it is shown as still to fix');
  t.same(JSON.parse(readFileSync(paths.config, 'utf8')).heartbeat, { every: '2s' });
  const other = await config(paths, 'set', ['heartbeat.every', 'soon']);
  t.equal(other.code, 78, 'not a duration at all is another problem, though at the same setting');
  t.match(other.text, /heartbeat\.every: expected a duration .* got 'soon'/);
  t.same(JSON.parse(readFileSync(paths.config, 'utf8')).heartbeat, { every: '2s' }, 'the refused change was not written');
  const elsewhere = await config(paths, 'set', ['agent.model', 'gpt-5']);
  t.equal(elsewhere.code, 78, 'a problem at another setting is new');
  t.match(elsewhere.text, /agent\.model: expected provider\/model/);
  t.notMatch(elsewhere.text, /heartbeat/, 'only what the change adds is the refusal');
});

t.test('--host replaces gateway.host in the check, both ways', async (t) => {
  const dir = tempDir('pinclaw-config-host-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = cleanEnv({ PINCLAW_HOME: dir });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ gateway: { host: '0.0.0.0' } }));
  const g = start(process.execPath, [bundle, 'gateway', '--port', '0', '--host', '127.0.0.1'], { env });
  await g.waitFor(/gateway listening on http:\/\/127\.0\.0\.1:/);
  g.child.kill('SIGTERM');
  t.equal((await g.exited).code, 0, 'the gateway bound to loopback by --host starts');
  writeFileSync(join(dir, 'config.json'), '{}');
  const r = runPinclaw(['gateway', '--port', '0', '--host', '0.0.0.0'], { env });
  t.equal(r.code, 78);
  t.match(r.stderr, /^pinclaw: refusing to listen on 0\.0\.0\.0 without gateway\.token/);
});
