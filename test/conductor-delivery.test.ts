// Delivery of replies on a real SQLite file: a pass that throws does not poison later ones, failed
// deliveries are retried on a timer with backoff, one channel that is down never delays another,
// and a reply sent in parts resumes after the parts already delivered.
import t from 'tap';
import { join } from 'node:path';
import { ensureWorkspace } from '../src/agent/workspace.js';
import { heuristicCount } from '../src/agent/tokens.js';
import { defaults } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import { createConductor, type ChannelAdapter } from '../src/conductor/conductor.js';
import { createDeliverer } from '../src/conductor/delivery.js';
import { openDatabase } from '../src/store/db.js';
import { deliveredParts, outboundBacklog, recordOutbound, type OutboundRow } from '../src/store/queue.js';
import { toolSet } from '../src/tools/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { tempDir } from './support/proc.js';

type Send = ChannelAdapter['send'];

function setup(channels: { name: string; send: Send }[], retry: (attempt: number) => number = () => 30) {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const bus = createBus();
  const conductor = createConductor({
    db, config: defaults(), workspace, provider: async () => scriptedProvider([], async (req) => reply(`re: ${JSON.stringify(req.messages.at(-1)!.content).replace(/\W+/g, ' ').trim()}`)),
    tools: toolSet([]), countTokens: heuristicCount, bus, channels: channels.map((c) => ({ ...c, debounceMs: 0 })),
    deliveryRetryDelayMs: retry,
  });
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  return { db, conductor, bus };
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

t.test('a delivery pass that throws does not stop the replies after it', async (t) => {
  const sent: string[] = [];
  const { db, conductor } = setup([{ name: 'chat', send: async (o) => void sent.push(o.text) }]);
  // A SQLite error in markSent of the first reply, the failure the old promise chain never caught.
  let failures = 0;
  db.function('fail_once', () => (failures++ === 0 ? 1 : 0));
  db.exec(`create temp trigger fail_once before update of state on outbound when new.text = 'first' and fail_once()
    begin select raise(abort, 'disk I/O error (injected)'); end`);
  conductor.start();
  conductor.send({ channel: 'chat', chatId: 'a', text: 'first' });
  await until('the first send', () => sent.length === 1);
  const second = conductor.send({ channel: 'chat', chatId: 'b', text: 'second' });
  const third = conductor.send({ channel: 'chat', chatId: 'a', text: 'third' });
  await until('later replies', () => sent.includes('second') && sent.includes('third'));
  const state = (id: number) => (db.prepare('select state from outbound where id = ?').get(id) as { state: string }).state;
  t.equal(state(second.id), 'sent');
  t.equal(state(third.id), 'sent');
  // The first reply's send succeeded but its mark did not: the next pass sends it again, since this
  // channel records no part ids (a channel that does, like Telegram, skips it: see below).
  await until('the first reply marked sent on a later pass', () => (db.prepare(`select state from outbound where text = 'first'`).get() as { state: string }).state === 'sent');
});

t.test('a bus listener that throws does not stop delivery', async (t) => {
  const sent: string[] = [];
  const { conductor, bus } = setup([{ name: 'chat', send: async (o) => void sent.push(o.text) }]);
  let thrown = 0;
  bus.on('reply', () => {
    thrown++;
    throw new Error('listener bug');
  });
  conductor.start();
  conductor.send({ channel: 'chat', chatId: 'a', text: 'one' });
  conductor.send({ channel: 'chat', chatId: 'a', text: 'two' });
  await until('both replies', () => sent.length === 2);
  await until('both reply events', () => thrown === 2);
  t.same(sent, ['one', 'two']);
});

t.test('a failed delivery is retried on a timer with backoff, with no new event', async (t) => {
  const attempts: number[] = [];
  let up = false;
  const delays: number[] = [];
  const { db, conductor } = setup([{
    name: 'chat',
    send: async () => {
      attempts.push(Date.now());
      if (!up) throw new Error('network is unreachable');
    },
  }], (attempt) => {
    delays.push(attempt);
    return 20 * 2 ** (attempt - 1);
  });
  conductor.start();
  const row = conductor.send({ channel: 'chat', chatId: 'a', text: 'hello' });
  await until('three failed attempts', () => attempts.length >= 3);
  up = true;
  await until('delivered', () => (db.prepare('select state from outbound where id = ?').get(row.id) as { state: string }).state === 'sent');
  t.same(delays.slice(0, 3), [1, 2, 3], 'each retry asks for the next backoff step');
  t.ok(attempts[2]! - attempts[1]! >= attempts[1]! - attempts[0]!, 'the waits grow');
  const after = db.prepare('select attempts, last_error from outbound where id = ?').get(row.id) as { attempts: number; last_error: string };
  t.ok(after.attempts >= 3, 'failed attempts are counted on the row');
  t.equal(after.last_error, 'network is unreachable');
});

t.test('a channel that is down never delays another; replies to one chat keep their order', async (t) => {
  const fast: string[] = [];
  const slowSent: string[] = [];
  let down = true;
  const { db, conductor } = setup([
    { name: 'down', send: async (o) => { if (down) throw new Error('502 Bad Gateway'); slowSent.push(o.text); } },
    { name: 'up', send: async (o) => void fast.push(o.text) },
  ], () => 60_000);
  conductor.start();
  conductor.send({ channel: 'down', chatId: 'x', text: 'd1' });
  conductor.send({ channel: 'down', chatId: 'x', text: 'd2' });
  for (let i = 0; i < 5; i++) conductor.send({ channel: 'up', chatId: 'y', text: `u${i}` });
  await until('the up channel delivered', () => fast.length === 5);
  t.same(fast, ['u0', 'u1', 'u2', 'u3', 'u4']);
  t.same(slowSent, []);
  t.match(outboundBacklog(db), [{ channel: 'down', pending: 2 }], 'the backlog shows the waiting channel');
  down = false;
  // The channel says it is back: its replies are tried now, not in a minute, and in order.
  conductor.retryDelivery('down');
  await until('the down channel delivered', () => slowSent.length === 2);
  t.same(slowSent, ['d1', 'd2']);
});

t.test('replies to one chat keep their order when one send fails once and the next would succeed', async (t) => {
  const sent: string[] = [];
  const tries: string[] = [];
  let failed = false;
  const { db, conductor } = setup([{
    name: 'chat',
    send: async (o) => {
      tries.push(o.text);
      // Only the first try of a1 fails (a dropped connection); every other send succeeds.
      if (o.text === 'a1' && !failed) {
        failed = true;
        throw new Error('connection reset');
      }
      sent.push(o.text);
    },
  }], () => 20);
  // Recorded before the start, as after a restart: the first delivery pass sees all four at once,
  // so a2 and a3 would go out in the same pass a1 failed in if that failure did not hold chat a.
  const record = (chatId: string, text: string) => recordOutbound(db, { idempotencyKey: text, inboundId: null, sessionKey: `chat:${chatId}`, channel: 'chat', chatId, text, kind: 'reply' });
  for (const [chat, text] of [['a', 'a1'], ['b', 'b1'], ['a', 'a2'], ['a', 'a3']] as const) record(chat, text);
  conductor.start();
  await until('all four delivered', () => sent.length === 4);
  t.same(sent.filter((x) => x.startsWith('a')), ['a1', 'a2', 'a3'], 'chat a in order, a1 first although its first send failed');
  t.same(tries.slice(0, 2), ['a1', 'b1'], 'the failed first pass sent chat b and held the rest of chat a back');
  t.same(sent, ['b1', 'a1', 'a2', 'a3']);
  t.same(tries.filter((x) => x === 'a2'), ['a2'], 'a2 was sent once, after a1');
});

// A chat's first reply waits for its retry; the replies after it wait behind it. The timer is set
// for that retry only: it was set for the earliest next_attempt_at of every pending row, which for
// a reply never tried is 0, so the channel made a pass (a query) every 10 ms until the retry.
t.test('replies waiting behind a chat\'s failed reply do not make the channel poll', async (t) => {
  const dir = tempDir();
  const real = openDatabase(join(dir, 'pinclaw.db'));
  t.teardown(() => real.close());
  let passes = 0;
  // The pending-replies query counted as it runs: one per delivery pass.
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (text: string) => {
          const st = target.prepare(text);
          if (!/from outbound where state = 'pending' and channel = \?/.test(text)) return st;
          return new Proxy(st, {
            get(s, p) {
              if (p === 'all') return (...args: unknown[]) => (passes++, s.all(...args));
              const v = Reflect.get(s, p, s);
              return typeof v === 'function' ? v.bind(s) : v;
            },
          });
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const tries: string[] = [];
  const deliverer = createDeliverer({
    db, channel: { name: 'chat', send: async (o) => { tries.push(o.text); throw new Error('502 Bad Gateway'); } },
    wanted: () => true, retryDelayMs: () => 400, onSent: () => {}, crashPoint: () => {},
  });
  t.teardown(() => deliverer.stop());
  for (const text of ['a1', 'a2', 'a3']) recordOutbound(real, { idempotencyKey: text, inboundId: null, sessionKey: 'chat:a', channel: 'chat', chatId: 'a', text, kind: 'reply' });
  deliverer.kick();
  await deliverer.idle();
  await new Promise((r) => setTimeout(r, 300));
  t.same(tries, ['a1'], 'a1 tried once; a2 and a3 wait behind it');
  t.equal(passes, 1, `one pass until a1's retry (${passes} passes in 300 ms)`);
  await new Promise((r) => setTimeout(r, 400));
  t.same(tries, ['a1', 'a1'], 'a1 tried again at its retry, and still first');
});

t.test('a reply in parts resumes after the parts already delivered', async (t) => {
  const wire: string[] = [];
  let failAt = 2;
  const send: Send = async (o, delivery) => {
    const parts = o.text.split('|');
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      if (i === failAt) {
        failAt = -1;
        throw new Error('connection reset');
      }
      wire.push(parts[i]!);
      delivery.partSent(`m${wire.length}`);
    }
  };
  const { db, conductor } = setup([{ name: 'chat', send }], () => 10);
  conductor.start();
  const row = conductor.send({ channel: 'chat', chatId: 'a', text: 'p0|p1|p2|p3' });
  await until('sent', () => (db.prepare('select state from outbound where id = ?').get(row.id) as { state: string }).state === 'sent');
  t.same(wire, ['p0', 'p1', 'p2', 'p3'], 'each part went out once');
  const done = db.prepare('select * from outbound where id = ?').get(row.id) as OutboundRow;
  t.same(deliveredParts(done), ['m1', 'm2', 'm3', 'm4'], 'the row holds every part id');
});
