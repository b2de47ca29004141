// Per-client admission for the gateway: a token bucket per client, a lockout for a client that keeps
// sending wrong tokens, and a budget of wrong tokens for the whole gateway. A client is an IPv4
// address or an IPv6 /64 (clientKey). Pure: the clock is injected and nothing runs on a timer, so
// the gateway calls it per request and the tests drive time by hand.
//
// The lockout exists because the token is the gateway's only secret and /api reaches the agent,
// which can run tools on the board. A token of decent length cannot be guessed online anyway; the
// lockout turns "guess as fast as the Pi answers" into a handful of guesses per lockout period, and
// makes a misconfigured client that retries in a loop visible (429s and a metric) instead of an
// endless stream of 401s. Counting per address alone is not enough: ten addresses get ten times the
// guesses, and one IPv6 host holds a whole /64 (2^64 addresses). So a client is a /64, and past
// `maxGlobalFailures` wrong tokens within the window from everyone together, token attempts are
// paused for every client that has not given the right token lately (a logged-in dashboard, which
// shows a cookie and no token, is not a token attempt and keeps working).
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

export interface GuardOptions {
  /** Sustained requests per second per client; 0 turns rate limiting off. */
  ratePerSecond?: number;
  /** Requests a client may make at once after being idle (the bucket's size). */
  burst?: number;
  /** Bad credentials within `windowMs` that lock a client out; 0 turns the lockout off. */
  maxFailures?: number;
  windowMs?: number;
  /** The first lockout; each further one doubles, up to `maxLockoutMs`. */
  lockoutMs?: number;
  maxLockoutMs?: number;
  /** Bad credentials within `windowMs` from all clients together that pause token attempts; 0: no such budget. */
  maxGlobalFailures?: number;
  /** How long a client that gave the right token stays exempt from that pause. */
  trustMs?: number;
  /** Clients remembered at most; past it the least recently seen one is forgotten. */
  maxClients?: number;
  /** How often, at most, the whole table is scanned for entries that no longer hold anything. */
  sweepEveryMs?: number;
  now?: () => number;
}

/** `global`: token attempts paused for untrusted clients after too many wrong tokens from everyone. */
export type RefusalReason = 'rate' | 'lockout' | 'global';

export type GuardDecision = { ok: true } | { ok: false; reason: RefusalReason; retryAfterSeconds: number };

export interface GuardStatus {
  /** Clients in the table now. */
  clients: number;
  /** Clients refused because of bad credentials right now. */
  lockedClients: number;
  /** Requests refused since start, by reason (counters, for /metrics). */
  refused: Record<RefusalReason, number>;
  /** Lockouts started since start. */
  lockouts: number;
  /** Clients dropped to keep the table within `maxClients`, since start. */
  evicted: number;
  /** Seconds left of the pause on token attempts (0: none). */
  globalLockedSeconds: number;
  /** Pauses started since start. */
  globalLockouts: number;
}

export const GUARD_DEFAULTS = {
  ratePerSecond: 50,
  burst: 100,
  maxFailures: 10,
  windowMs: 60_000,
  lockoutMs: 5 * 60_000,
  maxLockoutMs: 60 * 60_000,
  maxGlobalFailures: 30,
  trustMs: 24 * 60 * 60_000,
  maxClients: 10_000,
  sweepEveryMs: 60_000,
} as const;

/** Clients remembered as having given the right token; a handful in practice (the owner's devices). */
const MAX_TRUSTED = 1000;

interface Client {
  tokens: number;
  refilledAt: number;
  /** Times of the latest bad credentials, oldest first; never more than maxFailures of them. */
  failures: number[];
  /** 0 when never locked out. */
  lockedUntil: number;
  /** Lockouts in a row, which set the next one's length; forgotten after a quiet maxLockoutMs. */
  strikes: number;
}

const OK: GuardDecision = Object.freeze({ ok: true });

/**
 * The key a client is counted under: an IPv4 address, or the /64 an IPv6 address is in (written
 * `2001:db8:1:2::/64`). A /64 is what one host, or one home, gets: counting the exact IPv6 address
 * would give one attacker 2^64 fresh counts. `::ffff:1.2.3.4` is how an IPv4 peer shows up on a
 * dual-stack socket; it is the IPv4 address, or the same peer would have two buckets and two
 * failure counts depending on which socket it came in on. Anything else (a test's name) is itself.
 */
export function clientKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return '';
  const lower = remoteAddress.toLowerCase();
  if (isIPv4(lower)) return lower;
  const g = ipv6Groups(lower);
  if (!g) return lower;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

function checkOption(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) throw new RangeError(`guard ${name}: expected a finite number >= ${min}, found ${value}`);
  return value;
}

