// The canonical text the fleet's signatures cover (src/fleet/fleet-sign.ts) must stay byte for byte
// what older pinclaws produce, or calls between boards of different versions stop verifying. The
// reference below is the implementation those versions ship; the current one is checked against it
// on the shapes calls carry and on odd ones.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { canonicalJson, requestText, responseText, sign, verify } from '../src/fleet/fleet-sign.js';

/** canonicalJson as released (map/filter/join), kept here as the reference. */
function released(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : released(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${released(obj[k])}`).join(',')}}`;
}

const odd: unknown[] = [
  null, true, false, 0, -0, 1.5e300, Number.NaN, Infinity, '', 'plain', 'quote " backslash \\ newline \n tab \t', '\u2028\u2029', '\ud800 lone surrogate', '😀 emoji', 'ü',
  [], [undefined, null, 1], [[[]]], {}, { b: 1, a: 2 }, { z: undefined, y: null }, { 'ä': 1, a: 1, A: 1, '10': 1, '9': 1, '': 1, '😀': 1 },
  { nested: { deep: { list: [{ y: 2, x: 1 }, 'two', 3] } }, sensor: 'temperature' },
  { f: () => 1 }, [() => 1, Symbol('s')], { d: new Date(0) }, new Date(0), { toJSON: 'not a function' },
];

t.test('the canonical text is the released one, byte for byte', async (t) => {
  odd.forEach((v, i) => t.equal(canonicalJson(v), released(v), `odd value ${i}`));
  // Random JSON values as a peer's parser would hand them over.
  const pick = <T>(xs: T[]) => xs[randomBytes(1)[0]! % xs.length]!;
  const gen = (depth: number): unknown => {
    const kind = depth > 3 ? pick(['s', 'n', 'b', 'z']) : pick(['s', 'n', 'b', 'z', 'a', 'o', 'o']);
    if (kind === 's') return randomBytes(6).toString('latin1') + pick(['', '"', '\\', '\u0000', 'é', '𝄞']);
    if (kind === 'n') return pick([0, -1, 3.25, 1e21, -1e-7, 2 ** 53]);
    if (kind === 'b') return pick([true, false]);
    if (kind === 'z') return null;
    if (kind === 'a') return Array.from({ length: randomBytes(1)[0]! % 5 }, () => gen(depth + 1));
    return Object.fromEntries(Array.from({ length: randomBytes(1)[0]! % 6 }, () => [randomBytes(3).toString('base64'), gen(depth + 1)]));
  };
  let same = 0;
  for (let i = 0; i < 2000; i++) {
    const v = JSON.parse(JSON.stringify(gen(0))) as unknown;
    if (canonicalJson(v) === released(v)) same++;
    else t.fail(`differs for ${JSON.stringify(v)}`);
  }
  t.equal(same, 2000, '2000 random values');
});

t.test('a signature made over the released text verifies, and one changed field does not', async (t) => {
  const req = { v: 1 as const, id: 'call-00000001', from: 'house', to: 'shed', tool: 'relay', input: { on: true, pin: 4 }, at: 1_700_000_000_000, exp: 1_700_000_010_000, rcv: 1_699_999_999_000 };
  const old = sign('k', released(['pinclaw-fleet-req', 1, req.id, req.from, req.to, req.tool, req.input, req.at, req.exp, req.rcv]));
  t.ok(verify('k', requestText(req), old));
  t.notOk(verify('k', requestText({ ...req, input: { on: false, pin: 4 } }), old));
  const res = { v: 1 as const, id: req.id, from: 'shed', to: 'house', ok: true, content: 'relay on', isError: false, at: 1_700_000_000_100 };
  const oldRes = sign('k', released(['pinclaw-fleet-res', 1, res.id, res.from, res.to, res.ok, null, res.content, res.isError, res.at]));
  t.ok(verify('k', responseText(res), oldRes));
  t.notOk(verify('k', responseText({ ...res, content: 'relay off' }), oldRes));
});
