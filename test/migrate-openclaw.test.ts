// `pinclaw migrate openclaw` through the real CLI (the built bundle and its lazy chunk) against
// fabricated OpenClaw homes of both eras (test/support/openclaw-home.ts): what it brings, that the
// OpenClaw home is never changed, that --dry-run writes nothing and a second run changes nothing,
// that secrets come only with --include-secrets, and that half-written input is named, not fatal.
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { decryptSecret, secretKey } from '../src/config/secrets.js';
import { ANTHROPIC_KEY, BOT_TOKEN, filesEraHome, openHandles, sqliteEraHome, transcriptLines } from './support/openclaw-home.js';
import { cleanEnv, runPinclaw, tempDir } from './support/proc.js';

t.teardown(() => openHandles.forEach((h) => h.close()));

/** Every path under dir with its bytes and mtime: a changed, added, removed or rewritten file shows. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      h.update(`${p}\0${st.mtimeMs}\0${st.mode}\0`);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) h.update(readFileSync(p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return h.digest('hex');
}

function migrate(pinclawHome: string, args: string[]) {
  return runPinclaw(['migrate', 'openclaw', ...args], { env: cleanEnv({ PINCLAW_HOME: pinclawHome, TZ: 'UTC' }) });
}

/** The parts of config.json the tests look at (all optional: a test checks what is absent too). */
interface ConfigFile {
  agent: { model?: string; fallbacks?: string[]; timezone?: string };
  providers: { openai?: { baseUrl?: string }; anthropic?: { apiKey: string } };
  channels: { telegram: { allowFrom?: string[]; token: string }; discord: { allowFrom?: string[]; token?: string }; signal?: Record<string, unknown> };
}

function rawConfig(home: string): ConfigFile {
  return JSON.parse(readFileSync(join(home, 'config.json'), 'utf8')) as ConfigFile;
}

function rows(home: string) {
  // Not read-only: a read-only connection leaves a -wal and -shm in the home; a writer's close removes them.
  const db = openDatabase(join(home, 'pinclaw.db'));
  try {
    return {
      jobs: db.prepare('select * from cron_jobs order by id').all() as (Record<string, unknown> & { next_run_at: number | null })[],
      sessions: db.prepare('select key, messages from sessions order by key').all() as { key: string; messages: string }[],
    };
  } finally {
    db.close();
  }
}

