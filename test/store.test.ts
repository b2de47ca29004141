// The store on a real SQLite file: WAL, busy timeout, migrations that are all-or-nothing.
import t from 'tap';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, sqliteReport } from '../src/store/db.js';
import { forgetFleetCalls, rememberedFleetCalls, rememberFleetCall } from '../src/store/fleet-seen.js';
import { currentVersion, migrate, type Migration } from '../src/store/migrations.js';
import { migrations } from '../src/store/schema.js';
import { saveSession, sessionKeysWithPrefix } from '../src/store/sessions.js';
import { getState, setState } from '../src/store/state.js';
import { tempDir } from './support/proc.js';

t.test('opens in WAL mode with the busy timeout, FTS5 present, schema applied', async (t) => {
  const file = join(tempDir(), 'sub', 'pinclaw.db');
  const db = openDatabase(file, { busyTimeoutMs: 1234 });
  t.teardown(() => db.close());
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(db.pragma('busy_timeout', { simple: true }), 1234);
  t.equal(currentVersion(db), migrations.at(-1)!.version);
  const r = sqliteReport(db);
  t.ok(r.fts5, 'FTS5 is compiled in');
  t.match(r.version, /^3\.\d+\.\d+$/);
  setState(db, 'k', 'v1');
  setState(db, 'k', 'v2');
  t.equal(getState(db, 'k'), 'v2');
  t.equal(getState(db, 'missing'), undefined);
});

t.test('reopening applies nothing twice', async (t) => {
  const file = join(tempDir(), 'pinclaw.db');
  openDatabase(file).close();
  const db = openDatabase(file);
  t.teardown(() => db.close());
  const rows = db.prepare('select version from schema_migrations').all() as { version: number }[];
  t.same(rows.map((r) => r.version), migrations.map((m) => m.version));
});

t.test('a failing migration leaves the database as it was', async (t) => {
  const file = join(tempDir(), 'pinclaw.db');
  const db = openDatabase(file);
  t.teardown(() => db.close());
  const before = db.prepare("select name from sqlite_master order by name").all();
  const next = migrations.at(-1)!.version + 1;
  const bad: Migration[] = [
    ...migrations,
    { version: next, name: 'good-part', up: 'create table fine (x integer)' },
    { version: next + 1, name: 'broken', up: 'create table half (x integer); insert into nowhere values (1);' },
  ];
  t.throws(() => migrate(db, bad), /migration \d+ \(broken\) failed, database left at version \d+: no such table: nowhere/);
  t.equal(currentVersion(db), next, 'the migration before the broken one stays applied');
  const after = db.prepare("select name from sqlite_master order by name").all() as { name: string }[];
  t.ok(after.some((r) => r.name === 'fine'));
  t.notOk(after.some((r) => r.name === 'half'), 'nothing of the broken migration remains');
  t.equal(after.length, before.length + 1);
});

t.test('a database from a newer pinclaw is refused', async (t) => {
  const file = join(tempDir(), 'pinclaw.db');
  const db = openDatabase(file);
  db.prepare('insert into schema_migrations values (999, ?, ?)').run('future', new Date().toISOString());
  db.close();
  t.throws(() => openDatabase(file), /database schema version 999 is newer than this pinclaw knows/);
});

t.test('a second connection waits for a writer instead of failing at once', async (t) => {
  const file = join(tempDir(), 'pinclaw.db');
  const a = openDatabase(file, { busyTimeoutMs: 50 });
  const b = openDatabase(file, { busyTimeoutMs: 50 });
  t.teardown(() => {
    a.close();
    b.close();
  });
  a.exec('begin immediate');
  const started = process.hrtime.bigint();
  t.throws(() => b.exec("insert into state values ('x', 'y', 'z')"), /database is locked/);
  const waitedMs = Number(process.hrtime.bigint() - started) / 1e6;
  t.ok(waitedMs >= 40, `the busy timeout made it wait (${waitedMs.toFixed(0)} ms) before giving up`);
  a.exec('rollback');
  b.exec("insert into state values ('x', 'y', 'z')");
  t.equal(getState(b, 'x'), 'y');
});

t.test('session keys by prefix: exact prefixes, also with LIKE metacharacters and astral characters', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  for (const key of ['a_%😀/spawn/1', 'a_%😀/spawn/2', 'ab%😀/spawn/3', 'a_%😀', 'x/spawn/1']) saveSession(db, { key, messages: [], meta: {} });
  t.same(sessionKeysWithPrefix(db, 'a_%😀/spawn/').sort(), ['a_%😀/spawn/1', 'a_%😀/spawn/2']);
  t.same(sessionKeysWithPrefix(db, 'nothing/'), []);
});

t.test('migration 13 keeps the calls fleet_seen held, and a replay of one stays refused', async (t) => {
  const file = join(tempDir(), 'pinclaw.db');
  const db = new Database(file);
  t.teardown(() => db.close());
  migrate(db, migrations.filter((m) => m.version <= 12));
  db.prepare('insert into fleet_seen (caller, call_id, at) values (?, ?, ?)').run('house', 'id-1', 1000);
  db.prepare('insert into fleet_seen (caller, call_id, at) values (?, ?, ?)').run('barn', 'id-2', 2000);
  t.same(migrate(db, migrations), [13]);
  t.same(db.prepare('select caller, call_id, at from fleet_seen order by at').all(), [{ caller: 'house', call_id: 'id-1', at: 1000 }, { caller: 'barn', call_id: 'id-2', at: 2000 }]);
  t.equal(rememberFleetCall(db, 'house', 'id-1', 1000), false, 'a call recorded before the migration is a replay after it');
});

t.test('fleet_seen: a call id is remembered once per caller, and ids older than the window are deleted', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  t.equal(rememberFleetCall(db, 'house', 'id-1', 1000), true);
  t.equal(rememberFleetCall(db, 'house', 'id-1', 1000), false, 'the same caller and id: a replay');
  t.equal(rememberFleetCall(db, 'barn', 'id-1', 1000), true, 'another caller may use the same id');
  t.equal(rememberFleetCall(db, 'house', 'id-2', 5000), true);
  t.equal(rememberedFleetCalls(db), 3);
  t.equal(forgetFleetCalls(db, 2000), 2, 'the two calls dated before 2000 are gone');
  t.equal(rememberedFleetCalls(db), 1);
  t.equal(rememberFleetCall(db, 'house', 'id-2', 5000), false, 'the one inside the window is still a replay');
  // Rows are keyed by time first (migration 13): the same id at another time is another signed
  // message, which only the fleet server's memory of ids refuses (src/fleet/remote.ts).
  t.equal(rememberFleetCall(db, 'house', 'id-2', 5001), true);
  t.same(db.prepare("select name from sqlite_master where tbl_name = 'fleet_seen' and type = 'index' and sql is not null").all(), [], 'no index beside the key');
  t.match(db.prepare('explain query plan delete from fleet_seen where at < ?').all(1), [{ detail: /SEARCH fleet_seen USING PRIMARY KEY \(at<\?\)/ }], 'the prune searches the key');
});
