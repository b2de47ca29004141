// The Discord messages already taken, by message id (a snowflake, unique across Discord). A resumed
// session replays what came after the saved sequence number, and a gateway killed between taking a
// message and saving the sequence gets it again: the inbound row and the id are committed in one
// transaction, and an id seen again is dropped. Ids older than a week are pruned; no resume reaches
// that far back. The table is migration 11's (src/store/schema.ts).
import type { Db } from '../../store/db.js';

const KEEP_MS = 7 * 24 * 3600_000;

export function openSeen(db: Db) {
  const has = db.prepare('select 1 from discord_seen where id = ?');
  const add = db.prepare('insert or ignore into discord_seen (id, at) values (?, ?)');
  const prune = db.prepare('delete from discord_seen where at < ?');
  prune.run(Date.now() - KEEP_MS);
  return {
    has: (id: string) => has.get(id) !== undefined,
    add: (id: string) => void add.run(id, Date.now()),
    prune: () => void prune.run(Date.now() - KEEP_MS),
  };
}

export type Seen = ReturnType<typeof openSeen>;
