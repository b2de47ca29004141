// The gateway's per-client guard with a hand-driven clock: the lockout after repeated bad tokens,
// its expiry and doubling, clients as IPv4 addresses and IPv6 /64s, the pause on token attempts
// after too many bad tokens from everyone, the token bucket, the table's bound, and the loopback and
// compare helpers.
import t from 'tap';
import { GatewayGuard, clientKey, constantTimeEqual, isLoopback, type GuardOptions } from '../src/channels/http/guard.js';

function guard(opts: GuardOptions = {}) {
  const clock = { t: 1_000_000 };
  const g = new GatewayGuard({ now: () => clock.t, ...opts });
  return { g, clock, advance: (ms: number) => (clock.t += ms) };
}

/** One request with a token as the gateway handles it: the guard first, then the token. */
function request(g: GatewayGuard, client: string, goodToken: boolean): number {
  const d = g.check(client);
  if (!d.ok) return 429;
  if (!g.checkCredential(client).ok) return 429;
  if (!goodToken) {
    g.badCredential(client);
    return 401;
  }
  g.goodCredential(client);
  return 200;
}

t.test('the 11th bad token in a row is refused, and so is the right one while locked', async (t) => {
  const { g, advance } = guard();
  const codes: number[] = [];
  for (let i = 0; i < 12; i++) {
    codes.push(request(g, '10.0.0.5', false));
    advance(100);
  }
  t.same(codes, [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429, 429]);
  t.equal(request(g, '10.0.0.5', true), 429, 'the right token does not lift the lockout');
  const d = g.check('10.0.0.5');
  t.match(d, { ok: false, reason: 'lockout' });
  t.ok(!d.ok && d.retryAfterSeconds > 290 && d.retryAfterSeconds <= 300, 'retry after about 5 minutes');
  t.equal(request(g, '10.0.0.6', true), 200, 'another client is not affected');
  t.match(g.status(), { lockedClients: 1, lockouts: 1, refused: { lockout: 4, rate: 0 } });
});

