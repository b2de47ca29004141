// Writes that need not be in the database before an answer goes out, kept back a moment and made
// together: those of one turn of the event loop in one transaction, right after it (setImmediate),
// and at the latest when the connection closes. A process killed in between loses them: only writes
// whose loss changes nothing may come here (the audit row of a tool that changed nothing, the
// replay record of such a call; see their callers).
import { beforeClose, type Db } from './db.js';

interface Soon {
  write: () => void;
  onError: (err: unknown) => void;
}

const pending = new WeakMap<Db, Soon[]>();
const hooked = new WeakSet<Db>();

/** Makes the writes kept back for this connection now (tests, and the close). */
export function flushWritesSoon(db: Db): void {
  const writes = pending.get(db);
  if (!writes) return;
  pending.delete(db);
  try {
    if (db.open) db.transaction(() => writes.forEach((w) => w.write()))();
  } catch (err) {
    // One failure rolls the whole batch back: each writer hears of it.
    for (const w of writes) w.onError(err);
  }
}

/** Runs `write` (SQLite statements on `db`) shortly after, in one transaction with the others of the moment. */
export function writeSoon(db: Db, write: () => void, onError: (err: unknown) => void): void {
  const writes = pending.get(db);
  if (writes) return void writes.push({ write, onError });
  pending.set(db, [{ write, onError }]);
  setImmediate(() => flushWritesSoon(db));
  if (!hooked.has(db)) {
    hooked.add(db);
    beforeClose(db, () => flushWritesSoon(db));
  }
}
