// Dashboard pairing limits on a real SQLite file: per client, a bounded table that pushes out the
// busiest client's oldest request, expired requests dropped, other channels (Telegram) untouched,
// and requests from before a restart (whose client is not known) pushed out first.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { PairingLimits } from '../src/channels/http/pairing-limits.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { findPairing, listPairings, PAIRING_CODE_TTL_MS, requestPairing } from '../src/store/pairing.js';
import { tempDir } from './support/proc.js';

function setup(t: Test) {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  return db;
}

let n = 0;
function ask(db: Db, limits: PairingLimits, client: string, now: number): string | undefined {
  if (!limits.admit(db, client, now).ok) return undefined;
  const id = `req-${++n}`;
  requestPairing(db, 'dashboard', id, null, now);
  limits.asked(client, id);
  return id;
}

const waiting = (db: Db) => listPairings(db).filter((p) => p.channel === 'dashboard' && p.state === 'pending').map((p) => p.subject);

t.test('per client, then the busiest client gives way', async (t) => {
  const db = setup(t);
  const limits = new PairingLimits('dashboard', { perClient: 2, total: 4 });
  const now = 1_000_000;
  requestPairing(db, 'telegram', '77', 'a stranger', now);
  const a1 = ask(db, limits, 'a', now)!;
  const a2 = ask(db, limits, 'a', now + 1)!;
  t.same(limits.admit(db, 'a', now + 2), { ok: false, waiting: 2 }, 'a third from the same client is refused');
  const b1 = ask(db, limits, 'b', now + 3)!;
  const c1 = ask(db, limits, 'c', now + 4)!;
  t.same(waiting(db), [a1, a2, b1, c1]);
  const d1 = ask(db, limits, 'd', now + 5)!;
  t.same(waiting(db), [a2, b1, c1, d1], 'the table full: the oldest of the client holding the most went');
  t.ok(ask(db, limits, 'a', now + 6), 'a may ask again now');
  t.equal(waiting(db).length, 4);
  t.ok(findPairing(db, 'telegram', '77'), 'Telegram\'s request untouched');

  // An hour later every request has expired: they are dropped, and a client starts afresh.
  const later = now + PAIRING_CODE_TTL_MS + 10;
  t.ok(ask(db, limits, 'a', later));
  t.ok(ask(db, limits, 'a', later));
  t.equal(waiting(db).length, 2);
  t.ok(findPairing(db, 'telegram', '77'), 'nor are Telegram\'s expired requests the dashboard\'s to drop');
});

t.test('after a restart the requests of the previous run go first', async (t) => {
  const db = setup(t);
  const before = new PairingLimits('dashboard', { perClient: 3, total: 3 });
  const old = [ask(db, before, 'x', 1000)!, ask(db, before, 'y', 1001)!];
  const after = new PairingLimits('dashboard', { perClient: 3, total: 3 });
  const z1 = ask(db, after, 'z', 2000)!;
  const z2 = ask(db, after, 'z', 2001)!;
  t.same(waiting(db), [old[1], z1, z2], 'the oldest unknown one gave way, not z\'s');
});
