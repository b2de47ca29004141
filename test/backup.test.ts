// `pinclaw backup` / `pinclaw restore` as real processes (the bundle) on real homes: a backup taken
// while a gateway answers chats and another connection keeps writing is a consistent database
// (integrity_check, GNU tar reads the file, the checksums hold) and restores into a working home;
// secrets only on request; a non-empty home only with --force, keeping what it held; a running
// gateway, a truncated or corrupt file and a newer schema refused with nothing changed. The tar code
// itself is compared with GNU tar both ways.
import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, openPlainDatabase } from '../src/store/db.js';
import { readTarGz, writeTarGz, type TarEntry } from '../src/archive.js';
import { knownSchemaVersion, restoreBackup } from '../src/ops/backup.js';
import { tryLockHome } from '../src/store/home-lock.js';
import { resolvePaths } from '../src/paths.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, run, runPinclawAsync, start, tempDir } from './support/proc.js';

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Every file under a directory with its SHA-256: "nothing changed" compares two of these. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p, r);
      else out[r] = sha256(p);
    }
  };
  walk(dir, '');
  return out;
}

/** A home with a database, a config with an encrypted key, and workspace files. */
async function makeHome(extraEnv: Record<string, string> = {}): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, ...extraEnv });
  for (const args of [['config', 'set', '--secret', 'providers.anthropic.apiKey', 'sk-ant-secret-123'], ['config', 'set', 'gateway.port', '7999'], ['doctor']]) {
    const r = await runPinclawAsync(args, { env });
    if (args[0] === 'config') t.equal(r.code, 0, r.stderr);
  }
  mkdirSync(join(home, 'workspace', 'memory'), { recursive: true });
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# Memory\nThe spare key is under the blue pot.\n');
  writeFileSync(join(home, 'workspace', 'memory', '2025-01-01.md'), 'New year.\n');
  return { home, env };
}

async function gatewayOn(t: Test, env: NodeJS.ProcessEnv) {
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  return { gw, url };
}

