// The envelopes already taken, by their identity (./envelope.ts envelopeKey). The event stream has
// no position a restart could resume from for sure (a restarted daemon replays what it kept), so the
// inbound row and its envelope's key are committed in one transaction, and an envelope handed over
// again is recognized and dropped: every message is queued once. Keys older than a week are pruned;
// nothing replays an envelope that old. The table is migration 10's (src/store/schema.ts).
import type { Db } from '../../store/db.js';

const KEEP_MS = 7 * 24 * 3600_000;

export function openSeen(db: Db) {
  const has = db.prepare('select 1 from signal_seen where key = ?');
  const add = db.prepare('insert or ignore into signal_seen (key, at) values (?, ?)');
  const prune = db.prepare('delete from signal_seen where at < ?');
  prune.run(Date.now() - KEEP_MS);
  return {
    has: (key: string) => has.get(key) !== undefined,
    add: (key: string) => void add.run(key, Date.now()),
    prune: () => void prune.run(Date.now() - KEEP_MS),
  };
}

export type Seen = ReturnType<typeof openSeen>;
