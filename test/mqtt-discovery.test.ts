// Home Assistant MQTT discovery: the payloads checked against the discovery schema's fields, then
// the real link against a real mosquitto (configs retained, states, commands, removal), and last a
// real gateway process with a board (the firmware model over socket://) where a switch command from
// a plain MQTT client drives the pin through mcu_call: refused and audited as denied without
// "homeassistant:commands" in tools.controlChats, done and audited with the physical values with it
// (and with the old name "mqtt:homeassistant", which keeps its meaning and is reported).
import t, { type Test } from 'tap';
import mqtt from 'mqtt';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMqttLink, type MqttSettings } from '../src/mqtt/connection.js';
import { defaults } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import {
  commandTopicOf,
  discoveryObjects,
  objectIdOfCommand,
  parseSwitchPayload,
  SAFE_ID,
  staleTopics,
  type DiscoveryContext,
} from '../src/fleet/discovery.js';
import type { HaEntities, HaLine, Level } from '../src/fleet/entities.js';
import { DISCOVERY_STATE_KEY, HA_CONTEXT, startHomeAssistant } from '../src/fleet/home-assistant.js';
import { openDatabase } from '../src/store/db.js';
import { getState } from '../src/store/state.js';
import { queryAudit } from '../src/store/audit.js';
import type { ToolCall, ToolContext, ToolResult } from '../src/tools/types.js';
import { fakeMcuOverTcp } from './support/fake-mcu.js';
import { startBroker, type Broker } from './support/mosquitto.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

const CTX: DiscoveryContext = { discoveryPrefix: 'homeassistant', baseTopic: 'pinclaw', nodeId: 'bench', swVersion: '9.9.9' };

/**
 * The keys of the single-component discovery schema this code may use, per component (Home
 * Assistant's MQTT binary_sensor, switch and sensor pages): a misspelt key would be ignored by Home
 * Assistant, or make it refuse the whole config.
 */
const COMMON = ['name', 'unique_id', 'default_entity_id', 'object_id', 'state_topic', 'availability_topic', 'payload_available', 'payload_not_available', 'availability', 'availability_mode', 'device', 'origin', 'device_class', 'entity_category', 'value_template', 'qos', 'icon', 'enabled_by_default', 'expire_after', 'force_update'];
const ALLOWED: Record<string, string[]> = {
  binary_sensor: [...COMMON, 'payload_on', 'payload_off', 'off_delay'],
  switch: [...COMMON, 'command_topic', 'payload_on', 'payload_off', 'state_on', 'state_off', 'optimistic', 'retain'],
  sensor: [...COMMON, 'unit_of_measurement', 'state_class', 'suggested_display_precision'],
};
const REQUIRED: Record<string, string[]> = { binary_sensor: ['state_topic'], switch: ['command_topic'], sensor: ['state_topic'] };
const DEVICE_KEYS = ['identifiers', 'connections', 'name', 'model', 'manufacturer', 'sw_version', 'hw_version', 'via_device', 'suggested_area', 'configuration_url', 'serial_number'];

const line = (name: string, direction: 'input' | 'output', device?: string): HaLine => ({
  name,
  direction,
  target: device ? `${device}:D13` : 'GPIO17',
  ...(device ? { device } : {}),
  read: async () => 0,
  ...(direction === 'output' ? { setCall: (v: Level): ToolCall => ({ name: 'gpio_write', input: { line: name, value: v } }) } : {}),
});

function sampleEntities(): HaEntities {
  return {
    lines: [line('doorbell', 'input'), line('garage_relay', 'output'), line('lamp', 'output', 'bench')],
    devices: [{ name: 'bench', connected: () => true }],
    sensors: [{ name: 'shed_temperature', unit: '°C', deviceClass: 'temperature', read: async () => 21.5 }, { name: 'soil', unit: '%', device: 'bench', read: async () => 40 }],
    board: 'rpi-4b',
  };
}

