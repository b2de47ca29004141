// Home Assistant MQTT discovery, as pure functions: which entities this node offers and the retained
// config message of each (`<discoveryPrefix>/<component>/<nodeId>/<objectId>/config`, the
// single-component schema of https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery).
// Kept apart from the MQTT traffic (home-assistant.ts) so the payloads can be checked field by field
// without a broker.
//
//   the node       binary_sensor connectivity on <base>/<node>/status (the link's availability
//                  topic with its last will), sensor last turn (timestamp), sensor uptime (seconds)
//   input line     binary_sensor, state ON/OFF
//   output line    switch, command <base>/<node>/ha/<object>/set, state <base>/<node>/ha/<object>/state
//   MCU board      binary_sensor connectivity, its own Home Assistant device (via the node)
//   sensor         sensor with its unit and device class
import type { HaEntities } from './entities.js';

export type Component = 'binary_sensor' | 'switch' | 'sensor';

/** What an object shows; home-assistant.ts publishes each kind's state its own way. */
export type ObjectKind =
  | { kind: 'status' }
  | { kind: 'last_turn' }
  | { kind: 'uptime' }
  | { kind: 'line'; name: string }
  | { kind: 'device'; name: string }
  | { kind: 'sensor'; name: string };

export interface HaObject {
  component: Component;
  /** the topic level and the unique id's tail: [a-zA-Z0-9_-] only */
  objectId: string;
  source: ObjectKind;
  configTopic: string;
  stateTopic: string;
  /** switches only */
  commandTopic?: string;
  config: Record<string, unknown>;
}

export interface DiscoveryContext {
  discoveryPrefix: string;
  /** mqtt.baseTopic */
  baseTopic: string;
  nodeId: string;
  /** pinclaw's version, the device's sw_version */
  swVersion: string;
}

export const PAYLOAD_ON = 'ON';
export const PAYLOAD_OFF = 'OFF';
export const ONLINE = 'online';
export const OFFLINE = 'offline';

/** Home Assistant's character class for node and object ids. */
export const SAFE_ID = /^[a-zA-Z0-9_-]+$/;

/** A name as an object id: every other character becomes _, so "bench.1" is "bench_1". */
export function safeId(name: string): string {
  const s = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  return s || '_';
}