export class GatewayGuard {
  private readonly rate: number;
  private readonly burst: number;
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly lockoutMs: number;
  private readonly maxLockoutMs: number;
  private readonly maxClients: number;
  private readonly maxGlobalFailures: number;
  private readonly trustMs: number;
  private readonly sweepEveryMs: number;
  private readonly now: () => number;
  // Bounded memory. A Map iterates in insertion order, so moving a client to the end whenever it is
  // seen makes the first key the least recently seen one: eviction is O(1) per new client, which
  // matters because the moment the table is full is exactly when someone is flooding from many
  // addresses. A periodic sweep drops entries that hold nothing a new one would not (a full bucket,
  // no recent failures, no lockout to remember), so ordinary traffic keeps the table small and the
  // cap only bites under a flood. 10 000 entries of ~200 bytes is ~2 MB, affordable on a Pi.
  // Evicting a locked-out client frees it early, but only an attacker with more than 10 000
  // addresses can force that, and per-address limits cannot stop such an attacker anyway; a client
  // that keeps knocking while locked stays recent and is never the one evicted.
  private readonly clients = new Map<string, Client>();
  private lastSweep: number;
  private readonly refused: Record<RefusalReason, number> = { rate: 0, lockout: 0, global: 0 };
  private lockouts = 0;
  private evicted = 0;
  // Everyone's wrong tokens, counted like one client's (the same window, lockout and doubling).
  private readonly everyone: Client;
  private globalLockouts = 0;
  // Clients that gave the right token, and when last: they are not paused with the rest.
  private readonly trusted = new Map<string, number>();

  constructor(opts: GuardOptions = {}) {
    const o = { ...GUARD_DEFAULTS, ...opts };
    this.rate = checkOption('ratePerSecond', o.ratePerSecond, 0);
    this.burst = checkOption('burst', o.burst, 1);
    this.maxFailures = Math.floor(checkOption('maxFailures', o.maxFailures, 0));
    this.windowMs = checkOption('windowMs', o.windowMs, 0);
    this.lockoutMs = checkOption('lockoutMs', o.lockoutMs, 0);
    this.maxLockoutMs = Math.max(this.lockoutMs, checkOption('maxLockoutMs', o.maxLockoutMs, 0));
    this.maxClients = Math.floor(checkOption('maxClients', o.maxClients, 1));
    this.maxGlobalFailures = Math.floor(checkOption('maxGlobalFailures', o.maxGlobalFailures, 0));
    this.trustMs = checkOption('trustMs', o.trustMs, 0);
    this.sweepEveryMs = checkOption('sweepEveryMs', o.sweepEveryMs, 0);
    this.now = opts.now ?? Date.now;
    this.lastSweep = this.now();
    this.everyone = this.fresh(this.lastSweep);
  }

  /** Whether a request from `client` (its remote address) may proceed; call before authenticating. */
  check(client: string | undefined): GuardDecision {
    const now = this.now();
    this.maybeSweep(now);
    const key = clientKey(client);
    let c = this.clients.get(key);
    if (c && c.lockedUntil > now) {
      // Refused before the token is looked at, so the right token does not help a locked client:
      // otherwise the lockout would only slow guessing down, not stop it.
      this.touch(key, c);
      this.refused.lockout++;
      return { ok: false, reason: 'lockout', retryAfterSeconds: Math.max(1, Math.ceil((c.lockedUntil - now) / 1000)) };
    }
    if (this.rate === 0) {
      if (c) this.touch(key, c);
      return OK;
    }
    c ??= this.fresh(now);
    this.refill(c, now);
    this.touch(key, c);
    if (c.tokens >= 1) {
      c.tokens -= 1;
      return OK;
    }
    this.refused.rate++;
    return { ok: false, reason: 'rate', retryAfterSeconds: Math.max(1, Math.ceil((1 - c.tokens) / this.rate)) };
  }

  /**
   * Whether `client` may have a token checked now (a bearer token, a dashboard login); call it
   * after check() and before comparing the token. Refused while token attempts are paused, unless
   * the client gave the right token within `trustMs`: the right token must not help an attacker
   * during the pause, and the owner's own devices must not be shut out by one.
   */
  checkCredential(client: string | undefined): GuardDecision {
    const now = this.now();
    if (this.everyone.lockedUntil <= now) return OK;
    const key = clientKey(client);
    const at = this.trusted.get(key);
    if (at !== undefined && now - at < this.trustMs) return OK;
    this.refused.global++;
    return { ok: false, reason: 'global', retryAfterSeconds: Math.max(1, Math.ceil((this.everyone.lockedUntil - now) / 1000)) };
  }

  /**
   * Records a wrong token; what it started, if anything (worth one log line): a lockout of this
   * client, or the pause on token attempts for everyone.
   */
  badCredential(client: string | undefined): 'client' | 'global' | undefined {
    const now = this.now();
    let started: 'client' | 'global' | undefined;
    if (this.maxFailures > 0) {
      const key = clientKey(client);
      const c = this.clients.get(key) ?? this.fresh(now);
      this.touch(key, c);
      if (this.fail(c, this.maxFailures, now)) {
        this.lockouts++;
        started = 'client';
      }
    }
    if (this.maxGlobalFailures > 0 && this.fail(this.everyone, this.maxGlobalFailures, now)) {
      this.globalLockouts++;
      started = 'global';
    }
    return started;
  }

