// The gateway's per-client guard with a hand-driven clock: the lockout after repeated bad tokens,
// its expiry and doubling, the token bucket, the table's bound, and the loopback and compare helpers.
import t from 'tap';
import { GatewayGuard, clientKey, constantTimeEqual, isLoopback, type GuardOptions } from '../src/channels/http/guard.js';

function guard(opts: GuardOptions = {}) {
  const clock = { t: 1_000_000 };
  const g = new GatewayGuard({ now: () => clock.t, ...opts });
  return { g, clock, advance: (ms: number) => (clock.t += ms) };
}

/** One request as the gateway handles it: the guard first, then the token. */
function request(g: GatewayGuard, client: string, goodToken: boolean): number {
  const d = g.check(client);
  if (!d.ok) return 429;
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

t.test('the IPv4-mapped form of an address is the same client', async (t) => {
  const { g } = guard({ maxFailures: 2 });
  g.badCredential('::ffff:192.168.1.9');
  g.badCredential('192.168.1.9');
  t.match(g.check('::FFFF:192.168.1.9'), { ok: false, reason: 'lockout' });
  t.match(g.check('192.168.1.9'), { ok: false, reason: 'lockout' });
  t.equal(clientKey('::ffff:1.2.3.4'), '1.2.3.4');
  t.equal(clientKey('::ffff:abcd:1'), '::ffff:abcd:1', 'only a dotted IPv4 tail is unmapped');
  t.equal(clientKey(undefined), '');
});

t.test('failures spread beyond the window, or cleared by a good token, do not lock', async (t) => {
  const { g, advance } = guard();
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
    let started = false;
    for (let i = 0; i < 10; i++) started = g.badCredential('c');
    return started;
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
  t.equal(g.badCredential('c'), false, 'the count starts again after a lockout');

  g.goodCredential('c');
  advance(60 * 60_000); // an hour clean: the strikes are forgotten
  t.ok(lockOut());
  t.match(g.check('c'), { ok: false, retryAfterSeconds: 300 }, 'back to 5 minutes');
  g.goodCredential('c');
  t.match(g.check('c'), { ok: false, reason: 'lockout' }, 'a good token clears failures, not an active lockout');
  t.equal(g.badCredential('c'), false, 'a failure during a lockout does not stretch it');
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
  for (let i = 0; i < 50_000; i++) big.g.check(`fd00::${i.toString(16)}`);
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
  for (let i = 0; i < 50; i++) t.equal(noLockout.g.badCredential('z'), false);
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
