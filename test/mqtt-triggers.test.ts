// MQTT triggers: the condition judged without the model, debounce and rate limit, against a real
// mosquitto with the real link; and through a real gateway, where only matching messages reach the
// model (counted at the Anthropic stand-in).
import t from 'tap';
import mqtt from 'mqtt';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMqttLink } from '../src/mqtt/connection.js';
import { defaults } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import { asText, judge, payloadValue, valueAt } from '../src/fleet/condition.js';
import { checkMqttTriggers, startMqttTriggers, type MqttTriggerConfig } from '../src/fleet/triggers.js';
import type { NewInbound } from '../src/store/queue.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { startBroker } from './support/mosquitto.js';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function trigger(o: Partial<MqttTriggerConfig> & { topic: string }): MqttTriggerConfig {
  return { when: {}, debounceMs: 0, rateLimit: { max: 100, perSeconds: 60 }, session: 'home', message: 'look', ...o };
}

t.test('conditions', async (t) => {
  t.same(payloadValue('{"a":1}'), { json: true, value: { a: 1 } });
  t.same(payloadValue('on'), { json: false, value: 'on' });
  t.same(payloadValue('23.5'), { json: true, value: 23.5 });
  t.same(valueAt({ a: { b: [5, 6] } }, 'a.b.1'), { found: true, value: 6 });
  t.same(valueAt({ a: 1 }, 'a.b'), { found: false });
  t.same(valueAt({}, 'constructor'), { found: false }, 'only own fields');
  t.equal(asText(true), 'true');
  t.equal(asText(null), 'null');

  t.same(judge(undefined, 'anything'), { match: true, value: 'anything' });
  t.same(judge({}, '{"x":1}'), { match: true, value: { x: 1 } });
  t.same(judge({ path: 'contact', equals: 'false' }, '{"contact":false}'), { match: true, value: false });
  t.match(judge({ path: 'contact', equals: 'false' }, '{"contact":true}'), { match: false, why: '"true" is not "false"' });
  t.match(judge({ path: 'contact' }, 'open'), { match: false, why: /not JSON, and when.path \(contact\) needs a JSON field/ });
  t.match(judge({ path: 'temp' }, '{"t":1}'), { match: false, why: 'the payload has no field temp' });
  t.same(judge({ path: 'temp', above: 30 }, '{"temp":31.5}'), { match: true, value: 31.5 });
  t.match(judge({ path: 'temp', above: 30 }, '{"temp":30}'), { match: false, why: '30 is not above 30' });
  t.same(judge({ above: 30, below: 40 }, '35'), { match: true, value: 35 });
  t.same(judge({ path: 'temp', below: 0 }, '{"temp":"-3.5"}'), { match: true, value: '-3.5' }, 'a number as text counts');
  t.match(judge({ path: 'temp', below: 0 }, '{"temp":"cold"}'), { match: false, why: '"cold" is not a number' });
  t.match(judge({ below: 0 }, ''), { match: false, why: '"" is not a number' });
  t.same(judge({ contains: 'MOTION' }, 'motion detected'), { match: true, value: 'motion detected' });
  t.match(judge({ notEquals: 'idle' }, 'idle'), { match: false });
  t.same(judge({ path: 'state', equals: 'on', notEquals: 'off' }, '{"state":"on"}'), { match: true, value: 'on' });

  t.throws(() => checkMqttTriggers([trigger({ topic: 'a/#/b' })]), new ConfigError('mqtt.triggers[0].topic: "a/#/b" is not a valid filter (+ stands for a whole level, # only for the last)'));
  t.throws(() => checkMqttTriggers([trigger({ topic: 'a/b+' })]), /not a valid filter/);
  t.throws(() => checkMqttTriggers([trigger({ topic: 'x', session: undefined })]), /mqtt\.triggers\[0\]\.session: required/);
  t.throws(() => checkMqttTriggers([trigger({ topic: '' })]), /mqtt\.triggers\[0\]\.topic: required/);
  t.throws(() => checkMqttTriggers([trigger({ topic: 'ok/+' }), trigger({ topic: 'x', message: undefined })]), /mqtt\.triggers\[1\]\.message: required/);
});