t.test('a backup taken while the gateway writes is consistent and restores into a working home', async (t) => {
  const srv = await startAnthropicServer(textReply('noted'));
  t.teardown(() => srv.close());
  const token = 'tok-backup';
  const { home, env } = await makeHome({ ANTHROPIC_BASE_URL: srv.url, PINCLAW_GATEWAY_TOKEN: token });
  // 24 MiB of rows, so the snapshot takes several steps (and shows its progress), with a writer
  // changing the database between them.
  {
    const db = openDatabase(join(home, 'pinclaw.db'));
    db.exec('create table test_filler (id integer primary key, data blob)');
    const insert = db.prepare('insert into test_filler (data) values (?)');
    db.transaction(() => {
      for (let i = 0; i < 384; i++) insert.run(Buffer.alloc(64 * 1024, i % 251));
    })();
    db.close();
  }
  const { gw, url } = await gatewayOn(t, env);

  let stop = false;
  const turns = { n: 0 };
  const chatting = (async () => {
    for (let i = 0; !stop; i++) {
      const r = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ session: `s${i % 3}`, text: `message ${i}` }) });
      if (r.ok) turns.n++;
      await r.arrayBuffer();
    }
  })();
  const writes = { n: 0 };
  const writing = (async () => {
    const db = openDatabase(join(home, 'pinclaw.db'));
    const update = db.prepare('update test_filler set data = ? where id = ?');
    try {
      for (let i = 0; !stop; i++) {
        update.run(Buffer.alloc(64 * 1024, (i * 7) % 251), (i % 384) + 1);
        writes.n++;
        await new Promise((r) => setTimeout(r, 2));
      }
    } finally {
      db.close();
    }
  })();
  while (turns.n < 3) await new Promise((r) => setTimeout(r, 20));

  const file = join(tempDir(), 'home.tar.gz');
  const writesBefore = writes.n;
  const b = await runPinclawAsync(['backup', file], { env });
  const writesDuring = writes.n - writesBefore;
  stop = true;
  await Promise.all([chatting, writing]);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, 'the gateway ran on undisturbed and stops cleanly');

  t.equal(b.code, 0, b.stderr);
  t.ok(writesDuring > 0, `the other connection wrote during the backup (${writesDuring} writes), the gateway answered ${turns.n} turns`);
  t.match(b.stdout, /^backup: .*home\.tar\.gz \([\d.]+ [KM]iB\): pinclaw\.db \(schema v\d+\), config\.json, workspace\/ \(\d+ files\)\n$/);
  t.match(b.stderr, /backup: database snapshot [\d.]+ MiB of 2\d\.\d MiB \(\d+%\)/, 'progress in bytes for a large database');
  t.match(b.stderr, /the config's secret values stay encrypted in the backup; restoring them needs this home's .*secret\.key, which is not in it/);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the backup is readable by its owner only');
  t.same(readdirSync(join(file, '..')), ['home.tar.gz'], 'no staging or partial file left beside it');

  // GNU tar reads it; every file matches the manifest; the database passes integrity_check.
  const x = tempDir();
  const tar = run('tar', ['-xzf', file, '-C', x]);
  t.equal(tar.code, 0, tar.stderr);
  const manifest = JSON.parse(readFileSync(join(x, 'manifest.json'), 'utf8')) as { format: string; schemaVersion: number; pinclawVersion: string; createdAt: string; includesSecrets: boolean; files: { path: string; size: number; sha256: string }[] };
  t.match(manifest, { format: 'pinclaw-backup', schemaVersion: knownSchemaVersion(), pinclawVersion: /^\d+\.\d+\.\d+/, includesSecrets: false });
  t.ok(Date.now() - Date.parse(manifest.createdAt) < 120_000, 'created_at is now');
  const listed = manifest.files.map((f) => f.path);
  for (const p of ['config.json', 'pinclaw.db', 'workspace/MEMORY.md', 'workspace/memory/2025-01-01.md', 'workspace/AGENTS.md']) t.ok(listed.includes(p), `the manifest lists ${p}`);
  for (const f of manifest.files) {
    t.equal(sha256(join(x, f.path)), f.sha256, `${f.path}: SHA-256 as in the manifest`);
    t.equal(statSync(join(x, f.path)).size, f.size);
  }
  t.notOk(existsSync(join(x, 'secret.key')), 'no key without --include-secrets');
  t.notOk(existsSync(join(x, 'pinclaw.db-wal')), 'the database is one self-contained file');
  const copy = openPlainDatabase(join(x, 'pinclaw.db'), { readonly: true });
  t.same(copy.pragma('integrity_check'), [{ integrity_check: 'ok' }], 'the snapshot passes integrity_check');
  t.equal((copy.prepare('select count(*) as n from test_filler').get() as { n: number }).n, 384);
  copy.close();

  // Into an empty home: a working home (the key is copied by hand, as the output said).
  const restored = join(tempDir(), 'restored');
  const renv = cleanEnv({ PINCLAW_HOME: restored });
  const r = await runPinclawAsync(['restore', file], { env: renv });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^restored \d+ files from a backup of \S+ \(pinclaw \S+, schema v\d+\) into .*restored\nnext: pinclaw doctor\n$/);
  t.match(r.stderr, /restore: 1 secret of the restored config cannot be read \(the backup has no secret\.key\): providers\.anthropic\.apiKey\. .*Copy the secret\.key of the home the backup came from/);
  copyFileSync(join(home, 'secret.key'), join(restored, 'secret.key'));
  chmodSync(join(restored, 'secret.key'), 0o600);
  const doctor = await runPinclawAsync(['doctor'], { env: renv });
  t.equal(doctor.code, 0, doctor.stdout);
  t.match(doctor.stdout, /ok +database: .*schema v\d+/);
  const sessions = await runPinclawAsync(['sessions', 'list', '--json'], { env: renv });
  t.equal(sessions.code, 0, sessions.stderr);
  t.ok((JSON.parse(sessions.stdout) as { key: string }[]).some((s) => /^s\d$/.test(s.key)), 'the sessions the gateway saved are there');
  t.equal((await runPinclawAsync(['config', 'get', 'gateway.port'], { env: renv })).stdout, '7999\n');
  t.equal(readFileSync(join(restored, 'workspace', 'MEMORY.md'), 'utf8'), '# Memory\nThe spare key is under the blue pot.\n');
  t.equal(statSync(join(restored, 'config.json')).mode & 0o777, 0o600, 'the config keeps its mode');
  t.same(readdirSync(restored).filter((f) => f.startsWith('.')), [], 'no temporary directory left');
});

t.test('--include-secrets: the key is in the backup, said loudly; the restored home reads its keys', async (t) => {
  const { home, env } = await makeHome();
  const file = join(tempDir(), 'with-key.tar.gz');
  const b = await runPinclawAsync(['backup', file, '--include-secrets'], { env });
  t.equal(b.code, 0, b.stderr);
  t.match(b.stderr, /^warning: this backup contains the secret key: anyone with the file can read your API keys$/m);
  t.match(b.stdout, /config\.json, secret\.key, workspace\//);
  const list = run('tar', ['-tzvf', file]);
  t.match(list.stdout, /-rw------- .* secret\.key\n/, 'the key is in it, mode 0600');

  const restored = tempDir();
  const renv = cleanEnv({ PINCLAW_HOME: restored });
  const r = await runPinclawAsync(['restore', file], { env: renv });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '', 'nothing to warn about: the key came along');
  t.equal(statSync(join(restored, 'secret.key')).mode & 0o777, 0o600);
  t.equal(sha256(join(restored, 'secret.key')), sha256(join(home, 'secret.key')));
  t.equal((await runPinclawAsync(['config', 'validate'], { env: renv })).code, 0);
  const { loadConfig } = await import('../src/config/index.js');
  const { resolvePaths } = await import('../src/paths.js');
  t.equal(loadConfig(resolvePaths({ home: restored }), {}).providers.anthropic.apiKey, 'sk-ant-secret-123', 'the encrypted key decrypts in the restored home');

  // Without the flag the key stays out, and the restored config cannot be read until it is put back.
  const plain = join(tempDir(), 'no-key.tar.gz');
  t.equal((await runPinclawAsync(['backup', plain], { env })).code, 0);
  t.notMatch(run('tar', ['-tzf', plain]).stdout, /secret\.key/);
  const other = tempDir();
  t.equal((await runPinclawAsync(['restore', plain], { env: cleanEnv({ PINCLAW_HOME: other }) })).code, 0);
  const get = await runPinclawAsync(['config', 'get', 'providers.anthropic.apiKey'], { env: cleanEnv({ PINCLAW_HOME: other }) });
  t.equal(get.code, 78);
  t.match(get.stderr, /secret\.key is missing/);
});

