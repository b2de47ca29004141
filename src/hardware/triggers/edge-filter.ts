// Which GPIO edges become agent turns, decided without the model: a bouncing contact or a floating
// input must never cost a provider call. An edge passes when it is the configured kind, comes at
// least debounceMs after the last edge seen on the line (software debounce on top of the kernel's,
// which not every GPIO controller has), and fits the rate limit. Edges over the limit are counted;
// an edge over the limit, or a long run of debounced edges, opens a "storm", reported once, and the
// storm's end is reported with the number suppressed: a floating input costs two log lines, not
// thousands of turns.
export type Edge = 'rising' | 'falling';

/** Consecutive debounced edges that make a storm rather than a bouncing contact. */
export const STORM_DEBOUNCED_RUN = 20;

export interface EdgeFilterOptions {
  edge: Edge | 'both';
  debounceMs: number;
  /** at most this many edges pass per windowMs */
  maxPerWindow: number;
  windowMs: number;
}

export type EdgeVerdict =
  | { pass: true; stormEnded?: { suppressed: number; sinceMs: number } }
  | { pass: false; reason: 'edge' | 'debounce' | 'rate'; stormStarted?: boolean };

export class EdgeFilter {
  private lastSeenMs = -Infinity;
  private passed: number[] = [];
  private storm: { startedMs: number; suppressed: number } | undefined;
  private debouncedRun = 0;

  constructor(private readonly o: EdgeFilterOptions) {}

  /** `nowMs` is the event's own timestamp (the kernel's, in ms), so bursts are judged as they happened. */
  offer(edge: Edge, nowMs: number): EdgeVerdict {
    if (this.o.edge !== 'both' && edge !== this.o.edge) return { pass: false, reason: 'edge' };
    const sinceLast = nowMs - this.lastSeenMs;
    this.lastSeenMs = nowMs;
    // Every edge restarts the quiet period: a contact bounces for a while, and only settles once.
    if (sinceLast < this.o.debounceMs) return this.suppress(nowMs, 'debounce');
    while (this.passed.length && this.passed[0]! <= nowMs - this.o.windowMs) this.passed.shift();
    if (this.passed.length >= this.o.maxPerWindow) return this.suppress(nowMs, 'rate');
    this.passed.push(nowMs);
    this.debouncedRun = 0;
    const storm = this.storm;
    this.storm = undefined;
    return storm ? { pass: true, stormEnded: { suppressed: storm.suppressed, sinceMs: nowMs - storm.startedMs } } : { pass: true };
  }

  /** Ends a storm when the line has gone quiet; returns what was suppressed, once. */
  settle(nowMs: number): { suppressed: number; sinceMs: number } | undefined {
    if (!this.storm || nowMs - this.lastSeenMs < this.o.windowMs) return undefined;
    const s = this.storm;
    this.storm = undefined;
    return { suppressed: s.suppressed, sinceMs: nowMs - s.startedMs };
  }

  private suppress(nowMs: number, reason: 'debounce' | 'rate'): EdgeVerdict {
    if (this.storm) {
      this.storm.suppressed++;
      return { pass: false, reason };
    }
    // A contact settles within a few bounces; a run of debounced edges this long is noise (a floating
    // input), and an edge over the rate limit is too many events whatever their cause.
    this.debouncedRun = reason === 'debounce' ? this.debouncedRun + 1 : 0;
    if (reason === 'rate' || this.debouncedRun >= STORM_DEBOUNCED_RUN) {
      this.storm = { startedMs: nowMs, suppressed: reason === 'rate' ? 1 : this.debouncedRun };
      this.debouncedRun = 0;
      return { pass: false, reason, stormStarted: true };
    }
    return { pass: false, reason };
  }
}
