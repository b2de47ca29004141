// GET /metrics text: label values escaped per the exposition format, every line well formed, on a
// real SQLite store.
import t from 'tap';
import { join } from 'node:path';
import { labels, metricsText } from '../src/ops/metrics.js';
import { openDatabase } from '../src/store/db.js';
import { enqueue, recordOutbound } from '../src/store/queue.js';
import { tempDir } from './support/proc.js';

// The text format, version 0.0.4: comments, and samples `name{label="value",…} number`.
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const SAMPLE = new RegExp(`^${NAME}(\\{[a-zA-Z_][a-zA-Z0-9_]*=${VALUE}(,[a-zA-Z_][a-zA-Z0-9_]*=${VALUE})*\\})? -?[0-9.e+]+$`);
const COMMENT = new RegExp(`^# (HELP ${NAME} (?:[^\\\\\\n]|\\\\[\\\\n])*|TYPE ${NAME} (counter|gauge|histogram|summary|untyped))$`);

t.test('label values escape backslash, quote and newline', async (t) => {
  t.equal(labels({ a: 'plain', b: 'say "hi"\\now\n2' }), '{a="plain",b="say \\"hi\\"\\\\now\\n2"}');
  t.equal(labels({}), '');
  t.throws(() => labels({ 'bad-name': 'x' }), /invalid Prometheus label name 'bad-name'/);
  t.throws(() => labels({ __reserved: 'x' }), /invalid Prometheus label name/);
  const hostile = `x"} 1\nforged_metric 666\n`;
  const line = `m${labels({ v: hostile })} 1`;
  t.match(line, SAMPLE, 'a hostile value stays inside one well-formed sample');
  t.equal(line.split('\n').length, 1);
});

t.test('the whole output parses line by line', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const row = enqueue(db, { sessionKey: 's', channel: 'http', chatId: 'c', sender: 'api', text: 'hi' }, 0);
  recordOutbound(db, { idempotencyKey: 'k', inboundId: row.id, sessionKey: 's', channel: 'http', chatId: 'c', text: 'hello', kind: 'reply' });
  const text = metricsText(db, Date.now() - 5000);
  t.ok(text.endsWith('\n'));
  const lines = text.trimEnd().split('\n');
  for (const l of lines) if (!SAMPLE.test(l) && !COMMENT.test(l)) t.fail(`not the text format: ${l}`);
  t.ok(lines.includes('pinclaw_inbound_messages{state="pending"} 1'));
  t.ok(lines.includes('pinclaw_outbound_messages{state="pending",kind="reply"} 1'));
  t.match(text, /^pinclaw_info\{version="[^"]+",node="v\d+\.\d+\.\d+",arch="\w+"\} 1$/m);
});
