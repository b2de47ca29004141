// The shared MQTT connection against a real mosquitto: availability and its last will, publish
// acknowledgements, subscriptions with handlers, refused credentials, a broker restart.
import t from 'tap';
import mqtt from 'mqtt';
import { checkMqttSettings, nodeIdOf, openMqttLink, topicMatches, type MqttSettings } from '../src/mqtt/connection.js';
import { defaults } from '../src/config/schema.js';
import { startBroker, type Broker } from './support/mosquitto.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function settings(url: string, extra: Partial<MqttSettings> = {}): MqttSettings {
  return { ...defaults().mqtt, url, nodeId: 'bench', reconnect: { minMs: 100, maxMs: 400 }, ...extra };
}

/** A plain mqtt client that records what arrives on a filter. */
async function watcher(b: Broker, filter: string) {
  const c = await mqtt.connectAsync(b.url, { clientId: `watch-${Math.random().toString(16).slice(2)}` });
  const got: { topic: string; text: string; retain: boolean }[] = [];
  c.on('message', (topic, p, packet) => got.push({ topic, text: p.toString(), retain: packet.retain }));
  await c.subscribeAsync(filter, { qos: 1 });
  return {
    got,
    client: c,
    async until(pred: (m: { topic: string; text: string; retain: boolean }) => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const m = got.find(pred);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`nothing matched within ${ms} ms; got ${JSON.stringify(got)}`);
    },
  };
}

t.test('topic filters', async (t) => {
  t.ok(topicMatches('a/+/c', 'a/b/c'));
  t.notOk(topicMatches('a/+/c', 'a/b/d'));
  t.ok(topicMatches('a/#', 'a'));
  t.ok(topicMatches('a/#', 'a/b/c'));
  t.notOk(topicMatches('+/x', '$SYS/x'));
  t.notOk(topicMatches('a/b', 'a/b/c'));
  t.notOk(topicMatches('a/b/c', 'a/b'));
  t.ok(topicMatches('+', 'a'));
  t.notOk(topicMatches('+', 'a/b'));
});

t.test('settings: bad input names the key', async (t) => {
  t.throws(() => checkMqttSettings(settings('http://x')), /mqtt\.url: the scheme http: is not one of/);
  t.throws(() => checkMqttSettings(settings('not a url')), /mqtt\.url: "not a url" is not a URL/);
  t.throws(() => checkMqttSettings(settings('mqtt://x', { baseTopic: 'a/#' })), /mqtt\.baseTopic/);
  t.throws(() => checkMqttSettings(settings('mqtt://x', { nodeId: 'a/b' })), /mqtt\.nodeId: "a\/b" must be/);
  t.throws(() => checkMqttSettings(settings('mqtt://x', { reconnect: { minMs: 500, maxMs: 100 } })), /mqtt\.reconnect\.maxMs \(100\) is below/);
  t.equal(nodeIdOf({}, 'pi.local'), 'pi_local');
});

