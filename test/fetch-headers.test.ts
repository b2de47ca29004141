// pinclaw's Headers (src/net/fetch-headers.ts) against Node's own (undici's), the reference: the same
// operations, in a seeded random order, on names and values either may refuse, must give the same
// answers, refuse the same calls, and iterate the same fields.
import t from 'tap';
import { FetchHeaders } from '../src/net/fetch-headers.js';
import { prng } from './support/prng.js';

type Outcome = { ok: unknown } | { threw: string };
function outcome(fn: () => unknown): Outcome {
  try {
    const v = fn();
    return { ok: v === undefined ? null : v };
  } catch (err) {
    return { threw: (err as Error).name };
  }
}

const dump = (h: Headers) => ({ entries: [...h], keys: [...h.keys()], values: [...h.values()], cookies: h.getSetCookie(), each: (() => {
  const seen: [string, string][] = [];
  h.forEach((value, key, parent) => {
    if (parent !== h) throw new Error('forEach gave another parent');
    seen.push([key, value]);
  });
  return seen;
})() });

t.test('random operations give what undici\'s Headers gives, refusals included', async (t) => {
  const rnd = prng(20261130);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const names = ['Content-Type', 'content-type', 'X-Custom', 'x-custom', 'set-cookie', 'Set-Cookie', 'Accept', 'a', 'Z', 'x-\u00e9', 'bad name', '', 'x:y', 'x\ty', "ok!#$%&'*+-.^_`|~", 'Ünïcode', 'x\u0100'];
  const values = ['v', ' padded\t', '\r\n trimmed \n', 'a, b', '', 'x\0y', 'x\ry', 'x\ny', 'mid\tdle', 'caf\u00e9', 'snow\u2603', 'x \t', 'a=1; Path=/', '  '];
  for (let round = 0; round < 400; round++) {
    const ours = new FetchHeaders();
    const theirs = new Headers();
    const asked: string[] = [];
    const answers: [Outcome, Outcome][] = [];
    for (let step = 0; step < 12; step++) {
      const op = pick(['append', 'append', 'set', 'delete', 'get', 'has'] as const);
      const name = pick(names);
      const value = pick(values);
      const call = (h: Headers) => (op === 'append' || op === 'set' ? h[op](name, value) : h[op](name));
      asked.push(`${op}(${JSON.stringify(name)}${op === 'append' || op === 'set' ? `, ${JSON.stringify(value)}` : ''})`);
      answers.push([outcome(() => call(ours)), outcome(() => call(theirs))]);
    }
    t.same(answers.map(([a]) => a), answers.map(([, b]) => b), `round ${round}: the same answers to ${asked.join(' ')}`);
    t.same(dump(ours), dump(theirs), `round ${round}: the same fields`);
  }
});

t.test('the constructor takes what undici\'s takes and refuses what it refuses', async (t) => {
  const undiciMade = new Headers([['b', '2'], ['a', '1']]);
  const cases: [string, unknown][] = [
    ['nothing', undefined],
    ['a record', { 'X-A': ' 1 ', b: '2', 'Set-Cookie': 'c=3' }],
    ['pairs with a repeated name', [['x', '1'], ['X', '2'], ['set-cookie', 'a'], ['set-cookie', 'b']]],
    ['undici\'s Headers', undiciMade],
    ['ours', new FetchHeaders({ q: 'r' })],
    ['a Map', new Map([['m', 'n']])],
    ['a pair of three', [['a', 'b', 'c']]],
    ['a pair of one', [['a']]],
    ['a string in the list', ['ab']],
    ['a bad name in a record', { 'a b': 'c' }],
    ['a bad value in pairs', [['a', 'x\ny']]],
    ['a number', 5],
    ['a string', 'a: b'],
  ];
  for (const [what, init] of cases) {
    const ours = outcome(() => dump(new FetchHeaders(init as HeadersInit)));
    const theirs = outcome(() => dump(new Headers(init as HeadersInit)));
    t.same(ours, theirs, what);
  }
  t.ok(new FetchHeaders({ a: '1' }) instanceof FetchHeaders);
  t.equal(Object.prototype.toString.call(new FetchHeaders()), '[object Headers]', 'it says it is a Headers');
  t.same([...new Headers(new FetchHeaders({ b: '2', a: '1' }))], [['a', '1'], ['b', '2']], 'undici\'s Headers reads ours');
});

t.test('iteration is over the fields sorted by name, set-cookie once per value, and bad calls throw TypeError', async (t) => {
  const h = new FetchHeaders();
  h.append('Set-Cookie', 'b=2');
  h.append('zeta', 'last');
  h.append('set-cookie', 'a=1');
  h.append('Alpha', 'x');
  h.append('alpha', 'y');
  t.same([...h], [['alpha', 'x, y'], ['set-cookie', 'b=2'], ['set-cookie', 'a=1'], ['zeta', 'last']]);
  t.equal(h.get('SET-COOKIE'), 'b=2, a=1', 'get joins set-cookie as it joins any field');
  t.throws(() => h.get('no good'), TypeError);
  t.throws(() => h.append('x', 'a\0b'), TypeError);
  t.throws(() => h.forEach('not a function' as never), TypeError);
});