t.test('files era: brings workspace, skills (disabled), jobs, channels, model and sessions; the source is not changed', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  const before = treeHash(src);
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  // The plan is printed before the line that says it was written.
  t.ok(out.indexOf('will bring:') >= 0 && out.indexOf('will bring:') < out.indexOf('written:'), 'plan first, then the writes');
  t.match(out, /files era/);
  t.match(out, /channels\.whatsapp: pinclaw has no whatsapp channel/);
  t.match(out, /google\/gemini-3-pro: .*no baseUrl/);
  t.match(out, /allowFrom: "\*": pinclaw has no open policy/);
  t.match(out, /Long gone.*has passed/);
  t.match(out, /channels\.telegram\.botToken: a secret: brought only with --include-secrets/);
  t.match(out, /BOOTSTRAP\.md: pinclaw does not read this workspace file/);
  t.equal(treeHash(src), before, 'the OpenClaw home is byte for byte and mtime for mtime as it was');

  const c = rawConfig(home);
  t.equal(c.agent.model, 'anthropic/claude-opus-4-6');
  t.same(c.agent.fallbacks, ['openai/meta-llama/llama-4']);
  t.equal(c.providers.openai?.baseUrl, 'https://openrouter.ai/api/v1');
  t.equal(c.agent.timezone, 'Europe/Berlin');
  t.same(c.channels.telegram.allowFrom, ['123456789', '987654321']);
  t.same(c.channels.discord.allowFrom, ['80351110224678912']);
  t.same(c.channels.signal, { account: '+4915112345678', url: 'http://127.0.0.1:8080', allowFrom: ['+4915199999999'] });
  t.equal(c.channels.telegram.token, undefined, 'no token without --include-secrets');
  t.equal(c.providers.anthropic, undefined, 'no API key without --include-secrets');
  t.notMatch(readFileSync(join(home, 'config.json'), 'utf8'), new RegExp(`${BOT_TOKEN}|${ANTHROPIC_KEY}`));

  const ws = join(home, 'workspace');
  for (const f of ['AGENTS.md', 'SOUL.md', 'USER.md', 'IDENTITY.md', 'TOOLS.md', 'HEARTBEAT.md', 'MEMORY.md', 'memory/2026-07-01.md']) {
    t.equal(readFileSync(join(ws, f), 'utf8'), readFileSync(join(src, 'workspace', f), 'utf8'), f);
  }
  t.notOk(existsSync(join(ws, 'BOOTSTRAP.md')));
  for (const s of ['weather', 'notes']) t.ok(existsSync(join(ws, 'skills', s, '.disabled')), `skill ${s} installed disabled`);
  t.equal(readFileSync(join(ws, 'skills', 'weather', 'scripts', 'get.sh'), 'utf8'), '#!/bin/sh\ncurl wttr.in\n');

  const { jobs, sessions } = rows(home);
  t.equal(jobs.length, 2, 'the one-shot whose time passed is not brought');
  t.match(jobs[0], { kind: 'cron', expr: '0 7 * * *', tz: 'Europe/Berlin', message: 'Summarize the night.', channel: 'telegram', chat_id: '123456789', session_key: 'telegram:123456789', state: 'active', created_by: 'openclaw:job-morning' });
  t.ok((jobs[0]!.next_run_at ?? 0) > Date.now(), 'the next run is ahead');
  t.match(jobs[1], { kind: 'every', expr: '2h', every_ms: 7200000, message: 'Check the soil sensor.', channel: 'cron', state: 'paused', next_run_at: null, created_by: 'openclaw:job-water' });
  t.same(sessions.map((s) => s.key), ['openclaw:main:s-one', 'telegram:123456789'], "the Telegram DM's session continues in pinclaw's session of that chat");
  t.same(JSON.parse(sessions[0]!.messages), [
    { role: 'user', content: [{ type: 'text', text: 'hello one' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'hi, one\n\nthat file says hello' }] },
    { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
  ], 'user and assistant text, tool events left out, one role after the other');

  const shown = runPinclaw(['sessions', 'show', 'telegram:123456789'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, /hello two/);

  // The second run: everything is already here, nothing is written (not even a timestamp).
  const after1 = treeHash(home);
  const r2 = migrate(home, ['--from', src]);
  t.equal(r2.code, 0, r2.stderr);
  t.match(r2.stdout, /nothing to write/);
  t.match(r2.stdout, /cron job "Morning brief".*already brought/);
  t.match(r2.stdout, /session openclaw:main:s-one already brought/);
  t.notMatch(r2.stdout, /will bring:/);
  t.equal(treeHash(home), after1, 'the pinclaw home is unchanged by the second run');
  t.equal(treeHash(src), before);
});

t.test('--dry-run prints the plan and writes nothing, to a new home or an existing one', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  mkdirSync(home);
  const empty = treeHash(home);
  const r = migrate(home, ['--from', src, '--dry-run', '--include-secrets']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /will bring:[\s\S]*config channels\.telegram\.token = \(secret\)[\s\S]*dry run: nothing written/);
  t.notMatch(r.stdout, new RegExp(BOT_TOKEN), 'a secret is never printed');
  t.equal(treeHash(home), empty);
  // An existing home with a database: the dry run reads it without touching it (no -shm, no -wal).
  t.equal(migrate(home, ['--from', src]).code, 0);
  const filled = treeHash(home);
  const r2 = migrate(home, ['--from', src, '--dry-run']);
  t.equal(r2.code, 0, r2.stderr);
  t.equal(treeHash(home), filled);
});