t.test('a client is an IPv4 address or an IPv6 /64', async (t) => {
  const same: [string, string][] = [
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0:0:0:5', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:a:b:1.2.3.4', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['10.0.0.1', '10.0.0.1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['127.0.0.2', '127.0.0.2'],
  ];
  for (const [addr, key] of same) t.equal(clientKey(addr), key, addr);
  t.not(clientKey('2001:db8:1:3::1'), clientKey('2001:db8:1:2::1'), 'the next /64 is another client');
  t.not(clientKey('2001:db8:1:2::1'), clientKey('2001:db9:1:2::1'));
  t.not(clientKey('10.0.0.1'), clientKey('10.0.0.2'), 'IPv4 addresses are counted one by one');
  t.equal(clientKey('not-an-address'), 'not-an-address');

  // The lockout: ten guesses spread over a /64 lock the whole /64, and nobody else.
  const { g } = guard({ maxGlobalFailures: 0 });
  for (let i = 1; i <= 10; i++) t.equal(request(g, `2001:db8:1:2::${i.toString(16)}`, false), 401);
  t.equal(request(g, '2001:db8:1:2:dead:beef:0:1', true), 429, 'another address of the same /64 is locked out too');
  t.match(g.check('2001:db8:1:2::99'), { ok: false, reason: 'lockout' });
  t.equal(request(g, '2001:db8:1:3::1', true), 200, 'the next /64 is not');
  t.equal(request(g, '::ffff:10.0.0.1', true), 200);
  t.match(g.status(), { lockouts: 1, lockedClients: 1 });
});

t.test('too many wrong tokens from everyone pause token attempts, except for trusted clients', async (t) => {
  const { g, advance } = guard({ maxGlobalFailures: 30 });
  t.equal(request(g, '10.0.0.1', true), 200, 'the owner gives the right token once');
  // Ten addresses, three guesses each: none reaches its own lockout (10), together they reach 30.
  for (let a = 0; a < 10; a++) {
    for (let i = 0; i < 3; i++) {
      t.equal(request(g, `192.0.2.${a}`, false), 401);
    }
  }
  t.match(g.status(), { lockouts: 0, lockedClients: 0, globalLockouts: 1, globalLockedSeconds: 300 });
  const fresh = g.checkCredential('192.0.2.200');
  t.match(fresh, { ok: false, reason: 'global', retryAfterSeconds: 300 }, 'a new address may not try a token');
  t.equal(request(g, '192.0.2.200', true), 429, 'not even the right one');
  t.equal(request(g, '2001:db8::1', false), 429, 'nor from IPv6');
  t.ok(g.check('192.0.2.200').ok, 'requests without a token (/healthz, the cookie) still pass');
  t.equal(request(g, '10.0.0.1', true), 200, 'the owner, who gave the right token lately, goes on');
  t.equal(g.status().refused.global, 3);
  t.equal(g.badCredential('10.0.0.1'), undefined, 'a failure during the pause does not stretch it');

  advance(300_000);
  t.ok(g.checkCredential('192.0.2.200').ok, 'the pause ends after 5 minutes');
  for (let i = 0; i < 29; i++) g.badCredential(`198.51.100.${i}`);
  t.equal(g.badCredential('198.51.100.200'), 'global', 'the 30th within a minute pauses again');
  t.match(g.checkCredential('192.0.2.200'), { ok: false, retryAfterSeconds: 600 }, 'twice as long');

  advance(600_000);
  for (let i = 0; i < 40; i++) {
    g.badCredential(`198.51.100.${i}`);
    advance(3_000); // 20 within any minute
  }
  t.ok(g.checkCredential('192.0.2.200').ok, 'wrong tokens spread beyond the window do not pause');

  const { g: g2, advance: advance2 } = guard({ maxGlobalFailures: 2, trustMs: 60_000 });
  g2.goodCredential('10.0.0.1');
  advance2(60_000);
  g2.badCredential('a');
  g2.badCredential('b');
  t.match(g2.checkCredential('10.0.0.1'), { ok: false, reason: 'global' }, 'trust lasts trustMs');
});

t.test('the IPv4-mapped form of an address is the same client', async (t) => {
  const { g } = guard({ maxFailures: 2 });
  g.badCredential('::ffff:192.168.1.9');
  g.badCredential('192.168.1.9');
  t.match(g.check('::FFFF:192.168.1.9'), { ok: false, reason: 'lockout' });
  t.match(g.check('192.168.1.9'), { ok: false, reason: 'lockout' });
  t.equal(clientKey('::ffff:1.2.3.4'), '1.2.3.4');
  t.equal(clientKey('::ffff:abcd:1'), '171.205.0.1', 'the hex form of a mapped address too');
  t.equal(clientKey(undefined), '');
});

t.test('failures spread beyond the window, or cleared by a good token, do not lock', async (t) => {
  const { g, advance } = guard({ maxGlobalFailures: 0 });
  for (let i = 0; i < 30; i++) {
    t.equal(request(g, 'a', false), 401);
    advance(7_000); // at most 9 fall within any 60 s
  }
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 9; i++) t.equal(request(g, 'b', false), 401);
    t.equal(request(g, 'b', true), 200, 'the good token clears the count');
  }
  t.equal(g.status().lockouts, 0);
});

t.test('a lockout expires, and each repeated one doubles up to an hour', async (t) => {
  const { g, advance } = guard({ ratePerSecond: 0 });
  const lockOut = () => {
    let started: string | undefined;
    for (let i = 0; i < 10; i++) started = g.badCredential('c');
    return started === 'client';
  };
  const expected = [5, 10, 20, 40, 60, 60].map((m) => m * 60_000);
  for (const ms of expected) {
    t.ok(lockOut(), 'the 10th failure starts a lockout');
    t.match(g.check('c'), { ok: false, reason: 'lockout', retryAfterSeconds: ms / 1000 });
    advance(ms - 1);
    t.match(g.check('c'), { ok: false, retryAfterSeconds: 1 }, 'still locked a millisecond before the end');
    advance(1);
    t.same(g.check('c'), { ok: true }, `free after ${ms / 60_000} min`);
  }
  t.equal(g.badCredential('c'), undefined, 'the count starts again after a lockout');

  g.goodCredential('c');
  advance(60 * 60_000); // an hour clean: the strikes are forgotten
  t.ok(lockOut());
  t.match(g.check('c'), { ok: false, retryAfterSeconds: 300 }, 'back to 5 minutes');
  g.goodCredential('c');
  t.match(g.check('c'), { ok: false, reason: 'lockout' }, 'a good token clears failures, not an active lockout');
  t.equal(g.badCredential('c'), undefined, 'a failure during a lockout does not stretch it');
  t.match(g.check('c'), { ok: false, retryAfterSeconds: 300 });
});