t.test('a real broker: matches become messages, debounced and rate-limited; retained state is not an event', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const pub = await mqtt.connectAsync(b.url, { clientId: 'sensor' });
  t.teardown(() => pub.endAsync());
  // Old state, retained before pinclaw subscribes: not a trigger.
  await pub.publishAsync('home/door', '{"contact":false}', { qos: 1, retain: true });
  const linkInfo: string[] = [];
  const link = openMqttLink({ settings: { ...defaults().mqtt, url: b.url, nodeId: 'n1' }, log: { ...quiet, info: (m: string) => linkInfo.push(m) } });
  t.teardown(() => link.close());
  const submitted: NewInbound[] = [];
  const warnings: string[] = [];
  let clock = 1_000_000;
  const triggers = startMqttTriggers({
    link,
    triggers: [
      trigger({ topic: 'home/door', when: { path: 'contact', equals: 'false' }, message: 'the door opened', debounceMs: 1000 }),
      trigger({ topic: 'home/+/temp', when: { above: 30 }, session: 'telegram:42', message: 'hot', rateLimit: { max: 2, perSeconds: 60 } }),
    ],
    submit: (m) => submitted.push(m),
    knownChannels: ['telegram'],
    now: () => clock,
    log: { ...quiet, warn: (m: string) => warnings.push(m) },
  });
  t.teardown(() => triggers.stop());
  // The broker has acknowledged both filters before the test publishes (connected alone is too early).
  const subscribed = () => linkInfo.filter((l) => l.startsWith('mqtt: subscribed to ')).join(', ');
  await until(() => subscribed().includes('home/door') && subscribed().includes('home/+/temp'), 'both subscriptions');
  await pub.publishAsync('home/door', '{"contact":true}', { qos: 1 });
  await pub.publishAsync('home/door', 'not json', { qos: 1 });
  await pub.publishAsync('home/door', '{"contact":false}', { qos: 1 });
  await until(() => triggers.status()[0]!.seen === 3, 'three door messages');
  t.equal(submitted.length, 1, 'only the match');
  t.match(submitted[0], { sessionKey: 'home', channel: 'hardware', chatId: 'home', sender: 'mqtt-trigger', meta: { trigger: 0, topic: 'home/door' } });
  t.match(submitted[0]!.text, /^the door opened\n\n\(MQTT message on home\/door: \{"contact":false\}\)$/);
  // The same event again within the debounce: one event.
  clock += 500;
  await pub.publishAsync('home/door', '{"contact":false}', { qos: 1 });
  await until(() => triggers.status()[0]!.seen === 4, 'the bounce');
  t.equal(submitted.length, 1);
  t.equal(triggers.status()[0]!.suppressed, 1);
  clock += 5000;
  await pub.publishAsync('home/door', '{"contact":false}', { qos: 1 });
  await until(() => submitted.length === 2, 'after the quiet period');
  t.equal(triggers.status()[0]!.lastMiss, 'the payload is not JSON, and when.path (contact) needs a JSON field');
  t.same(warnings, ['mqtt trigger 0 (home/door): a message on home/door cannot match: the payload is not JSON, and when.path (contact) needs a JSON field (mqtt.triggers[0].when.path; said once an hour)']);

  // Wildcards, routing to a chat session, and the rate limit: 5 hot readings, 2 turns.
  for (const v of [31, 29, 35, 40, 33, 50]) {
    clock += 10;
    await pub.publishAsync(`home/${v % 2 ? 'attic' : 'cellar'}/temp`, String(v), { qos: 1 });
  }
  await until(() => triggers.status()[1]!.seen === 6, 'six readings');
  const hot = submitted.filter((m) => m.sessionKey === 'telegram:42');
  t.equal(hot.length, 2);
  t.match(hot[0], { channel: 'telegram', chatId: '42', text: /MQTT message on home\/attic\/temp: 31\)$/ });
  t.equal(triggers.status()[1]!.suppressed, 3, 'the readings above 30 beyond the limit');
  t.match(warnings[1], /^mqtt trigger 1 \(home\/\+\/temp\): more than 2 matches within 60 s; further matches are dropped/);
  // Another message of the wrong shape within the hour: not said again.
  await pub.publishAsync('home/door', '{"open":1}', { qos: 1 });
  await until(() => triggers.status()[0]!.lastMiss === 'the payload has no field contact', 'the second miss');
  t.equal(warnings.length, 2);
});

t.test('through a gateway: a matching message starts one turn; the others reach no model', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const llm = await startAnthropicServer(textReply('noted'));
  t.teardown(() => llm.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    // The chat on (it is off by default): a trigger's session that names no chat is answered there.
    mqtt: { url: b.url, nodeId: 'garage', chat: { enabled: true }, triggers: [{ topic: 'sensors/garage', when: { path: 'co2', above: 1500 }, session: 'air', message: 'CO2 is high in the garage' }] },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url }) });
  t.teardown(() => gw.child.kill('SIGKILL'));
  // Subscribed, not just connected: a message published before the broker took the subscription
  // reaches nobody (it is not retained).
  await gw.waitFor(/mqtt: subscribed to .*sensors\/garage/);
  const pub = await mqtt.connectAsync(b.url, { clientId: 'co2-sensor' });
  t.teardown(() => pub.endAsync());
  const out: string[] = [];
  const watch = await mqtt.connectAsync(b.url, { clientId: 'watch' });
  t.teardown(() => watch.endAsync());
  watch.on('message', (_t, p) => out.push(p.toString()));
  await watch.subscribeAsync('pinclaw/garage/chat/out', { qos: 1 });
  for (const co2 of [400, 900, 'broken', 1600]) await pub.publishAsync('sensors/garage', JSON.stringify({ co2 }), { qos: 1 });
  await llm.received(1);
  await until(() => out.length === 1, 'the reply on chat/out');
  t.equal(llm.requests.length, 1, 'one model call, for the one match');
  t.match(JSON.stringify(llm.requests[0]!.body), /CO2 is high in the garage\\n\\n\(MQTT message on sensors\/garage: \{\\"co2\\":1600\}\)/);
  t.match(JSON.parse(out[0]!), { session: 'air', text: 'noted' }, 'answered on chat/out in its session');
  gw.child.kill('SIGTERM');
  t.match(await gw.exited, { code: 0 });
});