t.test('restore refuses a non-empty home without --force; with it, keeps what was there', async (t) => {
  const a = await makeHome();
  const file = join(tempDir(), 'a.tar.gz');
  t.equal((await runPinclawAsync(['backup', file], { env: a.env })).code, 0);

  const b = await makeHome();
  writeFileSync(join(b.home, 'workspace', 'MEMORY.md'), 'B remembers this.\n');
  t.equal((await runPinclawAsync(['config', 'set', 'gateway.port', '8111'], { env: b.env })).code, 0);
  const before = snapshot(b.home);

  const refused = await runPinclawAsync(['restore', file], { env: b.env });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /is not empty: it holds pinclaw\.db, config\.json, workspace\/, which the restore would replace\. Restore into an empty home \(--home DIR\), or pass --force/);
  t.match(refused.stderr, /Nothing was changed/);
  t.same(snapshot(b.home), before, 'the home is exactly as it was');

  // A gateway running on the home: refused even with --force.
  const { gw } = await gatewayOn(t, b.env);
  const busy = await runPinclawAsync(['restore', file, '--force'], { env: b.env });
  t.equal(busy.code, 1);
  t.match(busy.stderr, new RegExp(`a gateway \\(pid ${gw.child.pid}\\) has the database of .* open; stop it first`));
  // Killed, so that its last writes are still in pinclaw.db-wal: they must survive the move aside.
  gw.child.kill('SIGKILL');
  await gw.exited;
  const stopped = snapshot(b.home);
  t.ok(stopped['pinclaw.db-wal'], 'the killed gateway left its WAL');

  const forced = await runPinclawAsync(['restore', file, '--force'], { env: b.env });
  t.equal(forced.code, 0, forced.stderr);
  const kept = readdirSync(b.home).filter((f) => f.includes('.before-restore-')).sort();
  t.match(kept, [/^config\.json\.before-restore-\d{4}-\d\d-\d\dT[\d-]+Z$/, /^pinclaw\.db\.before-restore-/, /^pinclaw\.db\.before-restore-.*-shm$/, /^pinclaw\.db\.before-restore-.*-wal$/, /^workspace\.before-restore-/]);
  t.match(forced.stdout, /kept the previous .*pinclaw\.db as .*pinclaw\.db\.before-restore-/);
  // Nothing the home had is lost: each old file is there under its new name, byte for byte.
  const aside = (name: string) => kept.find((k) => k.startsWith(`${name}.before-restore-`) && !k.endsWith('-wal') && !k.endsWith('-shm'))!;
  t.equal(sha256(join(b.home, aside('config.json'))), stopped['config.json']);
  t.equal(readFileSync(join(b.home, aside('workspace'), 'MEMORY.md'), 'utf8'), 'B remembers this.\n');
  t.equal(sha256(join(b.home, aside('pinclaw.db'))), stopped['pinclaw.db']);
  // The home is A's now (B's own key stays: the backup has none; A's values need A's key).
  t.equal(readFileSync(join(b.home, 'workspace', 'MEMORY.md'), 'utf8'), '# Memory\nThe spare key is under the blue pot.\n');
  t.equal(sha256(join(b.home, 'config.json')), sha256(join(a.home, 'config.json')));
  t.equal(sha256(join(b.home, 'secret.key')), stopped['secret.key']);
  t.match(forced.stderr, /1 secret of the restored config cannot be read \(.*secret\.key cannot decrypt them\): providers\.anthropic\.apiKey\./);
  const old = openPlainDatabase(join(b.home, aside('pinclaw.db')), { readonly: true });
  t.same(old.pragma('quick_check'), [{ quick_check: 'ok' }]);
  t.ok(old.prepare(`select value from state where key = 'gateway.started_at'`).get(), "the old database opens with its WAL under its new name (the killed gateway's last writes)");
  old.close();
});