t.test('--include-secrets brings the token and the API key, stored encrypted as config set stores them', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  const r = migrate(home, ['--from', src, '--include-secrets']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /secrets stored encrypted: .*channels\.telegram\.token/);
  const text = readFileSync(join(home, 'config.json'), 'utf8');
  t.notMatch(text, new RegExp(`${BOT_TOKEN}|${ANTHROPIC_KEY}`), 'no secret in clear in config.json');
  const c = rawConfig(home);
  const key = secretKey(join(home, 'secret.key'), false);
  t.equal(decryptSecret(c.channels.telegram.token, key, 'token'), BOT_TOKEN);
  t.equal(decryptSecret(c.providers.anthropic!.apiKey, key, 'apiKey'), ANTHROPIC_KEY);
  t.equal(c.channels.discord.token, undefined, 'an ${ENV} reference is not a token');
  t.match(r.stdout, /channels\.discord\.token: a reference to the environment variable DISCORD_BOT_TOKEN, not a value/);
  // Encryption is randomised: the second run compares the decrypted values, and writes nothing.
  const after1 = treeHash(home);
  const r2 = migrate(home, ['--from', src, '--include-secrets']);
  t.equal(r2.code, 0, r2.stderr);
  t.match(r2.stdout, /channels\.telegram\.token already holds that secret/);
  t.equal(treeHash(home), after1);
});

t.test("what pinclaw's owner already set is kept and named", async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ agent: { model: 'openai/gpt-5' }, channels: { telegram: { allowFrom: ['555'] } } }));
  writeFileSync(join(home, 'workspace', 'USER.md'), '# Mine\n');
  // A conversation pinclaw already has in the chat OpenClaw's Telegram session belongs to.
  const mine = JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'mine' }] }]);
  const db = openDatabase(join(home, 'pinclaw.db'));
  db.prepare(`insert into sessions (key, messages, meta, created_at, updated_at) values ('telegram:123456789', ?, '{}', 1, 1)`).run(mine);
  db.close();
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /pinclaw already has agent\.model = "openai\/gpt-5"; yours is kept/);
  t.match(r.stdout, /workspace\/USER\.md has your own text; kept/);
  const c = rawConfig(home);
  t.equal(c.agent.model, 'openai/gpt-5');
  t.same(c.channels.telegram.allowFrom, ['555', '123456789', '987654321'], 'allow-lists are merged');
  t.equal(readFileSync(join(home, 'workspace', 'USER.md'), 'utf8'), '# Mine\n');
  t.match(r.stdout, /pinclaw already has a conversation in telegram:123456789: kept; OpenClaw's comes as openclaw:main:s-two/);
  const { sessions } = rows(home);
  t.same(sessions.map((s) => s.key), ['openclaw:main:s-one', 'openclaw:main:s-two', 'telegram:123456789']);
  t.equal(sessions[2]!.messages, mine, "pinclaw's own conversation is untouched");
  const after1 = treeHash(home);
  t.equal(migrate(home, ['--from', src]).code, 0);
  t.equal(treeHash(home), after1, 'and a second run still writes nothing');
});

t.test('SQLite era: transcripts and jobs from the databases, a -wal commit included, the databases not touched', async (t) => {
  const src = sqliteEraHome(join(tempDir(), 'openclaw'), { wal: true });
  const home = join(tempDir(), 'pinclaw');
  const before = treeHash(src);
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /SQLite era/);
  t.equal(treeHash(src), before, 'databases, -wal and -shm unchanged, nothing created beside them');
  const { jobs, sessions } = rows(home);
  t.same(sessions.map((s) => s.key), ['openclaw:main:db-one', 'telegram:123456789']);
  const two = JSON.parse(sessions[1]!.messages) as { role: string; content: { text: string }[] }[];
  t.equal(two[two.length - 1]!.content[0]!.text, 'thanks\n\none more thing', 'the commit only in the -wal is read');
  t.same(jobs.map((j) => j.created_by), ['openclaw:job-db'], 'the job of the state database (no cron/jobs.json in this era)');
  const after1 = treeHash(home);
  t.equal(migrate(home, ['--from', src]).code, 0);
  t.equal(treeHash(home), after1);
});