  /**
   * Clears the failure count of a client that sent the right token, and exempts it from a pause on
   * token attempts for `trustMs`. It does not lift its own lockout nor forget past ones: behind one
   * NAT address the owner and a guesser look the same.
   */
  goodCredential(client: string | undefined): void {
    const key = clientKey(client);
    const c = this.clients.get(key);
    if (c) c.failures = [];
    this.trusted.delete(key);
    this.trusted.set(key, this.now());
    if (this.trusted.size > MAX_TRUSTED) this.trusted.delete(this.trusted.keys().next().value!);
  }

  status(): GuardStatus {
    const now = this.now();
    let lockedClients = 0;
    for (const c of this.clients.values()) if (c.lockedUntil > now) lockedClients++;
    const globalLockedSeconds = Math.max(0, Math.ceil((this.everyone.lockedUntil - now) / 1000));
    return { clients: this.clients.size, lockedClients, refused: { ...this.refused }, lockouts: this.lockouts, evicted: this.evicted, globalLockedSeconds, globalLockouts: this.globalLockouts };
  }

  /** Drops every entry that holds nothing a new one would not. Runs by itself every sweepEveryMs. */
  sweep(): void {
    const now = this.now();
    this.lastSweep = now;
    for (const [key, c] of this.clients) if (this.idle(c, now)) this.clients.delete(key);
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep >= this.sweepEveryMs) this.sweep();
  }

  private idle(c: Client, now: number): boolean {
    const full = this.rate === 0 || c.tokens + ((now - c.refilledAt) / 1000) * this.rate >= this.burst;
    const noFailures = c.failures.every((t) => now - t >= this.windowMs);
    const nothingToRemember = c.strikes === 0 ? c.lockedUntil <= now : now >= c.lockedUntil + this.maxLockoutMs;
    return full && noFailures && nothingToRemember;
  }

  /** Records one failure against `c`; true when it started a lockout. */
  private fail(c: Client, max: number, now: number): boolean {
    // A request refused by check() never gets this far; one let through just before the lockout
    // began must not stretch it.
    if (c.lockedUntil > now) return false;
    c.failures = c.failures.filter((t) => now - t < this.windowMs);
    c.failures.push(now);
    if (c.failures.length < max) return false;
    if (c.strikes > 0 && now >= c.lockedUntil + this.maxLockoutMs) c.strikes = 0;
    c.strikes++;
    c.lockedUntil = now + Math.min(this.maxLockoutMs, this.lockoutMs * 2 ** (c.strikes - 1));
    // After the lockout the client gets a full set of tries again, and the next lockout is longer.
    c.failures = [];
    return true;
  }

  private fresh(now: number): Client {
    return { tokens: this.burst, refilledAt: now, failures: [], lockedUntil: 0, strikes: 0 };
  }

  private refill(c: Client, now: number): void {
    // A clock that steps back (NTP on a Pi without an RTC) must not drain the bucket.
    const elapsed = Math.max(0, now - c.refilledAt);
    c.tokens = Math.min(this.burst, c.tokens + (elapsed / 1000) * this.rate);
    c.refilledAt = now;
  }

  private touch(key: string, c: Client): void {
    this.clients.delete(key);
    this.clients.set(key, c);
    if (this.clients.size > this.maxClients) {
      const oldest = this.clients.keys().next().value;
      if (oldest !== undefined) {
        this.clients.delete(oldest);
        this.evicted++;
      }
    }
  }
}

/**
 * Compares secrets without leaking where they differ or how long the expected one is: both sides are
 * hashed first, so timingSafeEqual always sees two 32-byte buffers.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or undefined when it is not one. */
function ipv6Groups(text: string): number[] | undefined {
  const addr = text.replace(/%.*$/, '');
  if (!isIPv6(addr)) return undefined;
  let head = addr;
  const tail: number[] = [];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(addr);
  if (v4) {
    const b = v4.slice(1).map(Number) as [number, number, number, number];
    tail.push((b[0] << 8) | b[1], (b[2] << 8) | b[3]);
    head = addr.slice(0, v4.index);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const gap = head.indexOf('::');
  let groups: number[];
  if (gap === -1) groups = [...parse(head), ...tail];
  else {
    const left = parse(head.slice(0, gap));
    const right = [...parse(head.slice(gap + 2)), ...tail];
    groups = [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
  }
  return groups.length === 8 ? groups : undefined;
}

/**
 * Whether binding `host` keeps the gateway on this machine. Unknown forms answer false on purpose
 * (inet_aton shorthands like `127.1`, names other than localhost): the caller then demands a token,
 * which is the safe side to err on. `0.0.0.0` and `::` are every interface, not loopback.
 */
export function isLoopback(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h === 'localhost.') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  const g = ipv6Groups(h);
  if (!g) return false;
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true;
  // IPv4-mapped (::ffff:127.x.y.z, or ::ffff:7f00:1 written in hex).
  return g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff && g[6]! >> 8 === 127;
}