t.test('a truncated or corrupt backup is refused with nothing changed', async (t) => {
  const a = await makeHome();
  const file = join(tempDir(), 'a.tar.gz');
  t.equal((await runPinclawAsync(['backup', file], { env: a.env })).code, 0);

  const cut = join(tempDir(), 'cut.tar.gz');
  copyFileSync(file, cut);
  truncateSync(cut, Math.floor(statSync(file).size / 2));
  const empty = join(tempDir(), 'empty-home');
  const r = await runPinclawAsync(['restore', cut], { env: cleanEnv({ PINCLAW_HOME: empty }) });
  t.equal(r.code, 1);
  t.match(r.stderr, /cut\.tar\.gz cannot be used: it is truncated \(gzip: unexpected end of file\); nothing was changed/);
  t.notOk(existsSync(empty), 'the home it would have created is not there');

  const b = await makeHome();
  const before = snapshot(b.home);
  const forced = await runPinclawAsync(['restore', cut, '--force'], { env: b.env });
  t.equal(forced.code, 1);
  t.match(forced.stderr, /truncated/);
  t.same(snapshot(b.home), before, 'a non-empty home is untouched even with --force');

  // A flipped byte in the compressed data: gzip's checks catch it, or, when the damaged block still
  // inflates, the file it lands in fails its SHA-256 from the manifest before gzip's CRC is reached.
  const bad = join(tempDir(), 'bad.tar.gz');
  const bytes = readFileSync(file);
  const at = Math.floor(bytes.length * 0.6);
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(bad, bytes);
  const c = await runPinclawAsync(['restore', bad], { env: cleanEnv({ PINCLAW_HOME: join(tempDir(), 'h') }) });
  t.equal(c.code, 1);
  t.match(c.stderr, /bad\.tar\.gz cannot be used: (it is corrupt \(gzip: [^)]+\)|\S+ does not match its SHA-256 in the manifest); nothing was changed/);

  // Not a backup at all.
  const notGz = join(tempDir(), 'notes.txt');
  writeFileSync(notGz, 'hello\n');
  const n = await runPinclawAsync(['restore', notGz], { env: cleanEnv({ PINCLAW_HOME: join(tempDir(), 'h') }) });
  t.equal(n.code, 1);
  t.match(n.stderr, /notes\.txt cannot be used: it is not gzip data/);

  // Well-formed, but a file does not match its checksum: found after extracting, before any rename.
  const x = tempDir();
  run('tar', ['-xzf', file, '-C', x]);
  writeFileSync(join(x, 'workspace', 'MEMORY.md'), '# Memory\nThe spare key is under the BLUE pot.\n'); // same size, other bytes
  const lying = join(tempDir(), 'lying.tar.gz');
  const m = JSON.parse(readFileSync(join(x, 'manifest.json'), 'utf8')) as { files: { path: string }[]; directories: string[] };
  const entries: TarEntry[] = [
    ...['manifest.json', ...m.files.map((f) => f.path)].map((p): TarEntry => ({ path: p, type: 'file', mode: 0o600, mtime: 0, file: join(x, p), size: statSync(join(x, p)).size })),
    ...m.directories.map((p): TarEntry => ({ path: p, type: 'dir', mode: 0o755, mtime: 0 })),
  ];
  await writeTarGz(lying, entries);
  const home2 = join(tempDir(), 'h2');
  const l = await runPinclawAsync(['restore', lying], { env: cleanEnv({ PINCLAW_HOME: home2 }) });
  t.equal(l.code, 1);
  t.match(l.stderr, /lying\.tar\.gz cannot be used: workspace\/MEMORY\.md does not match its SHA-256 in the manifest; nothing was changed/);
  t.notOk(existsSync(home2));
});

t.test('a backup of a newer schema is refused, naming both versions', async (t) => {
  const a = await makeHome();
  const db = openDatabase(join(a.home, 'pinclaw.db'));
  db.prepare('insert into schema_migrations (version, name, applied_at) values (?, ?, ?)').run(999, 'from the future', new Date().toISOString());
  db.close();
  const file = join(tempDir(), 'future.tar.gz');
  const b = await runPinclawAsync(['backup', file], { env: a.env });
  t.equal(b.code, 0, b.stderr);
  t.match(b.stdout, /pinclaw\.db \(schema v999\)/);
  const home = join(tempDir(), 'h');
  const r = await runPinclawAsync(['restore', file], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`holds a database at schema version 999 \\(made by pinclaw \\S+\\); this pinclaw \\(\\S+\\) knows schema versions up to ${knownSchemaVersion()}: restore it with pinclaw \\S+ or newer\\. Nothing was changed`));
  t.notOk(existsSync(home));
});

t.test('usage: one FILE; no database is nothing to back up', async (t) => {
  const env = cleanEnv({ PINCLAW_HOME: tempDir() });
  const none = await runPinclawAsync(['backup'], { env });
  t.equal(none.code, 2);
  t.match(none.stderr, /expected one FILE, got 0\nusage: pinclaw backup FILE \[--include-secrets\] \[--force\]/);
  const empty = await runPinclawAsync(['backup', join(tempDir(), 'x.tar.gz')], { env });
  t.equal(empty.code, 1);
  t.match(empty.stderr, /there is no database at .*pinclaw\.db: nothing to back up/);
  const missing = await runPinclawAsync(['restore', '/nonexistent/x.tar.gz'], { env });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /cannot read \/nonexistent\/x\.tar\.gz: no such file/);
});