t.test('discovery payloads follow the Home Assistant schema', async (t) => {
  const objects = discoveryObjects(CTX, sampleEntities());
  t.same(
    objects.map((o) => `${o.component}/${o.objectId}`),
    ['binary_sensor/status', 'sensor/last_turn', 'sensor/uptime', 'binary_sensor/device_bench', 'binary_sensor/line_doorbell', 'switch/line_garage_relay', 'switch/line_lamp', 'sensor/sensor_shed_temperature', 'sensor/sensor_soil'],
  );
  const uniqueIds = new Set<unknown>();
  const entityIds = new Set<unknown>();
  for (const o of objects) {
    const c = o.config;
    const at = `${o.component}/${o.objectId}`;
    t.match(o.objectId, SAFE_ID, `${at}: a safe object id`);
    t.equal(o.configTopic, `homeassistant/${o.component}/bench/${o.objectId}/config`, `${at}: the config topic`);
    for (const k of Object.keys(c)) t.ok(ALLOWED[o.component]!.includes(k), `${at}: ${k} is a ${o.component} key`);
    for (const k of REQUIRED[o.component]!) t.type(c[k], 'string', `${at}: ${k} is there`);
    t.type(c.name, 'string', `${at}: named`);
    t.match(c.unique_id, /^pinclaw_bench_/, `${at}: unique id carries the node`);
    uniqueIds.add(c.unique_id);
    t.match(c.default_entity_id, new RegExp(`^${o.component}\\.[a-z0-9_]+$`), `${at}: default_entity_id is <component>.<lower-case id>`);
    entityIds.add(c.default_entity_id);
    t.equal(c.state_topic, o.stateTopic);
    const dev = c.device as Record<string, unknown>;
    t.ok(Array.isArray(dev.identifiers) && (dev.identifiers as unknown[]).length > 0, `${at}: device identifiers`);
    for (const k of Object.keys(dev)) t.ok(DEVICE_KEYS.includes(k), `${at}: device.${k} is a device key`);
    t.same(c.origin, { name: 'pinclaw', sw_version: '9.9.9' });
    if (o.objectId === 'status') {
      // The node's own connectivity must show "disconnected", not "unavailable", when it is offline.
      t.notOk('availability_topic' in c || 'availability' in c, 'status has no availability of its own');
      t.equal(c.state_topic, 'pinclaw/bench/status');
      t.match(c, { device_class: 'connectivity', payload_on: 'online', payload_off: 'offline', entity_category: 'diagnostic' });
    } else if ('availability' in c) {
      t.match(c, { availability_mode: 'all' });
      t.same((c.availability as { topic: string }[]).map((a) => a.topic), ['pinclaw/bench/status', 'pinclaw/bench/ha/device_bench/state'], `${at}: available while the node is online and its board connected`);
    } else {
      t.match(c, { availability_topic: 'pinclaw/bench/status', payload_available: 'online', payload_not_available: 'offline' }, `${at}: available while the node is online`);
    }
    if (o.component === 'switch') {
      t.equal(c.command_topic, `pinclaw/bench/ha/${o.objectId}/set`);
      t.equal(c.state_topic, `pinclaw/bench/ha/${o.objectId}/state`);
      t.match(c, { payload_on: 'ON', payload_off: 'OFF', state_on: 'ON', state_off: 'OFF', optimistic: false, qos: 1 });
      t.equal(objectIdOfCommand(CTX, c.command_topic as string), o.objectId, 'its command topic leads back to it');
    } else {
      t.notOk('command_topic' in c, `${at}: only switches take commands`);
    }
  }
  t.equal(uniqueIds.size, objects.length, 'unique ids are unique');
  t.equal(entityIds.size, objects.length, 'default entity ids are unique');

  const by = (id: string) => objects.find((o) => o.objectId === id)!.config;
  t.match(by('sensor_shed_temperature'), { unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement' });
  t.notOk('device_class' in by('sensor_soil'));
  t.match(by('last_turn'), { device_class: 'timestamp' });
  t.match(by('uptime'), { device_class: 'duration', unit_of_measurement: 's' });
  t.match(by('device_bench'), { device_class: 'connectivity', payload_on: 'ON', payload_off: 'OFF' });
  t.match(by('line_doorbell'), { payload_on: 'ON', payload_off: 'OFF' });
  // The node is one device; the board is another, connected through it.
  t.match(by('uptime').device, { identifiers: ['pinclaw_bench'], name: 'bench', model: 'pinclaw on rpi-4b', manufacturer: 'pinclaw', sw_version: '9.9.9' });
  t.match(by('line_lamp').device, { identifiers: ['pinclaw_bench_bench'], via_device: 'pinclaw_bench' });
  t.match(by('line_garage_relay').device, { identifiers: ['pinclaw_bench'] });
});

t.test('object ids: names made safe and kept unique; the node id is checked', async (t) => {
  const objects = discoveryObjects(CTX, { lines: [], sensors: [], devices: [{ name: 'a.b', connected: () => true }, { name: 'a_b', connected: () => true }, { name: 'ünï', connected: () => false }] });
  const ids = objects.map((o) => o.objectId);
  t.same(ids.slice(3), ['device_a_b', 'device_a_b_2', 'device__n_']);
  for (const id of ids) t.match(id, SAFE_ID);
  t.throws(() => discoveryObjects({ ...CTX, nodeId: 'a/b' }, sampleEntities()), /node id "a\/b" is not a Home Assistant id/);
  t.match(discoveryObjects({ ...CTX, nodeId: 'Shed-1' }, sampleEntities())[1]!.config, { default_entity_id: 'sensor.shed_1_last_turn', unique_id: 'pinclaw_Shed-1_last_turn' });
});

t.test('switch payloads, command topics and stale topics', async (t) => {
  for (const on of ['ON', 'on', ' On ', '1', 'true', 'TRUE']) t.equal(parseSwitchPayload(on), 1, on);
  for (const off of ['OFF', 'off', '0', 'false']) t.equal(parseSwitchPayload(off), 0, off);
  for (const bad of ['', 'toggle', '2', 'onn', '{"state":"ON"}']) t.equal(parseSwitchPayload(bad), undefined, JSON.stringify(bad));
  t.equal(objectIdOfCommand(CTX, commandTopicOf(CTX, 'line_x')), 'line_x');
  t.equal(objectIdOfCommand(CTX, 'pinclaw/bench/ha/a/b/set'), undefined);
  t.equal(objectIdOfCommand(CTX, 'pinclaw/other/ha/line_x/set'), undefined);
  t.same(staleTopics(['a', 'b', 'c', 'b'], ['a', 'c', 'd']), ['b']);
});

// ---------------------------------------------------------------------------------------------
// The real link and a real broker.

interface Seen {
  topic: string;
  text: string;
  retain: boolean;
}

/** A plain mqtt client recording what arrives on its filters. */
async function watcher(b: Broker, filters: string[]) {
  const c = await mqtt.connectAsync(b.url, { clientId: `watch-${Math.random().toString(16).slice(2)}` });
  const got: Seen[] = [];
  c.on('message', (topic, p, packet) => got.push({ topic, text: p.toString(), retain: packet.retain }));
  await c.subscribeAsync(filters, { qos: 1 });
  return {
    got,
    client: c,
    async until(pred: (m: Seen) => boolean, what: string, ms = 15_000, from = 0): Promise<Seen> {
      const end = Date.now() + ms;
      for (;;) {
        const m = got.slice(from).find(pred);
        if (m) return m;
        if (Date.now() > end) throw new Error(`${what}: nothing matched within ${ms} ms; got ${JSON.stringify(got.slice(-20))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

async function until(pred: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function settings(url: string): MqttSettings {
  const d = defaults().mqtt;
  return { ...d, url, nodeId: 'bench', reconnect: { minMs: 100, maxMs: 400 }, homeAssistant: { ...d.homeAssistant, stateIntervalSeconds: 3600 } };
}

function recordingLog() {
  const lines: string[] = [];
  const add = (level: string) => (m: string) => void lines.push(`${level}: ${m}`);
  return { lines, log: { debug: add('debug'), info: add('info'), warn: add('warn'), error: add('error') } };
}

/** In-memory hardware behind the entity interface: an output whose tool call sets it, an input that reports changes. */
function memoryHardware(names: { output?: string; input?: string } = { output: 'relay', input: 'door' }) {
  const levels = new Map<string, Level>();
  const watchers = new Set<(v: Level) => void>();
  const lines: HaLine[] = [];
  if (names.output) {
    const n = names.output;
    levels.set(n, 0);
    lines.push({ name: n, direction: 'output', target: 'GPIO17', read: async () => levels.get(n)!, setCall: (v) => ({ name: 'gpio_write', input: { line: n, value: v } }) });
  }
  if (names.input) {
    const n = names.input;
    levels.set(n, 0);
    lines.push({
      name: n,
      direction: 'input',
      target: 'GPIO27',
      read: async () => levels.get(n)!,
      watch(onChange) {
        watchers.add(onChange);
        return () => watchers.delete(onChange);
      },
    });
  }
  const entities: HaEntities = { lines, devices: [], sensors: [{ name: 'temp', unit: '°C', deviceClass: 'temperature', read: async () => 21.25 }] };
  return {
    entities,
    levels,
    /** an input changing level, as its watch reports it */
    change(name: string, v: Level) {
      levels.set(name, v);
      for (const w of watchers) w(v);
    },
  };
}

t.test('against mosquitto: configs retained, states, an input change, commands through the tool path, bad commands', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  const w = await watcher(b, ['homeassistant/#', 'pinclaw/#']);
  t.teardown(() => w.client.endAsync());
  const hw = memoryHardware();
  const calls: { call: ToolCall; ctx: ToolContext }[] = [];
  let refuse: string | undefined;
  // Stands in for the registry's run: the policy decision is the registry's (tested in the gateway
  // test below); here only what Home Assistant's side does with an answer.
  const runTool = async (call: ToolCall, ctx: ToolContext): Promise<ToolResult> => {
    calls.push({ call, ctx });
    if (refuse) return { content: refuse, isError: true };
    const { line: n, value } = call.input as { line: string; value: Level };
    hw.levels.set(n, value);
    return { content: `${n}: ? -> ${value}` };
  };
  const bus = createBus();
  const { lines: logged, log } = recordingLog();
  const link = openMqttLink({ settings: settings(b.url), log });
  t.teardown(() => link.close());
  const stop = startHomeAssistant({ link, db, settings: settings(b.url), physicalMaxAgeSeconds: 120, entities: hw.entities, bus, startedAt: Date.now() - 42_000, runTool, log, swVersion: '1.2.3' });
  t.teardown(stop);

  const relayConfig = await w.until((m) => m.topic === 'homeassistant/switch/bench/line_relay/config', 'the switch config');
  t.equal(JSON.parse(relayConfig.text).command_topic, 'pinclaw/bench/ha/line_relay/set');
  for (const topic of ['homeassistant/binary_sensor/bench/status/config', 'homeassistant/sensor/bench/uptime/config', 'homeassistant/sensor/bench/last_turn/config', 'homeassistant/binary_sensor/bench/line_door/config', 'homeassistant/sensor/bench/sensor_temp/config']) {
    await w.until((m) => m.topic === topic, topic);
  }
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_relay/state' && m.text === 'OFF', 'relay state');
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_door/state' && m.text === 'OFF', 'door state');
  await w.until((m) => m.topic === 'pinclaw/bench/ha/sensor_temp/state' && m.text === '21.25', 'sensor state');
  const uptime = await w.until((m) => m.topic === 'pinclaw/bench/ha/uptime/state', 'uptime');
  t.ok(Number(uptime.text) >= 42, `uptime counts from the gateway's start (${uptime.text} s)`);
  t.same(JSON.parse(getState(db, DISCOVERY_STATE_KEY)!).length, 6, 'the published config topics are remembered');

  // A client connecting later gets every config as a retained message, as Home Assistant does after a restart.
  const late = await watcher(b, ['homeassistant/#']);
  t.teardown(() => late.client.endAsync());
  await late.until((m) => m.topic === 'homeassistant/switch/bench/line_relay/config' && m.retain, 'the retained switch config');
  await until(() => late.got.length >= 6, 'six retained configs');
  t.ok(late.got.every((m) => m.retain));

  // An input that changes: published at once, not at the next interval (an hour here).
  let from = w.got.length;
  hw.change('door', 1);
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_door/state' && m.text === 'ON', 'door ON after the change', 5000, from);

  // A turn ends: the last-turn time.
  from = w.got.length;
  bus.emit({ type: 'turn_end', sessionKey: 's', inboundIds: [1], ok: true, iterations: 1, channel: 'cli', chatId: 'local' });
  const turn = await w.until((m) => m.topic === 'pinclaw/bench/ha/last_turn/state', 'last turn', 5000, from);
  t.ok(!Number.isNaN(Date.parse(turn.text)) && /Z$/.test(turn.text), `an ISO 8601 timestamp (${turn.text})`);

  // A command: run as the tool call of the line, in Home Assistant's context, then the state read back.
  from = w.got.length;
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', 'ON', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_relay/state' && m.text === 'ON', 'relay ON', 5000, from);
  t.same(calls[0], { call: { name: 'gpio_write', input: { line: 'relay', value: 1 } }, ctx: HA_CONTEXT });
  t.same(HA_CONTEXT, { sessionKey: 'homeassistant:commands', channel: 'homeassistant', chatId: 'commands', caller: 'homeassistant' });

  // Refused by the policy: logged with the fix, and the true state (still ON) published again.
  refuse = "mcu_call refused: it needs the owner's confirmation (physical action outside the owner's chats (tools.controlChats)) and channel homeassistant has no way to ask";
  from = w.got.length;
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', 'off', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_relay/state', 'relay state after the refusal', 5000, from);
  t.equal(w.got.slice(from).find((m) => m.topic === 'pinclaw/bench/ha/line_relay/state')!.text, 'ON', 'the state Home Assistant gets back is the real one');
  t.match(logged.join('\n'), /error: home assistant: switching relay OFF did not happen: mcu_call refused: .*; to let Home Assistant switch lines, add "homeassistant:commands" to tools\.controlChats/);
  // A failing tool: logged, the state read back.
  refuse = 'gpio_write failed: EIO';
  from = w.got.length;
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', '0', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/bench/ha/line_relay/state' && m.text === 'ON', 'relay state after the failure', 5000, from);
  t.match(logged.join('\n'), /error: home assistant: switching relay OFF did not happen: gpio_write failed: EIO/);
  refuse = undefined;

  // Bad commands: nothing runs.
  const before = calls.length;
  await w.client.publishAsync('pinclaw/bench/ha/line_ghost/set', 'ON', { qos: 1 });
  await w.client.publishAsync('pinclaw/bench/ha/line_door/set', 'ON', { qos: 1 });
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', 'toggle', { qos: 1 });
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', 'OFF', { qos: 1, retain: true });
  await until(() => logged.filter((l) => l.startsWith('warn: home assistant:')).length >= 3, 'three warnings');
  t.match(logged.join('\n'), /warn: home assistant: a command on pinclaw\/bench\/ha\/line_ghost\/set, but this node has no switch 'line_ghost' \(switches: line_relay\); nothing run/);
  t.match(logged.join('\n'), /no switch 'line_door'/, 'an input takes no commands');
  t.match(logged.join('\n'), /the command for relay on pinclaw\/bench\/ha\/line_relay\/set is "toggle", not ON or OFF .*; nothing run/);
  // The retained command reaches only a new subscription; the link's is old, so it is delivered live
  // (not retained) and runs. A retained one handed to a new subscription is ignored: see below.
  await until(() => calls.length > before, 'the live OFF ran');
  t.same(calls.slice(before).map((c) => (c.call.input as { value: number }).value), [0], 'only the valid OFF ran');
  await w.client.publishAsync('pinclaw/bench/ha/line_relay/set', '', { qos: 1, retain: true });
});

t.test('a retained command is old state: ignored when the broker hands it over on subscribing', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const c = await mqtt.connectAsync(b.url, { clientId: 'leftover' });
  t.teardown(() => c.endAsync());
  await c.publishAsync('pinclaw/bench/ha/line_relay/set', 'ON', { qos: 1, retain: true });
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  const hw = memoryHardware({ output: 'relay' });
  const calls: ToolCall[] = [];
  const { lines: logged, log } = recordingLog();
  const link = openMqttLink({ settings: settings(b.url), log, clientId: `fresh-${Date.now()}` });
  t.teardown(() => link.close());
  t.teardown(startHomeAssistant({ link, db, settings: settings(b.url), physicalMaxAgeSeconds: 120, entities: hw.entities, bus: createBus(), startedAt: Date.now(), runTool: async (call) => (calls.push(call), { content: 'ok' }), log }));
  await until(() => logged.some((l) => /a retained command on pinclaw\/bench\/ha\/line_relay\/set \("ON"\) is ignored/.test(l)), 'the retained command logged');
  t.same(calls, [], 'nothing ran');
  await c.publishAsync('pinclaw/bench/ha/line_relay/set', '', { qos: 1, retain: true });
});

t.test('a command queued at the broker while the gateway was away longer than tools.physicalMaxAgeSeconds is not run; one from a short blip is', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const ha = await mqtt.connectAsync(b.url, { clientId: 'home-assistant' });
  t.teardown(() => ha.endAsync());
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  const hw = memoryHardware({ output: 'relay' });
  const calls: ToolCall[] = [];
  const runTool = async (call: ToolCall) => {
    calls.push(call);
    hw.levels.set('relay', (call.input as { value: Level }).value);
    return { content: 'ok' };
  };
  const { lines: logged, log } = recordingLog();
  /** One gateway run: its link (the node's persistent session) and Home Assistant on it. */
  const run = async (maxAge: number, reconnectMs = 100) => {
    const s = { ...settings(b.url), reconnect: { minMs: reconnectMs, maxMs: reconnectMs } };
    const link = openMqttLink({ settings: s, log });
    const stop = startHomeAssistant({ link, db, settings: s, physicalMaxAgeSeconds: maxAge, entities: hw.entities, bus: createBus(), startedAt: Date.now(), runTool, log });
    await until(() => link.connected(), 'connected');
    return { link, stop, async close() { stop(); await link.close(); } };
  };
  const first = await run(120);
  await until(() => logged.some((l) => /subscribed to .*ha\/\+\/set/.test(l)), 'the command topic subscribed');
  await first.close();

  // The gateway is away: Home Assistant's ON waits in the node's session at the broker.
  await ha.publishAsync('pinclaw/bench/ha/line_relay/set', 'ON', { qos: 1 });
  const second = await run(120);
  t.teardown(() => second.close());
  await until(() => logged.some((l) => /1 command queued at the broker while the gateway was away were not run/.test(l)), 'the queued command held');
  t.same(calls, [], 'the queued command did not switch the relay');
  t.match(logged.join('\n'), /warn: home assistant: the command ON for relay waited at the broker while the gateway was away \(since before this gateway started\), so it may be older than tools\.physicalMaxAgeSeconds \(120 s\); not run/);
  t.match(queryAudit(db), [{ tool: 'gpio_write', channel: 'homeassistant', chat_id: 'commands', outcome: 'denied', rule: 'tools.physicalMaxAgeSeconds' }]);
  // A command sent now runs.
  await ha.publishAsync('pinclaw/bench/ha/line_relay/set', 'ON', { qos: 1 });
  await until(() => calls.length === 1, 'the fresh command ran');
  await second.close();

  // A blip: another client takes the node's session over, the link is away about 1.5 s and comes
  // back to the same session; a command queued meanwhile is younger than the absence.
  const blip = async (maxAge: number) => {
    const r = await run(maxAge, 1500);
    await until(() => logged.some((l) => /home assistant: \d+ entities announced/.test(l)), 'announced');
    const before = logged.length;
    const thief = await mqtt.connectAsync(b.url, { clientId: 'pinclaw-bench', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 600 } });
    await until(() => !r.link.connected(), 'the link lost its session');
    await thief.endAsync();
    await ha.publishAsync('pinclaw/bench/ha/line_relay/set', 'OFF', { qos: 1 });
    await until(() => r.link.connected(), 'the link back');
    return { r, before };
  };
  const short = await blip(120);
  await until(() => calls.length === 2, 'the command of the blip ran');
  t.same((calls[1]!.input as { value: number }).value, 0);
  await short.r.close();
  const long = await blip(1);
  await until(() => logged.slice(long.before).some((l) => /the command OFF for relay waited at the broker while the gateway was away \(for \d+ s\), so it may be older than tools\.physicalMaxAgeSeconds \(1 s\)/.test(l)), 'held after an absence longer than the limit');
  t.equal(calls.length, 2, 'not run');
  await long.r.close();
});

