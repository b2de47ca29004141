// A new database as a copy of a template (src/store/template.ts, made at build time by
// scripts/store-template.mjs): used only for a file that does not exist, never over one, whole or
// not at all; the migrations still run after it, and the template's migrations are dated now.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Db } from '../src/store/db.js';
import { migrations } from '../src/store/schema.js';
import { placeTemplate, STORE_TEMPLATE_KEY } from '../src/store/template.js';
import { tempDir } from './support/proc.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** What the migrations make, as the build makes the template: an empty file opened, then VACUUM INTO. */
function templateOf(upTo = Infinity): Uint8Array {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'made.db'), { migrations: migrations.filter((m) => m.version <= upTo) });
  db.prepare('vacuum into ?').run(join(dir, 'template.db'));
  db.close();
  return readFileSync(join(dir, 'template.db'));
}

const schema = (db: Db) => db.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all();
const applied = (db: Db) => db.prepare('select version, name, applied_at from schema_migrations order by version').all() as { version: number; name: string; applied_at: string }[];

t.test('a new file starts from the template: the same schema and migrations as made by them, dated now', async (t) => {
  const template = templateOf();
  await new Promise((r) => setTimeout(r, 5)); // the template's dates are then older than the copy's
  const dir = tempDir();
  let asked = 0;
  const started = new Date().toISOString();
  const copy = openDatabase(join(dir, 'pinclaw.db'), { template: () => (asked++, template) });
  const made = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.equal(asked, 1);
  t.same(schema(copy), schema(made), 'the schema the migrations make');
  t.same(applied(copy).map((r) => [r.version, r.name]), applied(made).map((r) => [r.version, r.name]), 'every migration recorded');
  t.ok(applied(copy).every((r) => r.applied_at >= started), 'dated when this database got them');
  t.equal(String(copy.pragma('journal_mode', { simple: true })), 'wal');
  t.same(readdirSync(dir).filter((f) => f.endsWith('.new')), [], 'no temporary file left');
  copy.close();
  made.close();
});

t.test('an older template is brought up to date by the migrations', (t) => {
  const newest = Math.max(...migrations.map((m) => m.version));
  const db = openDatabase(join(tempDir(), 'pinclaw.db'), { template: () => templateOf(newest - 1) });
  t.equal(applied(db).at(-1)?.version, newest, 'the last migration ran on the copy');
  t.same(schema(db), schema(openDatabase(join(tempDir(), 'x.db'))));
  db.close();
  t.end();
});

t.test('an existing file is never replaced, and its template is not even read', (t) => {
  const dir = tempDir();
  const file = join(dir, 'pinclaw.db');
  const first = openDatabase(file);
  first.prepare("insert into sessions (key, messages, created_at, updated_at) values ('k', '[]', 1, 1)").run();
  first.close();
  let asked = 0;
  const again = openDatabase(file, { template: () => (asked++, templateOf()) });
  t.equal(asked, 0);
  t.equal((again.prepare('select count(*) as n from sessions').get() as { n: number }).n, 1, 'the rows are there');
  again.close();
  t.end();
});

t.test('placeTemplate: created only when absent, whole, with nothing left beside it', (t) => {
  const dir = tempDir();
  const file = join(dir, 'pinclaw.db');
  // A temporary file of a dead process that had this pid is not in the way.
  writeFileSync(`${file}.${process.pid}.new`, 'half');
  t.equal(placeTemplate(file, Buffer.from('whole')), true);
  t.equal(readFileSync(file, 'utf8'), 'whole');
  // Another process created the file first: its file is kept.
  t.equal(placeTemplate(file, Buffer.from('other')), false);
  t.equal(readFileSync(file, 'utf8'), 'whole');
  t.same(readdirSync(dir), ['pinclaw.db']);
  t.throws(() => placeTemplate(join(dir, 'no-such-dir', 'pinclaw.db'), Buffer.from('x')), { code: 'ENOENT' }, 'other errors are thrown');
  t.notOk(existsSync(join(dir, 'no-such-dir')));
  t.end();
});

t.test('the build writes the asset the executable reads', async (t) => {
  const script = (await import(join(root, 'scripts', 'store-template.mjs'))) as { STORE_TEMPLATE_KEY: string };
  t.equal(script.STORE_TEMPLATE_KEY, STORE_TEMPLATE_KEY);
});
