// The sessions cache (src/store/sessions.ts): what a load returns and what a save writes are always
// what the table holds, whatever wrote it, checked against a second connection that has no cache.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import type { Message } from '../src/agent/types.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { loadSession, resetSession, saveSession, stripBinary } from '../src/store/sessions.js';
import { releaseCaches } from '../src/release.js';
import { tempDir } from './support/proc.js';

const text = (role: Message['role'], s: string): Message => ({ role, content: [{ type: 'text', text: s }] });
const image = (note: string): Message => ({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=', note }] });
const stored = (db: Db, key: string) => (db.prepare('select messages, meta from sessions where key = ?').get(key) as { messages: string; meta: string } | undefined);

function pair(t: Test): { a: Db; b: Db } {
  const file = join(tempDir(), 'pinclaw.db');
  const a = openDatabase(file);
  const b = openDatabase(file);
  t.teardown(() => {
    a.close();
    b.close();
  });
  return { a, b };
}

t.test('turn after turn, the row holds exactly the JSON of the whole conversation, images replaced by their notes', async (t) => {
  const { a, b } = pair(t);
  let messages: Message[] = [];
  for (let turn = 0; turn < 6; turn++) {
    const s = loadSession(a, 'k');
    t.same(s.messages, messages.length ? JSON.parse(stored(b, 'k')!.messages) : [], `turn ${turn}: the load equals the row`);
    const asked = turn === 2 ? image(`picture ${turn}`) : text('user', `question ${turn} "quoted" \u2028 ü 😀`);
    s.messages = [...s.messages, asked, text('assistant', `answer ${turn}`)];
    s.meta = { ...s.meta, lastInputTokens: 100 + turn };
    saveSession(a, s);
    messages = s.messages;
    const row = stored(b, 'k')!;
    t.equal(row.messages, JSON.stringify(stripBinary(messages)), `turn ${turn}: the row is the whole conversation`);
    t.same(JSON.parse(row.meta), { lastInputTokens: 100 + turn });
  }
  const last = loadSession(a, 'k');
  t.notOk(JSON.stringify(last.messages).includes('iVBORw0KGgo='), 'no image data is kept, in the cache either');
  t.ok(JSON.stringify(last.messages).includes('picture 2'), 'the note stands in its place');
  t.same(last.meta, { lastInputTokens: 105 });
});

t.test('a conversation that does not continue the cached one (compaction) is written whole', async (t) => {
  const { a, b } = pair(t);
  const s = loadSession(a, 'k');
  s.messages = [text('user', 'one'), text('assistant', 'two'), text('user', 'three'), text('assistant', 'four')];
  saveSession(a, s);
  const next = loadSession(a, 'k');
  next.messages = [text('user', 'summary of one to three'), next.messages[3]!, text('user', 'five')];
  saveSession(a, next);
  t.equal(stored(b, 'k')!.messages, JSON.stringify(next.messages));
  t.same(loadSession(a, 'k').messages, next.messages);
  // And a shorter one with the same first message objects.
  const shorter = loadSession(a, 'k');
  shorter.messages = shorter.messages.slice(0, 1);
  saveSession(a, shorter);
  t.equal(stored(b, 'k')!.messages, JSON.stringify(shorter.messages));
});

t.test('what another connection commits is what the next load returns', async (t) => {
  const { a, b } = pair(t);
  saveSession(a, { key: 'k', messages: [text('user', 'mine')], meta: {} });
  t.same(loadSession(a, 'k').messages, [text('user', 'mine')]);
  // Another process (the CLI) rewrites the row, then resets another session.
  saveSession(b, { key: 'k', messages: [text('user', 'theirs')], meta: { compactions: 1 } });
  const s = loadSession(a, 'k');
  t.same(s.messages, [text('user', 'theirs')], 'the other connection\'s messages');
  t.same(s.meta, { compactions: 1 });
  t.ok(resetSession(b, 'k'));
  t.same(loadSession(a, 'k'), { key: 'k', messages: [], meta: {} }, 'a reset by the other connection empties it');
  // Continuing from the other connection's row writes what the row plus the new messages are.
  saveSession(b, { key: 'k', messages: [text('user', 'again')], meta: {} });
  const c = loadSession(a, 'k');
  c.messages = [...c.messages, text('assistant', 'yes')];
  saveSession(a, c);
  t.equal(stored(b, 'k')!.messages, JSON.stringify([text('user', 'again'), text('assistant', 'yes')]));
});

t.test('a reset, a corrupt row, a released cache and a closed connection', async (t) => {
  const { a, b } = pair(t);
  saveSession(a, { key: 'k', messages: [text('user', 'hello')], meta: {} });
  t.ok(resetSession(a, 'k'));
  t.same(loadSession(a, 'k').messages, [], 'reset on this connection');
  saveSession(a, { key: 'k', messages: [text('user', 'hello')], meta: {} });
  loadSession(a, 'k');
  b.prepare(`update sessions set messages = '[{"role":"robot"}]' where key = 'k'`).run();
  const s = loadSession(a, 'k');
  t.same(s.messages, []);
  t.match(s.recovered, /malformed/, 'the corrupt row written by another connection is found, not hidden by the cache');
  t.equal((b.prepare('select count(*) as n from sessions_quarantine').get() as { n: number }).n, 1);
  saveSession(a, { key: 'k', messages: [text('user', 'fresh')], meta: {} });
  releaseCaches();
  t.same(loadSession(a, 'k').messages, [text('user', 'fresh')], 'after the idle release the row is read again');
});

t.test('a load hands out its own array: a turn that adds to it changes neither the cache nor the next load', async (t) => {
  const { a } = pair(t);
  saveSession(a, { key: 'k', messages: [text('user', 'one')], meta: { compactions: 2 } });
  const first = loadSession(a, 'k');
  first.messages.push(text('assistant', 'not saved'));
  first.meta.compactions = 9;
  const second = loadSession(a, 'k');
  t.same(second.messages, [text('user', 'one')]);
  t.same(second.meta, { compactions: 2 });
});

t.test('many sessions: each load is its own row (the cache keeps a few and lets the others go)', async (t) => {
  const { a, b } = pair(t);
  const expected: Message[][] = [];
  for (let i = 0; i < 12; i++) {
    expected[i] = [text('user', `m${i}`)];
    saveSession(a, { key: `k${i}`, messages: expected[i]!, meta: {} });
  }
  for (let round = 0; round < 2; round++) {
    for (let i = 11; i >= 0; i--) {
      const s = loadSession(a, `k${i}`);
      t.same(s.messages, expected[i]);
      s.messages = [...s.messages, text('assistant', `r${i}.${round}`)];
      expected[i] = s.messages;
      saveSession(a, s);
      t.equal(stored(b, `k${i}`)!.messages, JSON.stringify(s.messages));
    }
  }
  const big = 'x'.repeat(1_200_000);
  saveSession(a, { key: 'big', messages: [text('user', big)], meta: {} });
  t.equal(loadSession(a, 'big').messages[0]!.content[0]!.type, 'text', 'a session larger than the cache is still loaded');
  t.equal((loadSession(a, 'big').messages[0]!.content[0] as { text: string }).text.length, big.length);
});

t.test('every write to the sessions table of a connection goes through src/store/sessions.ts, which keeps the cache', async (t) => {
  // The cache sees other connections' commits (data_version) but not raw SQL on its own connection.
  // migrate's import only inserts rows that do not exist yet (on conflict do nothing): no cached row changes.
  const { readdirSync, readFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const root = join(fileURLToPath(import.meta.url), '..', '..', 'src');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  t.ok(files.length > 100, 'the sources are read');
  const writers = files.filter((f) => /\b(insert\s+(or\s+\w+\s+)?into|update|delete\s+from|replace\s+into)\s+sessions\b/i.test(readFileSync(join(root, f), 'utf8')));
  t.same(writers.sort(), ['migrate/openclaw/apply.ts', 'store/sessions.ts']);
  t.match(readFileSync(join(root, 'migrate/openclaw/apply.ts'), 'utf8'), /insert into sessions [^`]*on conflict \(key\) do nothing/);
});

t.test('a row another program wrote with spaces and a newline is continued into valid JSON', async (t) => {
  const { a, b } = pair(t);
  const first = [text('user', 'one'), text('assistant', 'two')];
  b.prepare(`insert into sessions (key, messages, meta, created_at, updated_at) values ('k', ?, '{}', 0, 0)`).run(`${JSON.stringify(first, null, 2)}\n`);
  const s = loadSession(a, 'k');
  t.same(s.messages, first);
  s.messages = [...s.messages, text('user', 'three')];
  saveSession(a, s);
  t.same(JSON.parse(stored(b, 'k')!.messages), s.messages);
  // And one pretty-printed without the newline: continued as it is.
  b.prepare(`update sessions set messages = ? where key = 'k'`).run(JSON.stringify(first, null, 1));
  const again = loadSession(a, 'k');
  again.messages = [...again.messages, text('user', 'four')];
  saveSession(a, again);
  t.same(JSON.parse(stored(b, 'k')!.messages), [...first, text('user', 'four')]);
});