t.test('removal: a line gone from the config between two runs gets an empty retained config', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const dir = tempDir();
  const file = join(dir, 'pinclaw.db');
  const runOnce = async (names: { output?: string; input?: string }) => {
    const db = openDatabase(file);
    const link = openMqttLink({ settings: settings(b.url), log: recordingLog().log });
    const stop = startHomeAssistant({ link, db, settings: settings(b.url), physicalMaxAgeSeconds: 120, entities: memoryHardware(names).entities, bus: createBus(), startedAt: Date.now(), runTool: async () => ({ content: '' }), log: recordingLog().log });
    return { db, link, stop };
  };
  const first = await runOnce({ output: 'relay', input: 'door' });
  const w = await watcher(b, ['homeassistant/#']);
  await w.until((m) => m.topic === 'homeassistant/binary_sensor/bench/line_door/config' && m.text.length > 0, 'door announced');
  first.stop();
  await first.link.close();
  first.db.close();

  const from = w.got.length;
  const second = await runOnce({ output: 'relay' });
  t.teardown(async () => {
    second.stop();
    await second.link.close();
    second.db.close();
  });
  await w.until((m) => m.topic === 'homeassistant/binary_sensor/bench/line_door/config' && m.text === '', 'door removed', 15_000, from);
  await w.until((m) => m.topic === 'homeassistant/switch/bench/line_relay/config' && m.text.length > 0, 'relay announced again', 15_000, from);
  await w.client.endAsync();
  // What a Home Assistant starting now would get: no door.
  const fresh = await watcher(b, ['homeassistant/#']);
  t.teardown(() => fresh.client.endAsync());
  await fresh.until((m) => m.topic === 'homeassistant/switch/bench/line_relay/config', 'relay retained');
  await until(() => fresh.got.length >= 5, 'five retained configs');
  t.notOk(fresh.got.some((m) => m.topic.includes('line_door')), 'the door is gone from the broker');
  await until(() => !JSON.parse(getState(second.db, DISCOVERY_STATE_KEY) ?? '[]').some((x: string) => x.includes('line_door')), 'forgotten once removed');
});

