// Home Assistant over MQTT: the discovery configs of discovery.ts published retained on every
// connect, the entities' states (on connect, every stateIntervalSeconds, an input also on each
// change it reports), and switch commands from Home Assistant run as tool calls through the tool
// registry, so they pass the same policy, pin safety, rate limits and physical-action audit as a
// call the model makes. The state read back afterwards is published, so Home Assistant always shows
// the line as it is, also after a refused or failed command.
//
// The config topics published are remembered in the state table; on start, those no longer offered
// (a line removed from the config) get an empty retained message, which removes the entity from
// Home Assistant.
import { randomUUID } from 'node:crypto';
import type { ConnectInfo, MqttLink, MqttSettings } from '../mqtt/connection.js';
import type { Bus } from '../conductor/bus.js';
import { errorMessage } from '../errors.js';
import { HA_CHANNEL, HA_CHAT } from '../internal-chats.js';
import { log as defaultLog, type Logger } from '../log.js';
import { insertAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { getState, setState } from '../store/state.js';
import type { ToolCall, ToolContext, ToolResult } from '../tools/types.js';
import { pinclawVersion } from '../version.js';
import {
  commandFilter,
  configMessage,
  discoveryObjects,
  levelPayload,
  objectIdOfCommand,
  parseSwitchPayload,
  staleTopics,
  type DiscoveryContext,
  type HaObject,
} from './discovery.js';
import type { HaEntities, HaLine, HaSensor } from './entities.js';

export type { HaEntities } from './entities.js';

/** The state-table key holding the config topics this home has published (a JSON array). */
export const DISCOVERY_STATE_KEY = 'mqtt.discovery';

/**
 * Who a command from Home Assistant runs as: a channel of its own, so no MQTT chat session can pose
 * as it, and the audit tells its commands from a chat's turns. tools.controlChats names it
 * "homeassistant:commands".
 */
export const HA_CONTEXT: ToolContext = Object.freeze({ sessionKey: `${HA_CHANNEL}:${HA_CHAT}`, channel: HA_CHANNEL, chatId: HA_CHAT, caller: 'homeassistant' });

/** How often a board's connection is looked at: a change is published at once, not at the next interval. */
const DEVICE_CHECK_MS = 5000;


export interface HomeAssistantOptions {
  link: MqttLink;
  db: Db;
  settings: MqttSettings;
  entities: HaEntities;
  bus: Bus;
  /** when the gateway started, ms since the epoch (uptime) */
  startedAt: number;
  /** the governed tool path (the registry's run) */
  runTool: (call: ToolCall, ctx: ToolContext) => Promise<ToolResult>;
  /** tools.physicalMaxAgeSeconds: a command that may have waited at the broker longer is not run */
  physicalMaxAgeSeconds: number;
  /** how long to wait for the end of the broker's queued messages before taking commands again */
  catchUpTimeoutMs?: number;
  log?: Logger;
  now?: () => number;
  /** the device's sw_version; default: pinclaw's version */
  swVersion?: string;
}

/** Why a command did not switch the line, and what the owner can change about it. */
function explainRefusal(line: HaLine, want: 0 | 1, content: string): string {
  const what = `home assistant: switching ${line.name} ${levelPayload(want)} did not happen: ${content}`;
  if (/tools\.controlChats/.test(content)) return `${what}; to let Home Assistant switch lines, add "${HA_CHANNEL}:${HA_CHAT}" to tools.controlChats (a physical action outside the owner's chats needs a confirmation that MQTT cannot ask for)`;
  if (/hardware\.confirm/.test(content)) return `${what}; ${line.name} is in hardware.confirm, which asks the owner before every write and Home Assistant cannot answer: remove it from hardware.confirm to switch it from Home Assistant`;
  if (/not in profile|tools\.deny|tools\.allow/.test(content)) return `${what}; the tool policy for channel ${HA_CHANNEL} must allow ${/^(\w+)/.exec(content)?.[1] ?? 'the tool'} (tools.profile, tools.allow, tools.overrides)`;
  return what;
}

export function startHomeAssistant(o: HomeAssistantOptions): () => void {
  const log = o.log ?? defaultLog;
  const now = o.now ?? Date.now;
  const { link, entities } = o;
  const ha = o.settings.homeAssistant;
  const ctx: DiscoveryContext = { discoveryPrefix: ha.discoveryPrefix, baseTopic: link.baseTopic, nodeId: link.nodeId, swVersion: o.swVersion ?? pinclawVersion() };
  const objects = discoveryObjects(ctx, entities);
  const lines = new Map(entities.lines.map((l) => [l.name, l]));
  const sensors = new Map(entities.sensors.map((s) => [s.name, s]));
  const devices = new Map(entities.devices.map((d) => [d.name, d]));
  const switches = new Map(objects.filter((x) => x.component === 'switch').map((x) => [x.objectId, x]));

  // Removal: every config topic published before by this home and not offered now.
  const current = objects.map((x) => x.configTopic);
  let previous: string[] = [];
  const stored = getState(o.db, DISCOVERY_STATE_KEY);
  if (stored !== undefined) {
    try {
      const parsed: unknown = JSON.parse(stored);
      if (Array.isArray(parsed)) previous = parsed.filter((t): t is string => typeof t === 'string');
    } catch {
      log.warn(`home assistant: the remembered discovery topics (state ${DISCOVERY_STATE_KEY}) are not JSON; entities removed from the config since the last run stay in Home Assistant until deleted there`);
    }
  }
  const toRemove = new Set(staleTopics(previous, current));
  // Remembered before anything is published: a crash mid-way must not forget a topic still retained.
  const remember = () => setState(o.db, DISCOVERY_STATE_KEY, JSON.stringify([...current, ...toRemove]));
  remember();

  let stopped = false;
  let lastTurn: string | undefined;
  /** per object: the last read error logged, so a failing sensor is logged once per run of failures */
  const failing = new Map<string, string>();

  const publish = (topic: string, payload: string): Promise<boolean> =>
    link.publish(topic, payload, { qos: 1, retain: true }).then(
      () => true,
      (err: unknown) => {
        // Not connected: the next connect publishes everything again. Anything else is worth a line.
        if (link.connected()) log.warn(`home assistant: ${errorMessage(err)}`);
        return false;
      },
    );

  const readFailed = (x: HaObject, what: string, err: unknown) => {
    const msg = errorMessage(err);
    if (failing.get(x.objectId) !== msg) log.warn(`home assistant: reading ${what} for ${x.stateTopic} failed: ${msg}`);
    failing.set(x.objectId, msg);
  };
  const readOk = (x: HaObject, what: string) => {
    if (failing.delete(x.objectId)) log.info(`home assistant: reading ${what} works again`);
  };

  const publishLine = async (x: HaObject, line: HaLine, known?: 0 | 1) => {
    let v = known;
    if (v === undefined) {
      try {
        v = await line.read();
        readOk(x, `line ${line.name}`);
      } catch (err) {
        return readFailed(x, `line ${line.name}`, err);
      }
    }
    await publish(x.stateTopic, levelPayload(v));
  };
  const publishSensor = async (x: HaObject, s: HaSensor) => {
    let v: number;
    try {
      v = await s.read();
      readOk(x, `sensor ${s.name}`);
    } catch (err) {
      return readFailed(x, `sensor ${s.name}`, err);
    }
    if (!Number.isFinite(v)) return readFailed(x, `sensor ${s.name}`, new Error(`not a number: ${v}`));
    await publish(x.stateTopic, String(v));
  };

  /**
   * Something on a board that is not connected is not read: Home Assistant shows it unavailable (its
   * availability follows the board), and a board resetting at boot would otherwise log every line.
   */
  const boardDown = (device: string | undefined) => device !== undefined && devices.get(device)?.connected() === false;
  const publishState = async (x: HaObject): Promise<void> => {
    const src = x.source;
    switch (src.kind) {
      case 'status':
        return; // the link's own retained online/offline
      case 'last_turn':
        if (lastTurn !== undefined) await publish(x.stateTopic, lastTurn);
        return;
      case 'uptime':
        await publish(x.stateTopic, String(Math.max(0, Math.floor((now() - o.startedAt) / 1000))));
        return;
      case 'device': {
        const d = devices.get(src.name);
        if (d) await publish(x.stateTopic, levelPayload(d.connected() ? 1 : 0));
        return;
      }
      case 'line': {
        const l = lines.get(src.name);
        if (l && !boardDown(l.device)) await publishLine(x, l);
        return;
      }
      case 'sensor': {
        const s = sensors.get(src.name);
        if (s && !boardDown(s.device)) await publishSensor(x, s);
        return;
      }
    }
  };
  /** Sensors with their own intervalMs are published by their own timer. */
  const ownTimer = (x: HaObject) => x.source.kind === 'sensor' && sensors.get(x.source.name)?.intervalMs !== undefined;
  const publishStates = async (which: (x: HaObject) => boolean) => {
    await Promise.all(objects.filter(which).map((x) => publishState(x).catch((err: unknown) => log.warn(`home assistant: ${x.objectId}: ${errorMessage(err)}`))));
  };

  const onConnect = () => {
    void (async () => {
      const removals = [...toRemove].map(async (t) => {
        if (await publish(t, '')) {
          toRemove.delete(t);
          log.info(`home assistant: removed ${t} (no longer in the config)`);
        }
      });
      const configs = objects.map((x) => {
        const m = configMessage(x);
        return publish(m.topic, m.payload);
      });
      const [, sent] = await Promise.all([Promise.all(removals), Promise.all(configs)]);
      if (stopped) return;
      remember();
      const n = sent.filter(Boolean).length;
      if (n === objects.length) log.info(`home assistant: ${n} entities announced under ${ctx.discoveryPrefix}/+/${ctx.nodeId}/`);
      // Home Assistant subscribes to a state topic once it has the config: states come after.
      await publishStates(() => true);
    })();
  };

  /**
   * Commands queued at the broker while the gateway was away. Home Assistant's payloads carry no
   * time, so their age cannot be read; but the broker hands a resumed session's queued messages
   * over first, in the order they came (one queue per session in mosquitto and most brokers). So
   * on a connect that resumed the session after an absence longer than tools.physicalMaxAgeSeconds
   * (or of unknown length: the first connect of this process), the link publishes a marker to itself
   * and every command before the marker comes back is one that waited: not run, audited, logged,
   * and the line's real state published so Home Assistant shows it. A shorter absence lets them run:
   * none can be older than it. A clean session instead would lose a command sent in a short network
   * blip, and QoS 0 subscriptions are still queued by brokers that store QoS 0 (EMQX by default).
   */
  const maxAgeMs = o.physicalMaxAgeSeconds * 1000;
  const markTopic = link.topic('ha/caught-up');
  let catchingUp: { mark: string; awayMs?: number; held: number; timer: NodeJS.Timeout } | undefined;
  const caughtUp = (why: string) => {
    if (!catchingUp) return;
    clearTimeout(catchingUp.timer);
    if (catchingUp.held) log.warn(`home assistant: ${catchingUp.held} command${catchingUp.held === 1 ? '' : 's'} queued at the broker while the gateway was away were not run (${why}); switch again in Home Assistant if still wanted`);
    catchingUp = undefined;
  };
  const onConnectCatchUp = (info: ConnectInfo) => {
    if (catchingUp) caughtUp('a new connection');
    if (!info.sessionPresent) return; // a new session has nothing queued
    if (info.awayMs !== undefined && info.awayMs <= maxAgeMs) return; // nothing queued can be older than the absence
    const mark = randomUUID();
    const timer = setTimeout(() => caughtUp(`the marker on ${markTopic} did not come back within ${o.catchUpTimeoutMs ?? 10_000} ms: the broker's ACLs must let this node publish and subscribe there`), o.catchUpTimeoutMs ?? 10_000);
    timer.unref();
    catchingUp = { mark, ...(info.awayMs !== undefined ? { awayMs: info.awayMs } : {}), held: 0, timer };
    link.publish(markTopic, mark, { qos: 1 }).catch((err: unknown) => caughtUp(`the marker could not be published: ${errorMessage(err)}`));
  };
  link.subscribe(markTopic, (_t, payload, info) => {
    if (!info.retain && catchingUp && payload.toString('utf8') === catchingUp.mark) caughtUp('the broker handed over what it held');
  });
  const holdQueued = (x: HaObject, line: HaLine, want: 0 | 1, topic: string) => {
    const c = catchingUp!;
    c.held++;
    const away = c.awayMs === undefined ? 'since before this gateway started' : `for ${Math.round(c.awayMs / 1000)} s`;
    const detail = `the command ${levelPayload(want)} for ${line.name} waited at the broker while the gateway was away (${away}), so it may be older than tools.physicalMaxAgeSeconds (${o.physicalMaxAgeSeconds} s); not run`;
    log.warn(`home assistant: ${detail} (${topic}); switch it again in Home Assistant if still wanted`);
    const call = line.setCall!(want);
    try {
      insertAudit(o.db, {
        at: now(), sessionKey: HA_CONTEXT.sessionKey, channel: HA_CONTEXT.channel, chatId: HA_CONTEXT.chatId, caller: HA_CONTEXT.caller,
        tool: call.name, input: JSON.stringify(call.input), outcome: 'denied', rule: 'tools.physicalMaxAgeSeconds', detail, durationMs: 0, outputBytes: 0,
      });
    } catch (err) {
      log.warn(`home assistant: cannot record the command not run: ${errorMessage(err)}`);
    }
    // Home Assistant shows the switch as commanded until it hears the real state.
    enqueue(x.objectId, () => publishLine(x, line));
  };

  const stops: (() => void)[] = [];
  // Registered synchronously, before the broker can hand over queued messages (connection.ts). Never
  // unsubscribed: stopping is the gateway's shutdown, and the broker's persistent session must keep
  // the subscription so a command sent while pinclaw restarts waits for it (QoS 1). A stopped
  // handler ignores what still arrives.
  link.subscribe(commandFilter(ctx), (topic, payload, info) => {
    if (stopped) return;
    const id = objectIdOfCommand(ctx, topic);
    const text = payload.toString('utf8');
    if (info.retain) {
      // An old command kept by the broker is not something the owner asked for now.
      log.warn(`home assistant: a retained command on ${topic} (${JSON.stringify(text.slice(0, 40))}) is ignored; commands must not be retained`);
      return;
    }
    const x = id === undefined ? undefined : switches.get(id);
    const line = x?.source.kind === 'line' ? lines.get(x.source.name) : undefined;
    if (!x || !line?.setCall) {
      const known = [...switches.keys()];
      log.warn(`home assistant: a command on ${topic}, but this node has no switch '${id ?? topic}' (switches: ${known.length ? known.join(', ') : 'none'}); nothing run`);
      return;
    }
    const want = parseSwitchPayload(text);
    if (want === undefined) {
      log.warn(`home assistant: the command for ${line.name} on ${topic} is ${JSON.stringify(text.slice(0, 40))}, not ON or OFF (1/0, on/off, true/false also do); nothing run`);
      return;
    }
    if (catchingUp) return holdQueued(x, line, want, topic);
    enqueue(x.objectId, () => command(x, line, want));
  });
  // Commands to one switch run one after another, in the order they came.
  const chains = new Map<string, Promise<void>>();
  const enqueue = (id: string, job: () => Promise<void>) => {
    const next = (chains.get(id) ?? Promise.resolve()).then(job, job);
    chains.set(id, next);
    void next.finally(() => {
      if (chains.get(id) === next) chains.delete(id);
    });
  };
  const command = async (x: HaObject, line: HaLine, want: 0 | 1) => {
    let result: ToolResult;
    try {
      result = await o.runTool(line.setCall!(want), HA_CONTEXT);
    } catch (err) {
      result = { content: errorMessage(err), isError: true };
    }
    if (result.isError) log.error(explainRefusal(line, want, result.content));
    else log.info(`home assistant: ${line.name} switched ${levelPayload(want)} (${result.content})`);
    if (!stopped) await publishLine(x, line);
  };

  // Home Assistant announces its own restarts on <prefix>/status: states go out again then.
  link.subscribe(`${ctx.discoveryPrefix}/status`, (_t, payload, info) => {
    if (!stopped && !info.retain && payload.toString('utf8').trim() === 'online') void publishStates(() => true);
  });
  stops.push(link.onConnect((info) => {
    onConnectCatchUp(info);
    onConnect();
  }));
  stops.push(() => caughtUp('stopping'));
  if (link.connected()) onConnect();

  const lastTurnObject = objects.find((x) => x.source.kind === 'last_turn');
  stops.push(
    o.bus.on('turn_end', () => {
      lastTurn = new Date(now()).toISOString();
      if (lastTurnObject) void publishState(lastTurnObject);
    }),
  );

  // Inputs that report changes: their state goes out on each change.
  for (const x of objects) {
    if (x.source.kind !== 'line') continue;
    const line = lines.get(x.source.name);
    if (!line?.watch || line.direction !== 'input') continue;
    try {
      const obj = x;
      stops.push(line.watch((v) => void publishLine(obj, line, v)));
    } catch (err) {
      log.warn(`home assistant: ${line.name} cannot report changes (${errorMessage(err)}); its state is read every ${ha.stateIntervalSeconds} s`);
    }
  }

  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, fn: () => void) => {
    const t = setInterval(fn, ms);
    t.unref();
    timers.push(t);
  };
  every(ha.stateIntervalSeconds * 1000, () => {
    if (link.connected()) void publishStates((x) => !ownTimer(x));
  });
  for (const x of objects) {
    if (!ownTimer(x) || x.source.kind !== 'sensor') continue;
    const s = sensors.get(x.source.name)!;
    const obj = x;
    every(s.intervalMs!, () => {
      if (link.connected() && !boardDown(s.device)) void publishSensor(obj, s);
    });
  }
  // A board that connects or goes away changes its own state and the availability of what is on it;
  // after it comes back, what is on it is read again (a board that reset has new levels).
  const seen = new Map(entities.devices.map((d) => [d.name, d.connected()]));
  if (entities.devices.length) {
    every(DEVICE_CHECK_MS, () => {
      if (!link.connected()) return;
      for (const d of entities.devices) {
        const up = d.connected();
        if (seen.get(d.name) === up) continue;
        seen.set(d.name, up);
        log.info(`home assistant: board ${d.name} ${up ? 'connected' : 'disconnected'}`);
        void publishStates((x) => {
          if (x.source.kind === 'device') return x.source.name === d.name;
          if (!up) return false;
          if (x.source.kind === 'line') return lines.get(x.source.name)?.device === d.name;
          if (x.source.kind === 'sensor') return sensors.get(x.source.name)?.device === d.name;
          return false;
        });
      }
    });
  }

  return () => {
    if (stopped) return;
    stopped = true;
    for (const t of timers) clearInterval(t);
    for (const s of stops.reverse()) {
      try {
        s();
      } catch (err) {
        log.warn(`home assistant: stopping: ${errorMessage(err)}`);
      }
    }
  };
}
