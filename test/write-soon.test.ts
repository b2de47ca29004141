// The writes kept back from a call's path (src/store/write-soon.ts): the audit rows and replay
// records of calls that change nothing. On a real SQLite file, read back through a second
// connection as `pinclaw audit` or another process would: a lone write is made right away, a stream
// of them is held and batched, and none is lost to the close, to a reader in this process, or to a
// failed batch.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { insertAuditSoon, queryAudit, type NewAudit } from '../src/store/audit.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { writeSoon } from '../src/store/write-soon.js';
import { tempDir } from './support/proc.js';

const nextTurn = () => new Promise<void>((r) => setImmediate(r));
const row = (i: number): NewAudit => ({ at: 1_700_000_000_000 + i, sessionKey: 'fleet:house', channel: 'fleet', chatId: 'house', caller: 'house', tool: 'current_time', input: `{"i":${i}}`, outcome: 'ok' });

function pair(t: Test): { db: Db; file: string; other: Db; count: () => number } {
  const file = join(tempDir(), 'pinclaw.db');
  const db = openDatabase(file);
  const other = openDatabase(file);
  t.teardown(() => {
    if (db.open) db.close();
    other.close();
  });
  return { db, file, other, count: () => (other.prepare('select count(*) as n from audit').get() as { n: number }).n };
}

t.test('a lone row is in the file right after the turn that wrote it', async (t) => {
  const { db, count } = pair(t);
  insertAuditSoon(db, row(1), (err) => t.fail(String(err)));
  t.equal(count(), 0, 'not on the call\'s path');
  await nextTurn();
  t.equal(count(), 1, 'written once the turn of the event loop is over');
});

t.test('a reader in this process sees a row kept back at once, without waiting for its turn', async (t) => {
  const { db } = pair(t);
  insertAuditSoon(db, row(7), (err) => t.fail(String(err)));
  t.match(queryAudit(db), [{ tool: 'current_time', input: '{"i":7}', outcome: 'ok' }]);
});

t.test('calls back to back: rows held and batched, all of them read by this process and written by the close', async (t) => {
  const { db, file, count } = pair(t);
  const N = 200;
  let heldAfterTurn = 0;
  for (let i = 0; i < N; i++) {
    insertAuditSoon(db, row(i), (err) => t.fail(String(err)));
    await nextTurn();
    // Another connection sees the row once the turn is over, unless it is held in a batch.
    if (count() < i + 1) heldAfterTurn++;
  }
  t.ok(heldAfterTurn > 0, `a stream of calls is batched (${heldAfterTurn} of ${N} rows held past their turn)`);
  const seen = queryAudit(db, { tool: 'current_time' });
  t.equal(seen.length, N, 'a reader in this process sees every row, held ones included');
  t.same(seen.map((r) => r.input), Array.from({ length: N }, (_, i) => `{"i":${i}}`), 'in the order of the calls');
  insertAuditSoon(db, row(N), (err) => t.fail(String(err)));
  for (let i = N + 1; i < N + 20; i++) {
    await nextTurn();
    insertAuditSoon(db, row(i), (err) => t.fail(String(err)));
  }
  db.close();
  const again = openDatabase(file);
  t.teardown(() => again.close());
  t.equal(queryAudit(again).length, N + 20, 'the close wrote the rows still held');
  t.equal(count(), N + 20);
});

t.test('a batch that fails is rolled back as a whole and every writer hears of it', async (t) => {
  const { db, count } = pair(t);
  const errors: string[] = [];
  insertAuditSoon(db, row(1), (err) => errors.push(`row: ${String(err)}`));
  writeSoon(db, () => {
    throw new Error('disk full');
  }, (err) => errors.push(`broken: ${String(err)}`));
  await nextTurn();
  t.same(errors, ['row: Error: disk full', 'broken: Error: disk full']);
  t.equal(count(), 0, 'nothing of the batch was written');
  insertAuditSoon(db, row(2), (err) => t.fail(String(err)));
  await nextTurn();
  t.equal(count(), 1, 'the next batch goes through');
});

t.test('a reader inside a transaction that rolls back does not take the held rows with it', async (t) => {
  const { db, count } = pair(t);
  insertAuditSoon(db, row(1), (err) => t.fail(String(err)));
  t.throws(() => db.transaction(() => {
    queryAudit(db);
    throw new Error('the reader\'s own work failed');
  })(), /the reader's own work failed/);
  await nextTurn();
  t.equal(count(), 1, 'the row is written by its own flush');
});