t.test('the token bucket: a burst, then the rate, refilled by time', async (t) => {
  const { g, advance } = guard({ ratePerSecond: 50, burst: 100 });
  let ok = 0;
  for (let i = 0; i < 150; i++) if (g.check('d').ok) ok++;
  t.equal(ok, 100, 'the burst');
  const refused = g.check('d');
  t.match(refused, { ok: false, reason: 'rate', retryAfterSeconds: 1 });
  advance(100); // 5 tokens
  ok = 0;
  for (let i = 0; i < 10; i++) if (g.check('d').ok) ok++;
  t.equal(ok, 5);
  advance(10_000);
  ok = 0;
  for (let i = 0; i < 150; i++) if (g.check('d').ok) ok++;
  t.equal(ok, 100, 'refilled to the burst, no more');
  // 1000 requests over 10 s at a steady 100/s: half get through.
  ok = 0;
  advance(10_000);
  for (let i = 0; i < 1000; i++) {
    advance(10);
    if (g.check('e').ok) ok++;
  }
  t.ok(ok >= 590 && ok <= 600, `burst + 50/s over 10 s (${ok})`);
  t.match(g.status().refused, { rate: 51 + 5 + 50 + (1000 - ok), lockout: 0 });

  const slow = guard({ ratePerSecond: 0.1, burst: 1 });
  t.ok(slow.g.check('x').ok);
  t.match(slow.g.check('x'), { ok: false, retryAfterSeconds: 10 });
  slow.advance(-5_000); // a clock stepping back does not drain or refill
  t.match(slow.g.check('x'), { ok: false, retryAfterSeconds: 10 });
  const off = guard({ ratePerSecond: 0 });
  let refusedOff = 0;
  for (let i = 0; i < 10_000; i++) if (!off.g.check('y').ok) refusedOff++;
  t.equal(refusedOff, 0, 'the rate off refuses nothing');
  t.equal(off.g.status().clients, 0, 'with the rate off a good client leaves nothing behind');
});

t.test('the table stays within maxClients, forgetting the least recently seen', async (t) => {
  const { g, advance } = guard({ maxClients: 100 });
  for (let i = 0; i < 3; i++) g.badCredential('attacker');
  for (let i = 0; i < 10_000; i++) {
    g.check(`10.1.${i >> 8}.${i & 255}`);
    if (i % 50 === 0) g.check('attacker'); // keeps knocking, so stays recent
  }
  t.equal(g.status().clients, 100);
  t.equal(g.status().evicted, 10_000 + 1 - 100);
  for (let i = 0; i < 7; i++) g.badCredential('attacker');
  t.match(g.check('attacker'), { ok: false, reason: 'lockout' }, 'its failures were kept through the flood');

  const big = guard();
  for (let i = 0; i < 50_000; i++) big.g.check(`fd00:0:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`); // 50 000 /64s
  t.equal(big.g.status().clients, 10_000, 'the default cap');

  // Idle entries go at the next sweep; a lockout is remembered until it can no longer matter.
  advance(61_000);
  g.check('someone');
  t.match(g.status(), { clients: 2, lockedClients: 1 }, 'the full buckets were swept, the lockout kept');
  advance(5 * 60_000 + 60 * 60_000);
  g.sweep();
  t.equal(g.status().clients, 0, 'an hour after its lockout ended the attacker is forgotten too');
});

t.test('options are checked', async (t) => {
  t.throws(() => new GatewayGuard({ ratePerSecond: -1 }), RangeError);
  t.throws(() => new GatewayGuard({ burst: 0 }), RangeError);
  t.throws(() => new GatewayGuard({ maxClients: Number.NaN }), RangeError);
  const noLockout = guard({ maxFailures: 0 });
  for (let i = 0; i < 50; i++) t.equal(noLockout.g.badCredential('z'), i === 29 ? 'global' : undefined);
  t.ok(noLockout.g.check('z').ok);
});

t.test('isLoopback', async (t) => {
  for (const h of ['127.0.0.1', '127.255.0.9', 'localhost', 'LOCALHOST', 'localhost.', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::1%lo']) {
    t.ok(isLoopback(h), h);
  }
  for (const h of ['0.0.0.0', '::', '[::]', '', '10.0.0.1', '128.0.0.1', '127.1', '::ffff:10.0.0.1', '::127.0.0.1', '::2', 'fe80::1', 'localhost.example', 'my-pi.local', '1.127.0.0']) {
    t.notOk(isLoopback(h), h || '(empty)');
  }
});

t.test('constantTimeEqual', async (t) => {
  t.ok(constantTimeEqual('s3cret-token', 's3cret-token'));
  t.notOk(constantTimeEqual('s3cret-token', 's3cret-tokeN'));
  t.notOk(constantTimeEqual('s3cret-token', 's3cret'), 'different lengths are just unequal, no throw');
  t.notOk(constantTimeEqual('', 'x'));
  t.ok(constantTimeEqual('', ''));
  t.ok(constantTimeEqual('é€😀', 'é€😀'));
});