t.test('a half-written home: each bad file named with its line, the rest brought, the source unchanged', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  // openclaw.json cut off mid-write, a transcript whose last line is cut, a database that is not one.
  const cfg = readFileSync(join(src, 'openclaw.json'), 'utf8');
  writeFileSync(join(src, 'openclaw.json'), cfg.slice(0, cfg.indexOf('channels:') + 30));
  const lines = transcriptLines('s-cut', 'cut');
  writeFileSync(join(src, 'agents', 'main', 'sessions', 's-cut.jsonl'), lines.join('\n') + '\n' + lines[2]!.slice(0, 25));
  mkdirSync(join(src, 'state'));
  writeFileSync(join(src, 'state', 'openclaw.sqlite'), 'this is not a database, it is a text file\n'.repeat(200));
  const home = join(tempDir(), 'pinclaw');
  const before = treeHash(src);
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 1, 'exit 1: part of the home could not be read');
  t.match(r.stdout, new RegExp(`could not read[\\s\\S]*${src}/openclaw\\.json:\\d+:\\d+: not valid JSON5`));
  t.match(r.stdout, new RegExp(`${src}/state/openclaw\\.sqlite: not a readable SQLite database`));
  t.match(r.stdout, new RegExp(`s-cut\\.jsonl:8: the last line is cut off`));
  t.match(r.stderr, /fix those files and run again/);
  t.equal(treeHash(src), before, 'nothing of the source changed');
  // What could be read is brought: the workspace, the jobs file, the sessions (the cut one up to its cut).
  t.ok(existsSync(join(home, 'workspace', 'SOUL.md')));
  const { sessions, jobs } = rows(home);
  t.same(sessions.map((s) => s.key), ['openclaw:main:s-cut', 'openclaw:main:s-one', 'telegram:123456789']);
  t.equal(jobs.length, 2);
  t.notOk(existsSync(join(home, 'config.json')), 'no config written from a config that could not be read');
});

t.test('JSON5 with comments and trailing commas, and a version newer than known: read, and said', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'), { version: '2027.1.4' });
  const home = join(tempDir(), 'pinclaw');
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /written by OpenClaw 2027\.1\.4, newer than this reader knows/);
  t.equal(rawConfig(home).agent.model, 'anthropic/claude-opus-4-6', 'what it recognises is still read');
});

t.test('where the home is: --from, OPENCLAW_STATE_DIR, and a clear error when there is none', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  const r = runPinclaw(['migrate', 'openclaw', '--dry-run'], { env: cleanEnv({ PINCLAW_HOME: home, OPENCLAW_STATE_DIR: src }) });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`OpenClaw home ${src}`));
  const missing = migrate(home, ['--from', join(src, 'nope')]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no OpenClaw home at .*nope \(--from\): give its place with --from DIR/);
  const bad = runPinclaw(['migrate', 'hermes'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /unknown subcommand 'hermes'/);
});

t.test('a write that fails midway leaves the pinclaw home as it was, and the next run brings everything', async (t) => {
  const src = filesEraHome(join(tempDir(), 'openclaw'));
  const home = join(tempDir(), 'pinclaw');
  // A file where the skills folder goes: the first write fails.
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'workspace', 'skills'), 'not a folder\n');
  const r = migrate(home, ['--from', src]);
  t.equal(r.code, 1);
  t.match(r.stderr, /the migration stopped while writing: .*skills.*run again/);
  t.ok(r.stdout.indexOf('will bring:') >= 0, 'the plan was printed before');
  t.notOk(existsSync(join(home, 'config.json')), 'no config written');
  t.notOk(existsSync(join(home, 'workspace', 'SOUL.md')), 'no workspace file written');
  t.same(rows(home).sessions, [], 'no session written');
  t.same(readdirSync(join(home, 'workspace')).sort(), ['skills'], 'no temporary file left behind');
  // The obstacle gone, the next run brings it all.
  rmSync(join(home, 'workspace', 'skills'));
  const r2 = migrate(home, ['--from', src]);
  t.equal(r2.code, 0, r2.stderr);
  t.equal(rows(home).sessions.length, 2);
  t.ok(existsSync(join(home, 'workspace', 'skills', 'weather', '.disabled')));
});