t.test('availability, publish, subscribe, clean stop', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const w = await watcher(b, 'pinclaw/#');
  t.teardown(() => w.client.endAsync());
  const link = openMqttLink({ settings: settings(b.url), log: quiet });
  const seen: string[] = [];
  link.subscribe('pinclaw/bench/in', (topic, payload) => seen.push(payload.toString()));
  await w.until((m) => m.topic === 'pinclaw/bench/status' && m.text === 'online');
  t.equal(link.topic('chat/out'), 'pinclaw/bench/chat/out');
  t.equal(link.topic('rpc', 'shed'), 'pinclaw/shed/rpc');
  await link.publish(link.topic('x'), 'hello', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/bench/x' && m.text === 'hello');
  await w.client.publishAsync('pinclaw/bench/in', 'ping', { qos: 1 });
  const end = Date.now() + 5000;
  while (!seen.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.same(seen, ['ping']);
  await link.close();
  await w.until((m) => m.topic === 'pinclaw/bench/status' && m.text === 'offline');
  await t.rejects(link.publish('pinclaw/bench/x', 'late'), /mqtt: not connected/);
});

t.test('refused credentials: a clear error, logged once, retried', async (t) => {
  const b = await startBroker({ users: { owner: 'right' } });
  t.teardown(() => b.stop());
  const errors: string[] = [];
  const states: string[] = [];
  const link = openMqttLink({ settings: settings(b.url, { username: 'owner', password: 'wrong' }), log: { ...quiet, error: (m: string) => errors.push(m) } });
  t.teardown(() => link.close());
  link.onState((s, d) => states.push(`${s}: ${d}`));
  const end = Date.now() + 5000;
  while (errors.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.match(errors[0], /mqtt: mqtt:\/\/127\.0\.0\.1:\d+: Connection refused: (Not authorized|Bad User Name or Password)/);
  t.notMatch(errors.join('\n'), /wrong/, 'the password never reaches the log');
  await new Promise((r) => setTimeout(r, 800));
  t.equal(errors.length, 1, 'logged once, not on every retry');
  t.notOk(link.connected());
  await t.rejects(link.publish('pinclaw/bench/x', 'x'), /not connected .*Connection refused/);
  t.match(states.join('\n'), /down: .*Connection refused/);
});

t.test('last will: a link that dies without a goodbye shows offline', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const w = await watcher(b, 'pinclaw/+/status');
  t.teardown(() => w.client.endAsync());
  // A child process holds the link and is killed: the broker publishes its will after the keepalive.
  const { spawn } = await import('node:child_process');
  const { join } = await import('node:path');
  const { writeFileSync } = await import('node:fs');
  const { tempDir, root } = await import('./support/proc.js');
  const dir = tempDir();
  const script = join(dir, 'hold.cjs');
  const { build } = await import('esbuild');
  await build({
    stdin: {
      contents: `import { openMqttLink } from ${JSON.stringify(join(root, 'src/mqtt/connection.ts'))};
import { defaults } from ${JSON.stringify(join(root, 'src/config/schema.ts'))};
openMqttLink({ settings: { ...defaults().mqtt, url: ${JSON.stringify(b.url)}, nodeId: 'doomed', keepaliveSeconds: 5 } });`,
      resolveDir: root, loader: 'ts', sourcefile: 'hold.ts',
    },
    outfile: script, bundle: true, platform: 'node', format: 'cjs', logLevel: 'warning',
  });
  const child = spawn(process.execPath, [script], { stdio: 'ignore', cwd: root });
  t.teardown(() => child.kill('SIGKILL'));
  await w.until((m) => m.topic === 'pinclaw/doomed/status' && m.text === 'online', 20_000);
  child.kill('SIGKILL');
  const before = Date.now();
  // Mosquitto sees the TCP close at once and publishes the will (no keepalive wait).
  await w.until((m) => m.topic === 'pinclaw/doomed/status' && m.text === 'offline', 20_000);
  t.ok(Date.now() - before < 20_000);
});

t.test('broker restart: reconnects, the session resumes, queued QoS 1 messages arrive', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const link = openMqttLink({ settings: settings(b.url), log: quiet });
  t.teardown(() => link.close());
  const seen: string[] = [];
  link.subscribe('pinclaw/bench/in', (_t, p) => seen.push(p.toString()));
  let connects = 0;
  link.onConnect(() => connects++);
  const wait = async (pred: () => boolean, what: string) => {
    const end = Date.now() + 10_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await wait(() => link.connected(), 'connected');
  await b.stop();
  await wait(() => !link.connected(), 'lost');
  await b.start();
  await wait(() => link.connected(), 'connected again');
  // Offline for the link: the broker queues QoS 1 messages for its persistent session.
  const sender = await mqtt.connectAsync(b.url, { clientId: 'sender' });
  t.teardown(() => sender.endAsync());
  await link.close();
  for (let i = 0; i < 5; i++) await sender.publishAsync('pinclaw/bench/in', `m${i}`, { qos: 1 });
  const again = openMqttLink({ settings: settings(b.url), log: quiet });
  t.teardown(() => again.close());
  const later: string[] = [];
  again.subscribe('pinclaw/bench/in', (_t, p) => later.push(p.toString()));
  await wait(() => later.length === 5, 'queued messages');
  t.same(later, ['m0', 'm1', 'm2', 'm3', 'm4']);
  t.ok(connects >= 2);
});

t.test('doctor: the broker takes the settings, refuses them, or is not there', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { cleanEnv, runPinclawAsync, tempDir } = await import('./support/proc.js');
  const b = await startBroker({ users: { owner: 'right' } });
  t.teardown(() => b.stop());
  const doctor = async (mqttConfig: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ mqtt: { nodeId: 'bench', ...mqttConfig }, ...extra }));
    const r = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
    const report = JSON.parse(r.stdout) as { checks: { name: string; state: string; detail: string }[] };
    return report.checks.find((c) => c.name === 'mqtt');
  };
  t.match(await doctor({ url: b.url, username: 'owner', password: 'right' }), { state: 'ok', detail: /takes the settings; node bench is not announced yet/ });
  const refused = await doctor({ url: b.url, username: 'owner', password: 'wrong-pw-77' });
  t.match(refused, { state: 'fail', detail: /Connection refused: (Not authorized|Bad User Name or Password)/ });
  t.notMatch(refused?.detail ?? '', /wrong-pw-77/);
  const { freePort } = await import('./support/mosquitto.js');
  t.match(await doctor({ url: `mqtt://127.0.0.1:${await freePort()}` }), { state: 'fail', detail: /ECONNREFUSED/ });
  t.match(await doctor({ url: 'http://127.0.0.1:1' }), { state: 'fail', detail: /mqtt\.url: the scheme http: is not one of/ });
  // The chat's settings, checked as the gateway checks them (it would exit 78).
  t.match(await doctor({ url: b.url, username: 'owner', password: 'right', chat: { enabled: true, allowFrom: [{ name: 'panel', token: 'short' }] } }), { state: 'fail', detail: /mqtt\.chat\.allowFrom\[0\]\.token: required, at least 16 characters/ });
  // The old name of Home Assistant's commands: still in force, and doctor says to rename it.
  t.match(await doctor({ url: b.url, username: 'owner', password: 'right' }, { tools: { controlChats: ['cli:local', 'mqtt:homeassistant'] } }), { state: 'warn', detail: /takes the settings.*tools\.controlChats\[1\] "mqtt:homeassistant" is the old name of Home Assistant's commands/ });
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), '{}');
  const r = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.notOk((JSON.parse(r.stdout) as { checks: { name: string }[] }).checks.some((c) => c.name === 'mqtt'), 'no check without mqtt.url');
});