// ---------------------------------------------------------------------------------------------
// A real gateway with a board.

// arduino-uno's hello as the firmware model says it: D0, D3, D13, A0.
const boardOverTcp = (t: Test, adc: () => number) => fakeMcuOverTcp(t, { adc });

interface AuditView {
  tool: string;
  channel: string;
  chat: string;
  caller: string | null;
  outcome: string;
  rule: string | null;
  input: string;
  physical?: { device: string; before: unknown; after: unknown } | null;
}

t.test('a gateway with a board: a switch command from MQTT drives the pin through mcu_call, refused and audited without the control chat, done with it; a removed line disappears', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const { board, url: port } = await boardOverTcp(t, () => 512);
  const home = tempDir();
  const config = (controlChats: string[], lines: unknown[]) =>
    writeFileSync(join(home, 'config.json'), JSON.stringify({
      mqtt: { url: b.url, nodeId: 'gw', reconnect: { minMs: 100, maxMs: 1000 }, chat: { enabled: false } },
      tools: { controlChats },
      hardware: {
        devices: [{ name: 'bench', port, board: 'arduino-uno' }],
        lines,
        sensors: [{ name: 'soil', line: 'bench:A0', scale: 0.1, unit: '%', deviceClass: 'moisture' }],
      },
    }));
  const lamp = { name: 'lamp', line: 'bench:D13', direction: 'output' };
  const button = { name: 'button', line: 'bench:D3', direction: 'input' };
  const gateway = async () => {
    const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }) });
    t.teardown(() => gw.child.kill('SIGKILL'));
    // What the gateway said, when a check fails: the reason is usually there.
    t.teardown(() => {
      if (t.passing()) return;
      t.comment(`gateway stderr:\n${gw.stderr()}`);
    });
    await gw.waitFor(/gateway listening/, 30_000);
    return gw;
  };
  const stopGateway = async (gw: ReturnType<typeof start>) => {
    gw.child.kill('SIGTERM');
    t.equal((await gw.exited).code, 0, 'the gateway stops cleanly');
  };
  const audit = async (): Promise<AuditView[]> => {
    const r = await runPinclawAsync(['audit', '--json', '--tool', 'mcu_call'], { env: cleanEnv({ PINCLAW_HOME: home }) });
    t.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as AuditView[];
  };
  const w = await watcher(b, ['homeassistant/#', 'pinclaw/#']);
  t.teardown(() => w.client.endAsync());

  // Run 1: Home Assistant's commands are not a control chat.
  config(['cli:local'], [lamp, button]);
  let gw = await gateway();
  for (const topic of ['homeassistant/switch/gw/line_lamp/config', 'homeassistant/binary_sensor/gw/line_button/config', 'homeassistant/binary_sensor/gw/device_bench/config', 'homeassistant/sensor/gw/sensor_soil/config']) {
    await w.until((m) => m.topic === topic && m.text.length > 0, topic);
  }
  const soil = JSON.parse(w.got.find((m) => m.topic === 'homeassistant/sensor/gw/sensor_soil/config')!.text) as Record<string, unknown>;
  t.match(soil, { unit_of_measurement: '%', device_class: 'moisture', state_topic: 'pinclaw/gw/ha/sensor_soil/state' });
  await w.until((m) => m.topic === 'pinclaw/gw/ha/sensor_soil/state' && m.text === '51.2', 'the ADC reading 512 × 0.1 through the firmware');
  await w.until((m) => m.topic === 'pinclaw/gw/ha/line_lamp/state' && m.text === 'OFF', 'lamp OFF');
  await w.until((m) => m.topic === 'pinclaw/gw/ha/device_bench/state' && m.text === 'ON', 'the board connected', 20_000);
  await until(() => board().watched.get(3) === 3, 'the firmware asked to report the button');
  // The button pressed on the board: its pin event becomes the state at once.
  let from = w.got.length;
  board().pins.set(3, 1);
  board().event({ version: 1, type: 0x40, id: 0, payload: Uint8Array.from([3, 1, 1, 0, 0x10, 0x27, 0, 0]) });
  await w.until((m) => m.topic === 'pinclaw/gw/ha/line_button/state' && m.text === 'ON', 'button ON from its pin event', 5000, from);

  from = w.got.length;
  await w.client.publishAsync('pinclaw/gw/ha/line_lamp/set', 'ON', { qos: 1 });
  await gw.waitFor(/add "homeassistant:commands" to tools\.controlChats/, 10_000);
  await w.until((m) => m.topic === 'pinclaw/gw/ha/line_lamp/state', 'the lamp state after the refusal', 5000, from);
  t.equal(w.got.slice(from).find((m) => m.topic === 'pinclaw/gw/ha/line_lamp/state')!.text, 'OFF', 'the real state, OFF, goes back');
  t.equal(board().pins.get(13), 0, 'the pin was not driven');
  await stopGateway(gw);
  const denied = (await audit()).filter((r) => r.channel === 'homeassistant');
  t.equal(denied.length, 1, 'one audited call, on the channel of Home Assistant\'s commands (not a chat\'s turn)');
  t.match(denied[0], { tool: 'mcu_call', chat: 'commands', caller: 'homeassistant', outcome: 'denied', rule: /tools\.controlChats/ });
  t.same(JSON.parse(denied[0]!.input), { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } });

  // Run 2: Home Assistant's commands are a control chat, by the old name an owner's config may hold,
  // and the button is gone from the config.
  config(['cli:local', 'mqtt:homeassistant'], [lamp]);
  from = w.got.length;
  gw = await gateway();
  await gw.waitFor(/warn: config: tools\.controlChats\[1\] "mqtt:homeassistant" is the old name of Home Assistant's commands, read as "homeassistant:commands"/, 10_000);
  await w.until((m) => m.topic === 'homeassistant/binary_sensor/gw/line_button/config' && m.text === '', 'the button removed from Home Assistant', 15_000, from);
  await w.until((m) => m.topic === 'homeassistant/switch/gw/line_lamp/config' && m.text.length > 0, 'the lamp announced again', 15_000, from);
  await w.until((m) => m.topic === 'pinclaw/gw/ha/device_bench/state' && m.text === 'ON', 'the board connected', 20_000, from);
  from = w.got.length;
  await w.client.publishAsync('pinclaw/gw/ha/line_lamp/set', 'ON', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/gw/ha/line_lamp/state' && m.text === 'ON', 'lamp ON read back from the board', 10_000, from);
  t.equal(board().pins.get(13), 1, 'the firmware drove D13 once');
  from = w.got.length;
  await w.client.publishAsync('pinclaw/gw/ha/line_lamp/set', 'off', { qos: 1 });
  await w.until((m) => m.topic === 'pinclaw/gw/ha/line_lamp/state' && m.text === 'OFF', 'lamp OFF', 10_000, from);
  t.equal(board().pins.get(13), 0);
  await stopGateway(gw);
  const rows = (await audit()).filter((r) => r.channel === 'homeassistant' && r.outcome === 'ok');
  t.equal(rows.length, 2, 'both commands audited as done');
  t.match(rows.map((r) => r.physical), [{ device: 'bench D13 (pin 13)', before: 0, after: 1 }, { device: 'bench D13 (pin 13)', before: 1, after: 0 }], 'with the pin before and after');
  t.match(rows[0], { chat: 'commands', caller: 'homeassistant', rule: /tools\.controlChats|standard/ });
  // A Home Assistant starting now: no button, the lamp still there.
  const fresh = await watcher(b, ['homeassistant/#']);
  t.teardown(() => fresh.client.endAsync());
  await fresh.until((m) => m.topic === 'homeassistant/switch/gw/line_lamp/config', 'the lamp retained');
  await new Promise((r) => setTimeout(r, 300));
  t.notOk(fresh.got.some((m) => m.topic.includes('line_button')), 'no retained button config');
});
