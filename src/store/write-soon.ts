// Writes that need not be in the database before an answer goes out, kept back a moment and made
// together in one transaction. A lone write (a call now and then) is made right after the turn of
// the event loop that asked for it (setImmediate). A stream of them (calls back to back, such as a
// fleet's remote reads) is held up to HOLD_MS and made in batches: a SQLite commit costs far more
// than the insert it carries (its WAL frames, and every ~1000 pages a checkpoint with its fsyncs),
// and on a board that answers calls back to back that commit sat before the next call. Every write
// is made at the latest when the connection closes (the gateway's shutdown, SIGTERM included), when
// this process reads the audit back (queryAudit), or by flushWritesSoon. A process killed in between
// loses the writes held at that moment (at most HOLD_MS of them): only writes whose loss changes
// nothing may come here (the audit row of a tool that changed nothing, the replay record of such a
// call; see their callers).
// The import, not the global: a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
import { performance } from 'node:perf_hooks';
import { beforeClose, type Db } from './db.js';

interface Soon {
  write: () => void;
  onError: (err: unknown) => void;
}

/** A write that comes this soon (ms) after the last flush continues a stream... */
const STREAM_GAP_MS = 5;
/** ...and once this many came in a row, writes are held; a few calls of one turn are still written one flush each. */
const STREAM_AFTER = 8;
/** In a stream, the longest a write waits (ms): what a process killed mid-stream may lose. */
export const HOLD_MS = 20;
/** In a stream, a batch this large is written at once rather than held longer. */
const MAX_HELD = 256;

interface State {
  writes: Soon[];
  /** the flush scheduled for the writes waiting: right after this turn of the event loop, or held */
  immediate: NodeJS.Immediate | undefined;
  timer: NodeJS.Timeout | undefined;
  lastFlush: number;
  /** how many batches in a row began within STREAM_GAP_MS of the flush before */
  streak: number;
}

const states = new WeakMap<Db, State>();

/** Makes the writes kept back for this connection now (tests, readers in this process, and the close). */
export function flushWritesSoon(db: Db): void {
  const s = states.get(db);
  // Inside a transaction (a reader called from one) the writes would share its fate, a rollback
  // included: they wait for their own flush, which never runs inside one (transactions are synchronous).
  if (!s || !s.writes.length || db.inTransaction) return;
  const writes = s.writes;
  s.writes = [];
  unschedule(s);
  s.lastFlush = performance.now();
  try {
    if (db.open) db.transaction(() => writes.forEach((w) => w.write()))();
  } catch (err) {
    // One failure rolls the whole batch back: each writer hears of it.
    for (const w of writes) w.onError(err);
  }
}

function unschedule(s: State): void {
  if (s.immediate) clearImmediate(s.immediate);
  if (s.timer) clearTimeout(s.timer);
  s.immediate = s.timer = undefined;
}

/** Runs `write` (SQLite statements on `db`) shortly after, in one transaction with the others waiting. */
export function writeSoon(db: Db, write: () => void, onError: (err: unknown) => void): void {
  let s = states.get(db);
  if (!s) {
    s = { writes: [], immediate: undefined, timer: undefined, lastFlush: -Infinity, streak: 0 };
    states.set(db, s);
    beforeClose(db, () => flushWritesSoon(db));
  }
  s.writes.push({ write, onError });
  const flush = () => flushWritesSoon(db);
  if (s.writes.length === 1) {
    // The first write of a batch: is it part of a stream?
    s.streak = performance.now() - s.lastFlush < STREAM_GAP_MS ? s.streak + 1 : 0;
    // Held, one commit then carries many calls' writes. The timer keeps the process alive until it
    // fires, so a process that ends on its own still makes them.
    if (s.streak >= STREAM_AFTER) s.timer = setTimeout(flush, HOLD_MS);
    else s.immediate = setImmediate(flush);
  } else if (s.writes.length >= MAX_HELD && s.timer) {
    unschedule(s);
    s.immediate = setImmediate(flush);
  }
}