t.test('an existing FILE is refused without --force and left as it was; --force replaces it', async (t) => {
  const a = await makeHome();
  const file = join(tempDir(), 'monday.tar.gz');
  t.equal((await runPinclawAsync(['backup', file], { env: a.env })).code, 0);
  const before = sha256(file);
  const again = await runPinclawAsync(['backup', file], { env: a.env });
  t.equal(again.code, 1);
  t.equal(again.stderr, `pinclaw: ${file} exists already (an earlier backup?); name another file, or pass --force to replace it. Nothing was written\n`);
  t.equal(sha256(file), before, 'the earlier backup is untouched');
  writeFileSync(join(a.home, 'workspace', 'later.md'), 'written after the first backup\n');
  const forced = await runPinclawAsync(['backup', file, '--force'], { env: a.env });
  t.equal(forced.code, 0, forced.stderr);
  t.match(run('tar', ['-tzf', file]).stdout, /workspace\/later\.md/, 'the file now holds the new backup');
});

t.test('the tar code and GNU tar read each other (long and non-ASCII names, empty files, modes)', async (t) => {
  const src = tempDir();
  const long = `${'deep/'.repeat(25)}file-with-a-long-name.md`; // 147 bytes: ustar prefix + name
  const longer = `${'a'.repeat(120)}/${'b'.repeat(120)}.md`; // a name part over 100 bytes: pax
  const files: Record<string, string> = { 'plain.txt': 'hello\n', 'empty.txt': '', 'grüße/naïve.md': 'ünïcödé\n', [long]: 'long\n', [longer]: 'longer\n', 'big.bin': 'x'.repeat(70_000) };
  const entries: TarEntry[] = [];
  const dirs = new Set<string>();
  for (const [p, text] of Object.entries(files)) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    mkdirSync(join(src, ...parts.slice(0, -1)), { recursive: true });
    writeFileSync(join(src, p), text);
  }
  for (const d of [...dirs].sort()) entries.push({ path: d, type: 'dir', mode: 0o750, mtime: 1_700_000_000 });
  for (const [p, text] of Object.entries(files)) entries.push({ path: p, type: 'file', mode: p === 'plain.txt' ? 0o600 : 0o644, mtime: 1_700_000_000, data: Buffer.from(text) });
  const ours = join(tempDir(), 'ours.tar.gz');
  await writeTarGz(ours, entries);
  const out = tempDir();
  const x = run('tar', ['-xzf', ours, '-C', out]);
  t.equal(x.code, 0, x.stderr);
  t.equal(x.stderr, '', 'GNU tar has no complaint');
  for (const [p, text] of Object.entries(files)) t.equal(readFileSync(join(out, p), 'utf8'), text, `GNU tar extracts ${p.slice(0, 40)}`);
  t.equal(statSync(join(out, 'plain.txt')).mode & 0o777, 0o600);
  t.equal(Math.floor(statSync(join(out, 'plain.txt')).mtimeMs / 1000), 1_700_000_000);

  // GNU tar's own archive (pax format, for the long names) read back by ours.
  const theirs = join(tempDir(), 'theirs.tar.gz');
  t.equal(run('tar', ['--format=posix', '-czf', theirs, '-C', src, '.']).code, 0);
  const seen: Record<string, string> = {};
  await readTarGz(theirs, (h) => {
    if (h.type !== 'file') return undefined;
    const parts: Buffer[] = [];
    return { data: (c) => void parts.push(Buffer.from(c)), end: () => void (seen[h.path.replace(/^\.\//, '')] = Buffer.concat(parts).toString('utf8')) };
  });
  t.same(seen, files, 'every file, name and content, as GNU tar wrote it');
});

t.test('restore writes the key, the config and the database 0600 whatever modes a crafted archive records', async (t) => {
  const { env } = await makeHome();
  const file = join(tempDir(), 'with-key.tar.gz');
  t.equal((await runPinclawAsync(['backup', file, '--include-secrets'], { env })).code, 0);
  const x = tempDir();
  t.equal(run('tar', ['-xzf', file, '-C', x]).code, 0);
  const m = JSON.parse(readFileSync(join(x, 'manifest.json'), 'utf8')) as { files: { path: string }[]; directories: string[] };
  const modes: Record<string, number> = { 'secret.key': 0o755, 'config.json': 0o644, 'pinclaw.db': 0o666, 'workspace/MEMORY.md': 0o777 };
  const crafted = join(tempDir(), 'crafted.tar.gz');
  await writeTarGz(crafted, [
    { path: 'manifest.json', type: 'file', mode: 0o600, mtime: 0, file: join(x, 'manifest.json'), size: statSync(join(x, 'manifest.json')).size },
    ...m.directories.map((p): TarEntry => ({ path: p, type: 'dir', mode: 0o777, mtime: 0 })),
    ...m.files.map((f): TarEntry => ({ path: f.path, type: 'file', mode: modes[f.path] ?? 0o644, mtime: 0, file: join(x, f.path), size: statSync(join(x, f.path)).size })),
  ]);
  t.match(run('tar', ['-tzvf', crafted]).stdout, /-rwxr-xr-x .* secret\.key\n/, 'the archive says 0755 for the key');

  const home = join(tempDir(), 'h');
  const r = await runPinclawAsync(['restore', crafted], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 0, r.stderr);
  const mode = (p: string) => statSync(join(home, p)).mode & 0o777;
  t.equal(mode('secret.key'), 0o600, 'secret.key 0600, not the archive\'s 0755');
  t.equal(mode('config.json'), 0o600, 'config.json 0600, not the archive\'s 0644');
  t.equal(mode('pinclaw.db'), 0o600, 'the database 0600, not the archive\'s 0666');
  t.equal(mode('workspace/MEMORY.md'), 0o755, 'a workspace file keeps its mode without group/other write');
  t.equal(mode('workspace'), 0o755, 'a directory without group/other write');
});

/** A backup as an older pinclaw made it: its config holds the secrets in clear (manifest checksums made to match). */
async function oldBackupWithClearSecrets(env: NodeJS.ProcessEnv): Promise<string> {
  const file = join(tempDir(), 'new.tar.gz');
  t.equal((await runPinclawAsync(['backup', file], { env })).code, 0);
  const x = tempDir();
  t.equal(run('tar', ['-xzf', file, '-C', x]).code, 0);
  const cfg = JSON.parse(readFileSync(join(x, 'config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  cfg.providers = { anthropic: { apiKey: 'sk-ant-old-backup-in-clear' } };
  cfg.gateway = { ...cfg.gateway, token: 'gw-old-backup-in-clear' };
  writeFileSync(join(x, 'config.json'), JSON.stringify(cfg, null, 2));
  const m = JSON.parse(readFileSync(join(x, 'manifest.json'), 'utf8')) as { files: { path: string; size?: number; sha256?: string }[]; directories: string[] };
  const entry = m.files.find((f) => f.path === 'config.json')!;
  entry.sha256 = sha256(join(x, 'config.json'));
  if (entry.size !== undefined) entry.size = statSync(join(x, 'config.json')).size;
  writeFileSync(join(x, 'manifest.json'), JSON.stringify(m, null, 2));
  const old = join(tempDir(), 'old.tar.gz');
  await writeTarGz(old, [
    { path: 'manifest.json', type: 'file', mode: 0o600, mtime: 0, file: join(x, 'manifest.json'), size: statSync(join(x, 'manifest.json')).size },
    ...m.directories.map((p): TarEntry => ({ path: p, type: 'dir', mode: 0o755, mtime: 0 })),
    ...m.files.map((f): TarEntry => ({ path: f.path, type: 'file', mode: 0o600, mtime: 0, file: join(x, f.path), size: statSync(join(x, f.path)).size })),
  ]);
  return old;
}

t.test('an old backup whose config holds secrets in clear: encrypted with the home\'s key on restore; without a key, said so', async (t) => {
  const { env } = await makeHome();
  const old = await oldBackupWithClearSecrets(env);

  // A home with a key of its own (it had a secret set), restored over with --force.
  const keyed = await makeHome();
  const r = await runPinclawAsync(['restore', old, '--force'], { env: keyed.env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /restore: the backup held 2 secrets in clear \(it is older than encrypted secrets\): (gateway\.token, providers\.anthropic\.apiKey|providers\.anthropic\.apiKey, gateway\.token); now encrypted with .*secret\.key/);
  const text = readFileSync(join(keyed.home, 'config.json'), 'utf8');
  t.notOk(text.includes('sk-ant-old-backup-in-clear') || text.includes('gw-old-backup-in-clear'), 'no secret left in clear');
  const { loadConfig } = await import('../src/config/index.js');
  const c = loadConfig(resolvePaths({ home: keyed.home }), {}, { secrets: 'required' });
  t.equal(c.gateway.token, 'gw-old-backup-in-clear', "the home's key reads it");
  t.equal(c.providers.anthropic.apiKey, 'sk-ant-old-backup-in-clear');
  t.equal(statSync(join(keyed.home, 'config.json')).mode & 0o777, 0o600);

  // An empty home has no key: the config stays as it was, and the owner is told.
  const bare = join(tempDir(), 'bare');
  const b = await runPinclawAsync(['restore', old], { env: cleanEnv({ PINCLAW_HOME: bare }) });
  t.equal(b.code, 0, b.stderr);
  t.match(b.stderr, /restore: the restored config holds 2 secrets in clear \(the backup is older than encrypted secrets\): .*; this home has no .*secret\.key to encrypt them with\. Copy the secret\.key of the home the backup came from/);
  t.notOk(existsSync(join(bare, 'secret.key')), 'no key was made behind the owner\'s back');
});

/** The staging directories, partial files and notes a backup into `dir` of `home` leaves. */
function leftovers(dir: string, home: string): string[] {
  const notes = join(home, '.backups-running');
  return [...readdirSync(dir).filter((n) => n.startsWith('.')), ...(existsSync(notes) ? readdirSync(notes).map((n) => `notes/${n}`) : [])].sort();
}

/** A backup killed with SIGKILL while it writes the archive (large enough to be caught at its 10% line). */
async function killedBackup(t: Test, env: NodeJS.ProcessEnv, file: string): Promise<number> {
  const b = start(process.execPath, [bundle, 'backup', file], { env });
  t.teardown(() => b.child.kill('SIGKILL'));
  await b.waitFor(/backup: archiving .* \(10%\)/);
  b.child.kill('SIGKILL');
  t.equal((await b.exited).signal, 'SIGKILL', 'the backup was killed before it finished');
  return b.child.pid!;
}

t.test('what a killed backup leaves is removed by the next backup and by the next gateway start', async (t) => {
  const { home, env } = await makeHome();
  // Random bytes do not compress: the archive phase takes long enough to be caught midway.
  writeFileSync(join(home, 'workspace', 'big.bin'), randomBytes(40 << 20));
  const dir = tempDir();
  const pid = await killedBackup(t, env, join(dir, 'home.tar.gz'));
  const left = leftovers(dir, home);
  t.ok(left.some((n) => n.startsWith(`.pinclaw-backup-${pid}-`)), `the staging copy is there after the kill: ${left.join(', ')}`);
  t.ok(left.includes(`.home.tar.gz.${pid}.partial`), 'and the partial archive');
  t.ok(left.includes(`notes/${pid}.json`), 'and the note that names them');
  t.notOk(existsSync(join(dir, 'home.tar.gz')), 'no backup file was made');

  const again = await runPinclawAsync(['backup', join(dir, 'second.tar.gz')], { env });
  t.equal(again.code, 0, again.stderr);
  t.same(readdirSync(dir), ['second.tar.gz'], 'the next backup removed the staging copy and the partial file');
  t.same(leftovers(dir, home), [], 'and its own note is gone with it');

  // Into another directory, then a gateway start (which does not know that directory but has the note).
  const other = tempDir();
  const pid2 = await killedBackup(t, env, join(other, 'x.tar.gz'));
  t.ok(leftovers(other, home).some((n) => n.startsWith(`.pinclaw-backup-${pid2}-`)), 'a second killed backup left its staging copy');
  const { gw } = await gatewayOn(t, env);
  await gw.waitFor(/removed .*\.partial, left by a backup that did not finish/);
  t.same(readdirSync(other), [], 'the gateway start removed the staging copy and the partial file');
  t.same(leftovers(other, home), [], 'and the note');
  gw.child.kill('SIGTERM');
  await gw.exited;
});

t.test('a backup without --include-secrets holds no secret; restored without the key, only what needs one stops', async (t) => {
  const { home, env } = await makeHome();
  // Beside the encrypted key of makeHome: secrets a config from before (or edited by hand) holds in clear.
  const file0 = join(home, 'config.json');
  const cfg = JSON.parse(readFileSync(file0, 'utf8')) as Record<string, Record<string, unknown>>;
  cfg.gateway!.token = 'gw-token-in-clear-77';
  cfg.channels = { telegram: { token: '123456789:TelegramTokenInClear_abcdefghijklmnopq' } };
  writeFileSync(file0, JSON.stringify(cfg, null, 2));
  const before = readFileSync(file0);
  const db = openDatabase(join(home, 'pinclaw.db'));
  db.prepare("insert into sessions (key, messages, created_at, updated_at) values ('s-restored', '[]', 0, 0)").run();
  db.close();

  const file = join(tempDir(), 'no-secrets.tar.gz');
  const b = await runPinclawAsync(['backup', file], { env });
  t.equal(b.code, 0, b.stderr);
  t.match(b.stderr, /backup: .*config\.json holds gateway\.token, channels\.telegram\.token in clear; the backup holds them encrypted/);
  t.same(readFileSync(file0), before, "the home's config is not changed by a backup");
  // Every byte of the archive, decompressed: no secret in clear, no key.
  const { gunzipSync } = await import('node:zlib');
  const all = gunzipSync(readFileSync(file)).toString('latin1');
  for (const v of ['sk-ant-secret-123', 'gw-token-in-clear-77', 'TelegramTokenInClear_abcdefghijklmnopq']) t.notOk(all.includes(v), `${v} is nowhere in the backup`);
  t.notMatch(run('tar', ['-tzf', file]).stdout, /secret\.key/, 'no secret.key');
  t.ok(!all.includes(readFileSync(join(home, 'secret.key')).toString('latin1')), "the key's bytes are nowhere in it");

  // Restored into a home without the key: the note names each unreadable key and what stops.
  const other = tempDir();
  const renv = cleanEnv({ PINCLAW_HOME: other });
  const r = await runPinclawAsync(['restore', file], { env: renv });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /restore: 3 secrets of the restored config cannot be read \(the backup has no secret\.key\): gateway\.token, providers\.anthropic\.apiKey, channels\.telegram\.token\. Until they can, pinclaw gateway and pinclaw agent refuse to start; every other command/);
  t.equal(statSync(join(other, 'config.json')).mode & 0o777, 0o600);
  // What needs no secret works.
  const port = await runPinclawAsync(['config', 'get', 'gateway.port'], { env: renv });
  t.equal(port.stdout, '7999\n', port.stderr);
  const sessions = await runPinclawAsync(['sessions', 'list', '--json'], { env: renv });
  t.equal(sessions.code, 0, sessions.stderr);
  t.ok((JSON.parse(sessions.stdout) as { key: string }[]).some((x) => x.key === 's-restored'));
  const mem = await runPinclawAsync(['memory', 'search', 'blue pot'], { env: renv });
  t.equal(mem.code, 0, mem.stderr);
  t.match(mem.stdout, /blue pot/);
  // What needs one says which and how to fix it.
  const tok = await runPinclawAsync(['config', 'get', 'gateway.token'], { env: renv });
  t.equal(tok.code, 78);
  t.match(tok.stderr, /gateway\.token: the config holds encrypted values but .*secret\.key is missing/);
  const gw = await runPinclawAsync(['gateway', '--port', '0'], { env: renv });
  t.equal(gw.code, 78, 'the gateway refuses to start without its secrets');
  t.match(gw.stderr, /gateway\.token: .*\n.*providers\.anthropic\.apiKey: .*\n.*channels\.telegram\.token: .*\n.*put back the secret\.key these values were encrypted with/);
  const doctor = await runPinclawAsync(['doctor', '--json'], { env: renv });
  const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; state: string; detail: string }[] }).checks;
  t.match(checks.find((c) => c.name === 'config'), { state: 'ok' });
  t.match(checks.find((c) => c.name === 'secrets'), { state: 'fail', detail: /^cannot decrypt gateway\.token, providers\.anthropic\.apiKey, channels\.telegram\.token: the gateway and pinclaw agent refuse to start/ });

  // With the key put back, all three decrypt, the ones that were in clear included.
  copyFileSync(join(home, 'secret.key'), join(other, 'secret.key'));
  chmodSync(join(other, 'secret.key'), 0o600);
  const { loadConfig } = await import('../src/config/index.js');
  const { resolvePaths } = await import('../src/paths.js');
  const c = loadConfig(resolvePaths({ home: other }), {}, { secrets: 'required' });
  t.same([c.gateway.token, c.providers.anthropic.apiKey, c.channels.telegram.token], ['gw-token-in-clear-77', 'sk-ant-secret-123', '123456789:TelegramTokenInClear_abcdefghijklmnopq']);

  // Setting one again there instead makes a new key: the others are named, and copying the old key over is warned against.
  const third = tempDir();
  const tenv = cleanEnv({ PINCLAW_HOME: third });
  t.equal((await runPinclawAsync(['restore', file], { env: tenv })).code, 0);
  const again = await runPinclawAsync(['config', 'set', 'gateway.token', 'a-new-token-88'], { env: tenv });
  t.equal(again.code, 0, again.stderr);
  t.match(again.stderr, /warning: created a new .*secret\.key; providers\.anthropic\.apiKey, channels\.telegram\.token were encrypted under another key and stay unreadable: set them again too, and do not copy the old secret\.key over this one now/);
  t.equal(loadConfig(resolvePaths({ home: third }), {}).gateway.token, 'a-new-token-88');
});

t.test('restore holds the home lock while it changes the home; a lock held by another process refuses it, and the gateway too', async (t) => {
  const { env } = await makeHome();
  const file = join(tempDir(), 'locked.tar.gz');
  t.equal((await runPinclawAsync(['backup', file], { env })).code, 0);

  // This test process holds the lock of an empty home, as a gateway that has not opened its database yet would.
  const home = tempDir();
  const lockFile = join(home, 'gateway.lock');
  // Read before the lock is taken: a process that closes any descriptor of the file drops its fcntl lock.
  writeFileSync(lockFile, '');
  const before = snapshot(home);
  const mine = tryLockHome(lockFile);
  if (!('held' in mine)) throw new Error('the lock of a new home is free');
  const refused = await runPinclawAsync(['restore', file], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(refused.code, 1);
  t.match(refused.stderr, `another process (pid ${process.pid}: `);
  t.match(refused.stderr, `holds ${lockFile}: a gateway is running or starting on ${home}; stop it first`);
  t.match(refused.stderr, 'Nothing was changed');
  const gateway = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal((await gateway.exited).code, 1);
  t.match(gateway.stderr(), `another process (pid ${process.pid}: `);
  mine.held.release();
  t.same(snapshot(home), before, 'the home is as it was');

  // While the restore extracts, a gateway starting on that home finds the lock taken.
  const target = join(tempDir(), 'new-home');
  const seen: string[] = [];
  await restoreBackup(resolvePaths({ home: target }, {}), file, {
    force: false,
    env: {},
    onProgress: () => {
      if (seen.length) return;
      const probe = tryLockHome(join(target, 'gateway.lock'));
      seen.push('held' in probe ? 'free' : 'taken');
      if ('held' in probe) probe.held.release();
    },
  });
  t.same(seen, ['taken']);
  const afterwards = tryLockHome(join(target, 'gateway.lock'));
  t.ok('held' in afterwards, 'and free once the restore is done');
  if ('held' in afterwards) afterwards.held.release();
});