/** Entity ids are lower-case letters, digits and _ only (the "-" of a node id would be refused). */
function entityIdPart(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

export function stateTopicOf(ctx: DiscoveryContext, objectId: string): string {
  return `${ctx.baseTopic}/${ctx.nodeId}/ha/${objectId}/state`;
}

export function commandTopicOf(ctx: DiscoveryContext, objectId: string): string {
  return `${ctx.baseTopic}/${ctx.nodeId}/ha/${objectId}/set`;
}

/** The filter matching every switch's command topic of this node. */
export function commandFilter(ctx: DiscoveryContext): string {
  return `${ctx.baseTopic}/${ctx.nodeId}/ha/+/set`;
}

/** The object id of a command topic, or undefined when the topic is not one. */
export function objectIdOfCommand(ctx: DiscoveryContext, topic: string): string | undefined {
  const prefix = `${ctx.baseTopic}/${ctx.nodeId}/ha/`;
  if (!topic.startsWith(prefix) || !topic.endsWith('/set')) return undefined;
  const id = topic.slice(prefix.length, -'/set'.length);
  return id && !id.includes('/') ? id : undefined;
}

export function statusTopicOf(ctx: DiscoveryContext): string {
  return `${ctx.baseTopic}/${ctx.nodeId}/status`;
}

/**
 * Every entity this node offers, with its config payload. The order is stable for the same
 * entities, and object ids are unique: a name that becomes an id already taken (two devices "a.b"
 * and "a_b") gets _2, _3 after it.
 */
export function discoveryObjects(ctx: DiscoveryContext, entities: HaEntities): HaObject[] {
  if (!SAFE_ID.test(ctx.nodeId)) throw new Error(`the node id ${JSON.stringify(ctx.nodeId)} is not a Home Assistant id ([a-zA-Z0-9_-])`);
  const taken = new Set<string>();
  const unique = (id: string) => {
    let out = id;
    for (let n = 2; taken.has(out); n++) out = `${id}_${n}`;
    taken.add(out);
    return out;
  };
  const nodeDevice = `pinclaw_${ctx.nodeId}`;
  const device = {
    identifiers: [nodeDevice],
    name: ctx.nodeId,
    model: entities.board ? `pinclaw on ${entities.board}` : 'pinclaw',
    manufacturer: 'pinclaw',
    sw_version: ctx.swVersion,
  };
  // A board on a serial port is its own device, connected through the node (via_device), so its
  // lines and its connection are grouped under it.
  const mcuDevice = (name: string) => ({
    identifiers: [`${nodeDevice}_${safeId(name)}`],
    name: `${ctx.nodeId} ${name}`,
    model: 'microcontroller board (pinclaw MCU protocol)',
    manufacturer: 'pinclaw',
    via_device: nodeDevice,
  });
  const origin = { name: 'pinclaw', sw_version: ctx.swVersion };
  const status = statusTopicOf(ctx);
  const nodeAvailability = { availability_topic: status, payload_available: ONLINE, payload_not_available: OFFLINE };
  const deviceIds = new Map<string, string>();
  // Entities on a board are available while the node is online and the board is connected.
  const availabilityOn = (board: string | undefined): Record<string, unknown> => {
    const id = board === undefined ? undefined : deviceIds.get(board);
    if (id === undefined) return nodeAvailability;
    return {
      availability: [
        { topic: status, payload_available: ONLINE, payload_not_available: OFFLINE },
        { topic: stateTopicOf(ctx, id), payload_available: PAYLOAD_ON, payload_not_available: PAYLOAD_OFF },
      ],
      availability_mode: 'all',
    };
  };

  const out: HaObject[] = [];
  const add = (component: Component, id: string, source: ObjectKind, fields: Record<string, unknown>, o: { command?: boolean; stateTopic?: string } = {}) => {
    const objectId = unique(id);
    const stateTopic = o.stateTopic ?? stateTopicOf(ctx, objectId);
    const commandTopic = o.command ? commandTopicOf(ctx, objectId) : undefined;
    const config: Record<string, unknown> = {
      ...fields,
      unique_id: `pinclaw_${ctx.nodeId}_${objectId}`,
      default_entity_id: `${component}.${entityIdPart(`${ctx.nodeId}_${objectId}`)}`,
      state_topic: stateTopic,
      ...(commandTopic ? { command_topic: commandTopic } : {}),
      origin,
    };
    if (!('device' in config)) config.device = device;
    out.push({ component, objectId, source, configTopic: `${ctx.discoveryPrefix}/${component}/${ctx.nodeId}/${objectId}/config`, stateTopic, ...(commandTopic ? { commandTopic } : {}), config });
  };

  // The node. Its connectivity has no availability of its own: offline must show as "disconnected",
  // not as "unavailable".
  add('binary_sensor', 'status', { kind: 'status' }, { name: 'Status', device_class: 'connectivity', payload_on: ONLINE, payload_off: OFFLINE, entity_category: 'diagnostic' }, { stateTopic: status });
  add('sensor', 'last_turn', { kind: 'last_turn' }, { name: 'Last turn', device_class: 'timestamp', ...nodeAvailability });
  add('sensor', 'uptime', { kind: 'uptime' }, { name: 'Uptime', device_class: 'duration', unit_of_measurement: 's', state_class: 'total_increasing', entity_category: 'diagnostic', ...nodeAvailability });

  for (const d of entities.devices) {
    const before = out.length;
    add('binary_sensor', `device_${safeId(d.name)}`, { kind: 'device', name: d.name }, { name: 'Connection', device_class: 'connectivity', payload_on: PAYLOAD_ON, payload_off: PAYLOAD_OFF, entity_category: 'diagnostic', device: mcuDevice(d.name), ...nodeAvailability });
    deviceIds.set(d.name, out[before]!.objectId);
  }
  for (const l of entities.lines) {
    const dev = l.device !== undefined && deviceIds.has(l.device) ? { device: mcuDevice(l.device) } : {};
    const base = { name: l.name, ...dev, ...availabilityOn(l.device) };
    if (l.direction === 'output' && l.setCall) {
      add('switch', `line_${safeId(l.name)}`, { kind: 'line', name: l.name }, { ...base, payload_on: PAYLOAD_ON, payload_off: PAYLOAD_OFF, state_on: PAYLOAD_ON, state_off: PAYLOAD_OFF, optimistic: false, qos: 1 }, { command: true });
    } else {
      add('binary_sensor', `line_${safeId(l.name)}`, { kind: 'line', name: l.name }, { ...base, payload_on: PAYLOAD_ON, payload_off: PAYLOAD_OFF });
    }
  }
  for (const s of entities.sensors) {
    const dev = s.device !== undefined && deviceIds.has(s.device) ? { device: mcuDevice(s.device) } : {};
    add('sensor', `sensor_${safeId(s.name)}`, { kind: 'sensor', name: s.name }, {
      name: s.name,
      ...(s.deviceClass ? { device_class: s.deviceClass } : {}),
      ...(s.unit ? { unit_of_measurement: s.unit } : {}),
      state_class: 'measurement',
      ...dev,
      ...availabilityOn(s.device),
    });
  }
  return out;
}

/** The retained message of one object: its config as JSON. */
export function configMessage(o: HaObject): { topic: string; payload: string } {
  return { topic: o.configTopic, payload: JSON.stringify(o.config) };
}

/** Config topics published before and not now: each gets an empty retained message, which removes the entity. */
export function staleTopics(previous: readonly string[], current: readonly string[]): string[] {
  const now = new Set(current);
  return [...new Set(previous)].filter((t) => !now.has(t));
}

/** A switch command's payload as a level: ON/OFF, on/off, 1/0, true/false; undefined for anything else. */
export function parseSwitchPayload(text: string): 0 | 1 | undefined {
  const v = text.trim().toLowerCase();
  if (v === 'on' || v === '1' || v === 'true') return 1;
  if (v === 'off' || v === '0' || v === 'false') return 0;
  return undefined;
}

export const levelPayload = (v: 0 | 1): string => (v ? PAYLOAD_ON : PAYLOAD_OFF);