t.test('mqtts:// with mqtt.ca, ws://, and MQTT 3.1.1', async (t) => {
  const b = await startBroker({ tls: true, websockets: true });
  t.teardown(() => b.stop());
  const connects = async (s: MqttSettings, what: string) => {
    const errors: string[] = [];
    const link = openMqttLink({ settings: s, log: { ...quiet, error: (m: string) => errors.push(m) } });
    t.teardown(() => link.close());
    const end = Date.now() + 10_000;
    while (!link.connected() && !errors.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    if (!link.connected()) return { ok: false, errors };
    // A message through the broker and back over this transport.
    const seen: string[] = [];
    link.subscribe(link.topic('echo'), (_t, p) => seen.push(p.toString()));
    await new Promise((r) => setTimeout(r, 200));
    await link.publish(link.topic('echo'), what);
    while (!seen.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return { ok: seen[0] === what, errors };
  };
  t.same(await connects(settings(b.tlsUrl!, { nodeId: 'tls', ca: b.caFile }), 'over TLS'), { ok: true, errors: [] }, 'TLS with the CA of mqtt.ca');
  const untrusted = await connects(settings(b.tlsUrl!, { nodeId: 'tls2' }), 'x');
  t.equal(untrusted.ok, false, 'a certificate the system does not trust is refused');
  t.match(untrusted.errors[0], /mqtt: mqtts:\/\/127\.0\.0\.1:\d+: .*(self[- ]signed|unable to (get|verify))/i);
  t.same(await connects(settings(b.wsUrl!, { nodeId: 'ws' }), 'over WebSocket'), { ok: true, errors: [] }, 'ws://');
  t.same(await connects(settings(b.url, { nodeId: 'old', protocol: '3.1.1' }), 'MQTT 3.1.1'), { ok: true, errors: [] }, 'protocol 3.1.1');
  t.throws(() => openMqttLink({ settings: settings(b.tlsUrl!, { ca: '/nonexistent/ca.pem' }) }), /mqtt\.ca: cannot read \/nonexistent\/ca\.pem/);
});
