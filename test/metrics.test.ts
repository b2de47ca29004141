// GET /metrics text: label values escaped per the exposition format, every line well formed, on a
// real SQLite store.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { metricsText } from '../src/ops/metrics.js';
import { labels } from '../src/prometheus.js';
import { openDatabase } from '../src/store/db.js';
import { enqueue, recordOutbound } from '../src/store/queue.js';
import { recordGatewayStart } from '../src/ops/watchdog.js';
import { tempDir } from './support/proc.js';

// The text format, version 0.0.4, written from the spec: `# HELP name text` (text escapes `\` and
// newline), `# TYPE name type`, other `#` comments, and samples `name{label="value",…} value
// [timestamp]`; label values escape `\`, `"` and newline; a value is a Go float (or NaN, ±Inf).
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const NUMBER = '(?:[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{${LABEL}=${VALUE}(?:,${LABEL}=${VALUE})*,?\\})?[ \\t]+${NUMBER}(?:[ \\t]+-?[0-9]+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) (?:[^\\\\\\n]|\\\\[\\\\n])*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (?:counter|gauge|histogram|summary|untyped)$`);

/** Checks every line against the format and that each metric's samples follow its own TYPE line. */
function checkExposition(t: Test, text: string): string[] {
  t.ok(text.endsWith('\n'), 'the last line ends with a newline');
  const lines = text.slice(0, -1).split('\n');
  let typed: string | undefined;
  const seen = new Set<string>();
  for (const l of lines) {
    const type = TYPE.exec(l);
    const sample = SAMPLE.exec(l);
    if (type) {
      if (seen.has(type[1]!)) t.fail(`a second TYPE line for ${type[1]}`);
      seen.add(type[1]!);
      typed = type[1];
    } else if (sample) {
      if (sample[1] !== typed) t.fail(`sample of ${sample[1]} outside its group: ${l}`);
    } else if (!HELP.test(l)) t.fail(`not the text format: ${JSON.stringify(l)}`);
  }
  return lines;
}

t.test('label values escape backslash, quote and newline', async (t) => {
  t.equal(labels({ a: 'plain', b: 'say "hi"\\now\n2' }), '{a="plain",b="say \\"hi\\"\\\\now\\n2"}');
  t.equal(labels({}), '');
  t.throws(() => labels({ 'bad-name': 'x' }), /invalid Prometheus label name 'bad-name'/);
  t.throws(() => labels({ __reserved: 'x' }), /invalid Prometheus label name/);
  const hostile = `x"} 1\nforged_metric 666\n`;
  const line = `m${labels({ v: hostile })} 1`;
  t.match(line, SAMPLE, 'a hostile value stays inside one well-formed sample');
  t.equal(line.split('\n').length, 1);
  t.notMatch('m{v="a"b"} 1', SAMPLE, 'the checking regex itself refuses an unescaped quote');
  t.notMatch('m{v="a\\"} 1', SAMPLE, 'and a lone trailing backslash');
});

t.test('the whole output parses line by line', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const row = enqueue(db, { sessionKey: 's', channel: 'http', chatId: 'c', sender: 'api', text: 'hi' }, 0);
  recordOutbound(db, { idempotencyKey: 'k', inboundId: row.id, sessionKey: 's', channel: 'http', chatId: 'c', text: 'hello', kind: 'reply' });
  const lines = checkExposition(t, metricsText(db, Date.now() - 5000));
  t.ok(lines.includes('pinclaw_inbound_messages{state="pending"} 1'));
  t.ok(lines.includes('pinclaw_outbound_messages{state="pending",kind="reply"} 1'));
  t.ok(lines.some((l) => /^pinclaw_info\{version="[^"]+",node="v\d+\.\d+\.\d+",arch="\w+"\} 1$/.test(l)));
});

t.test('a hostile outbound kind in the database stays one escaped label value', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  // The schema allows only 'reply' and 'notice'; a damaged or future database may hold anything.
  db.pragma('ignore_check_constraints = ON');
  const kind = 'x"} 1\nforged_metric 666\n# TYPE forged gauge\\';
  recordOutbound(db, { idempotencyKey: 'k', inboundId: null, sessionKey: 's', channel: 'http', chatId: 'c', text: 'hello', kind: kind as 'notice' });
  const lines = checkExposition(t, metricsText(db, Date.now()));
  t.ok(lines.includes('pinclaw_outbound_messages{state="pending",kind="x\\"} 1\\nforged_metric 666\\n# TYPE forged gauge\\\\"} 1'));
  t.notOk(lines.some((l) => /^(forged|# TYPE forged)/.test(l)), 'no forged line');
});

t.test('gateway starts: a counter kept in the state table, so restarts by systemd add up', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  t.match(metricsText(db, Date.now()), /^pinclaw_gateway_starts_total 0$/m, 'none yet');
  t.equal(recordGatewayStart(db), 1);
  t.equal(recordGatewayStart(db), 2);
  const lines = checkExposition(t, metricsText(db, Date.now()));
  t.ok(lines.includes('# TYPE pinclaw_gateway_starts_total counter'));
  t.ok(lines.includes('pinclaw_gateway_starts_total 2'));
  t.ok(lines.some((l) => /^pinclaw_heap_limit_bytes \d+$/.test(l)), 'the V8 heap limit is there to check the unit\'s cap against');
});
