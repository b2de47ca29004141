// The one connection of a gateway to its MQTT broker (the `mqtt` package): availability with a last
// will, reconnects with a doubling wait, a persistent session for QoS 1, and subscriptions that each
// have their own handler. The chat channel, Home Assistant discovery, MQTT triggers and the fleet's
// remote tools all share it. Lives in the lazy `mqtt` chunk: a gateway without mqtt.url never
// evaluates this or the mqtt package.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import mqtt, { type IClientOptions, type IClientPublishOptions, type MqttClient } from 'mqtt';
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError, errorMessage } from '../errors.js';
import { log as defaultLog, type Logger } from '../log.js';

export type MqttSettings = PinclawConfig['mqtt'];

export interface MessageInfo {
  /** a retained message the broker hands a new subscription: old state, not an event */
  retain: boolean;
  /** the broker may have delivered this one before (QoS 1 redelivery) */
  dup: boolean;
}

export type MessageHandler = (topic: string, payload: Buffer, info: MessageInfo) => void;

/** What a (re)connect tells its listeners: whether messages may have waited at the broker, and since when. */
export interface ConnectInfo {
  /** the broker resumed this node's session: QoS 1 messages that arrived while it was away come first */
  sessionPresent: boolean;
  /** how long this process was without the broker; undefined on its first connect (away for an unknown time) */
  awayMs?: number;
}

export interface MqttLink {
  readonly nodeId: string;
  readonly baseTopic: string;
  /** the broker URL with any password removed, for messages */
  readonly url: string;
  /** `<baseTopic>/<nodeId>/<suffix>`; another node's with `node` */
  topic(suffix: string, node?: string): string;
  connected(): boolean;
  /**
   * Publishes; resolves when the broker has it (QoS 1: its PUBACK). Rejects at once when the broker
   * is not connected (the caller keeps the message: the durable queue retries), and after
   * `timeoutMs` (default 30 s) without an acknowledgement.
   */
  publish(topic: string, payload: string | Buffer, opts?: { qos?: 0 | 1; retain?: boolean; timeoutMs?: number }): Promise<void>;
  /**
   * Subscribes a filter (+ and # wildcards) at QoS 1; the handler gets every matching message. The
   * handler runs before the broker's PUBACK is sent, so a message it commits to SQLite synchronously
   * is never lost. Returns the function that drops the handler (the broker's session keeps the
   * subscription, so messages sent while the gateway is down wait for it).
   */
  subscribe(filter: string, handler: MessageHandler): () => void;
  /** Runs on every (re)connect, after the status and the subscriptions are in place, before any message of that connection is handled. */
  onConnect(listener: (info: ConnectInfo) => void): () => void;
  /** 'up' on connect, 'down' with the reason when lost or refused. */
  onState(listener: (state: 'up' | 'down', detail: string) => void): () => void;
  /** Publishes the retained `offline` status and disconnects; idempotent. */
  close(): Promise<void>;
}

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The node id: configured, or the host name made topic-safe. */
export function nodeIdOf(s: Pick<MqttSettings, 'nodeId'>, host = hostname()): string {
  if (s.nodeId !== undefined) {
    if (!NODE_ID.test(s.nodeId)) throw new ConfigError(`mqtt.nodeId: ${JSON.stringify(s.nodeId)} must be 1-64 letters, digits, _ or - (it is a topic level and a Home Assistant id)`);
    return s.nodeId;
  }
  const safe = host.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return safe || 'pinclaw';
}

/** Checks what the schema cannot: the URL's scheme, the base topic, the reconnect waits. */
export function checkMqttSettings(s: MqttSettings): void {
  if (!s.url) throw new ConfigError('mqtt.url: required');
  let u: URL;
  try {
    u = new URL(s.url);
  } catch {
    throw new ConfigError(`mqtt.url: ${JSON.stringify(s.url)} is not a URL (mqtt://host:1883, mqtts://host:8883, ws://host:9001/mqtt)`);
  }
  if (!['mqtt:', 'mqtts:', 'ws:', 'wss:'].includes(u.protocol)) throw new ConfigError(`mqtt.url: the scheme ${u.protocol} is not one of mqtt:, mqtts:, ws:, wss:`);
  if (!s.baseTopic || /[#+]/.test(s.baseTopic) || s.baseTopic.startsWith('/') || s.baseTopic.endsWith('/')) {
    throw new ConfigError(`mqtt.baseTopic: ${JSON.stringify(s.baseTopic)} must be a topic without wildcards (+, #) or a leading or trailing /`);
  }
  if (s.reconnect.maxMs < s.reconnect.minMs) throw new ConfigError(`mqtt.reconnect.maxMs (${s.reconnect.maxMs}) is below mqtt.reconnect.minMs (${s.reconnect.minMs})`);
  nodeIdOf(s);
  // Read here too, so a gateway finds a missing CA file before anything starts.
  if (s.ca) caOf(s.ca);
}

function caOf(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`mqtt.ca: cannot read ${file}: ${errorMessage(err)}`);
  }
}

/**
 * Whether a topic matches a filter. Hand-written (ten lines) instead of a dependency: MQTT's rule is
 * fixed by the standard: `+` one level, `#` the rest (also none), and a filter starting with a
 * wildcard does not match topics starting with `$`.
 */
export function topicMatches(filter: string, topic: string): boolean {
  return levelsMatch(filter.split('/'), topic.split('/'));
}

/** topicMatches on filter and topic already split at '/': each message's topic is split once, each filter when subscribed. */
function levelsMatch(f: readonly string[], t: readonly string[]): boolean {
  if (t[0]!.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.username = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** v5 sessions outlive the connection this long (a board rebooting keeps its queued QoS 1 messages). */
const SESSION_EXPIRY_S = 7 * 24 * 3600;

/**
 * The client options for the settings: the URL taken apart here (WHATWG URL) rather than by
 * mqtt.connect, whose url.parse() prints a deprecation warning into the gateway's log on Node 24.
 */
function brokerOptions(s: MqttSettings, extra: Pick<IClientOptions, 'clientId' | 'will'> & Partial<IClientOptions>): IClientOptions {
  const v5 = s.protocol === '5';
  const ca = s.ca ? caOf(s.ca) : undefined;
  const u = new URL(s.url!);
  return {
    protocol: u.protocol.slice(0, -1) as 'mqtt' | 'mqtts' | 'ws' | 'wss',
    host: u.hostname.replace(/^\[|\]$/g, ''),
    ...(u.port ? { port: Number(u.port) } : {}),
    ...(u.protocol.startsWith('ws') ? { path: `${u.pathname}${u.search}` } : {}),
    username: s.username ?? (u.username ? decodeURIComponent(u.username) : undefined),
    password: s.password ?? (u.password ? decodeURIComponent(u.password) : undefined),
    protocolVersion: v5 ? 5 : 4,
    // A persistent session: QoS 1 messages for this node wait at the broker while it is away.
    clean: false,
    ...(v5 ? { properties: { sessionExpiryInterval: SESSION_EXPIRY_S } } : {}),
    keepalive: s.keepaliveSeconds,
    reconnectPeriod: s.reconnect.minMs,
    // Refused credentials are retried too (the owner may fix the broker's side); logged once per reason.
    reconnectOnConnackError: true,
    connectTimeout: 10_000,
    resubscribe: false,
    // mqtt logs through the debug package several times on every packet, also when nobody listens
    // (about a tenth of a remote call's CPU in bench:mqtt); DEBUG=mqttjs* still shows them.
    ...(/mqttjs/.test(process.env.DEBUG ?? '') ? {} : { log: () => {} }),
    ...(ca ? { ca } : {}),
    ...extra,
  };
}

/**
 * One connection attempt, for `pinclaw doctor`: whether the broker takes these settings, and what
 * the node's retained status says (the gateway's availability). Its own client id and a clean
 * session, so the gateway's session is not touched.
 */
export async function probeBroker(s: MqttSettings, timeoutMs = 5000): Promise<{ ok: boolean; detail: string }> {
  checkMqttSettings(s);
  const nodeId = nodeIdOf(s);
  const url = safeUrl(s.url!);
  const options = brokerOptions(s, { clientId: `pinclaw-${nodeId}-doctor-${process.pid}`, clean: true, reconnectPeriod: 0, connectTimeout: timeoutMs, properties: undefined });
  const client = mqtt.connect(options);
  try {
    const status = await new Promise<string | undefined>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${url} within ${timeoutMs} ms`)), timeoutMs);
      client.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      client.once('connect', () => {
        const topic = `${s.baseTopic}/${nodeId}/status`;
        // The retained status arrives right after the subscription, if there is one.
        client.on('message', (t, p) => {
          if (t !== topic) return;
          clearTimeout(timer);
          resolve(p.toString());
        });
        client.subscribe(topic, { qos: 0 }, (err) => {
          if (err) return;
          setTimeout(() => {
            clearTimeout(timer);
            resolve(undefined);
          }, 300);
        });
      });
    });
    return { ok: true, detail: `${url} takes the settings; node ${nodeId} is ${status ?? 'not announced yet (no gateway has connected)'}` };
  } catch (err) {
    return { ok: false, detail: `${url}: ${errorMessage(err)}` };
  } finally {
    client.end(true);
  }
}


export interface OpenOptions {
  settings: MqttSettings;
  /** the decrypted mqtt.password is in settings; this is only for a test's own client id */
  clientId?: string;
  log?: Logger;
  /** publish the availability (status topic, last will); default true */
  availability?: boolean;
}

export function openMqttLink(o: OpenOptions): MqttLink {
  const s = o.settings;
  checkMqttSettings(s);
  const log = o.log ?? defaultLog;
  const nodeId = nodeIdOf(s);
  const base = s.baseTopic;
  const topic = (suffix: string, node = nodeId) => `${base}/${node}/${suffix}`;
  const statusTopic = topic('status');
  const url = safeUrl(s.url!);
  const availability = o.availability !== false;
  const v5 = s.protocol === '5';
  const options = brokerOptions(s, {
    clientId: o.clientId ?? `pinclaw-${nodeId}`,
    ...(availability ? { will: { topic: statusTopic, payload: Buffer.from('offline'), qos: 1, retain: true } } : {}),
  });

  const subs: { filter: string; levels: string[]; handler: MessageHandler }[] = [];
  const connectListeners = new Set<(info: ConnectInfo) => void>();
  /** when the link last lost the broker (this process) */
  let downAt: number | undefined;
  const stateListeners = new Set<(state: 'up' | 'down', detail: string) => void>();
  let up = false;
  let closing = false;
  let lastProblem = '';
  let wait = s.reconnect.minMs;

  const client: MqttClient = mqtt.connect(options);
  const setState = (state: 'up' | 'down', detail: string) => {
    for (const l of stateListeners) {
      try {
        l(state, detail);
      } catch (err) {
        log.warn(`mqtt: a state listener failed: ${errorMessage(err)}`);
      }
    }
  };
  const subscribeAll = (filters: string[]) => {
    if (!filters.length) return;
    // Retain handling 1 (v5): retained messages only for a new subscription, so a reconnect does not
    // hand a trigger the same old state again.
    client.subscribe(filters.map((f) => f), { qos: 1, ...(v5 ? { rh: 1 } : {}) }, (err, granted) => {
      if (err) return log.error(`mqtt: subscribing ${filters.join(', ')} failed: ${errorMessage(err)}`);
      const taken: string[] = [];
      for (const g of granted ?? []) {
        if (g.qos === 128) log.error(`mqtt: the broker refused the subscription ${g.topic} (not authorized?)`);
        else taken.push(g.topic);
      }
      // Said once the broker acknowledged: from here on a message on these topics reaches pinclaw
      // ("connected" alone does not mean that, and a trigger's message published in between is lost).
      if (taken.length) log.info(`mqtt: subscribed to ${taken.slice(0, 8).join(', ')}${taken.length > 8 ? ` and ${taken.length - 8} more` : ''}`);
    });
  };

  client.on('connect', (connack) => {
    // Nagle's algorithm with the broker's delayed ACKs holds each small QoS 1 packet ~40 ms:
    // measured 88 ms per request/response between two clients, 0.55 ms with this on both ends.
    (client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
    up = true;
    lastProblem = '';
    wait = s.reconnect.minMs;
    client.options.reconnectPeriod = wait;
    log.info(`mqtt: connected to ${url} as ${nodeId}${connack.sessionPresent ? ' (session resumed)' : ''}`);
    if (availability) client.publish(statusTopic, 'online', { qos: 1, retain: true });
    // Every connect, also when the session resumed: a session can have lost a subscription (an
    // older pinclaw, a broker that restored an old state). Retained messages this hands over again
    // carry the retain flag, and every handler ignores those.
    subscribeAll([...new Set(subs.map((x) => x.filter))]);
    setState('up', `connected to ${url}`);
    const info: ConnectInfo = { sessionPresent: connack.sessionPresent === true, ...(downAt !== undefined ? { awayMs: Date.now() - downAt } : {}) };
    for (const l of connectListeners) {
      try {
        l(info);
      } catch (err) {
        log.warn(`mqtt: a connect listener failed: ${errorMessage(err)}`);
      }
    }
  });
  const lost = (why: string) => {
    if (closing) return;
    if (why !== lastProblem) {
      // Logged when the reason changes, not on every retry of a broker that stays down.
      log.error(`mqtt: ${why}; trying again, waiting up to ${Math.round(s.reconnect.maxMs / 1000)} s between attempts`);
      lastProblem = why;
    }
    if (up) downAt = Date.now();
    setState('down', why);
    up = false;
  };
  client.on('error', (err) => lost(`${url}: ${errorMessage(err)}`));
  client.on('close', () => {
    if (up) lost(`lost the connection to ${url}`);
    if (up) downAt = Date.now();
    up = false;
    // The doubling wait: each attempt that does not end in a connect waits twice as long.
    client.options.reconnectPeriod = wait;
    wait = Math.min(s.reconnect.maxMs, wait * 2);
  });
  client.on('offline', () => {
    if (!lastProblem) lost(`cannot reach ${url}`);
  });
  client.on('message', (t, payload, packet) => {
    // mqtt writes this message's PUBACK right after the event, on its own (it uncorks on the next
    // tick); held until the next turn of the event loop, it leaves in one write with what the
    // handlers publish by then: a fleet server's answer to a quick read and the call's PUBACK in
    // one TCP segment, one syscall and one wake-up of the broker instead of two. The PUBACK still
    // follows the handler, never precedes it.
    const stream = client.stream;
    if (packet.qos > 0 && stream?.writable) {
      stream.cork();
      setImmediate(() => stream.uncork());
    }
    const levels = t.split('/');
    for (const sub of subs) {
      if (!levelsMatch(sub.levels, levels)) continue;
      try {
        sub.handler(t, payload, { retain: packet.retain === true, dup: packet.dup === true });
      } catch (err) {
        log.error(`mqtt: handling a message on ${t} failed: ${errorMessage(err)}`);
      }
    }
  });

  const publish: MqttLink['publish'] = (t, payload, opts = {}) =>
    new Promise<void>((resolve, reject) => {
      if (!up) return reject(new Error(`mqtt: not connected to ${url}${lastProblem ? ` (${lastProblem})` : ''}`));
      const timer = setTimeout(() => reject(new Error(`mqtt: no acknowledgement from ${url} within ${opts.timeoutMs ?? 30_000} ms for ${t}`)), opts.timeoutMs ?? 30_000);
      const po: IClientPublishOptions = { qos: opts.qos ?? 1, retain: opts.retain ?? false };
      client.publish(t, payload, po, (err) => {
        clearTimeout(timer);
        if (err) reject(new Error(`mqtt: publishing on ${t} failed: ${errorMessage(err)}`));
        else resolve();
      });
    });

  return {
    nodeId,
    baseTopic: base,
    url,
    topic,
    connected: () => up,
    publish,
    subscribe(filter, handler) {
      const sub = { filter, levels: filter.split('/'), handler };
      const known = subs.some((x) => x.filter === filter);
      subs.push(sub);
      if (up && !known) subscribeAll([filter]);
      // Only the handler goes: the broker keeps the subscription in the persistent session, so
      // messages sent while the gateway restarts wait for it (an UNSUBSCRIBE on the way out would
      // drop them). A filter no longer configured costs its messages' acknowledgements, no more.
      return () => {
        const i = subs.indexOf(sub);
        if (i >= 0) subs.splice(i, 1);
      };
    },
    onConnect(l) {
      connectListeners.add(l);
      return () => connectListeners.delete(l);
    },
    onState(l) {
      stateListeners.add(l);
      return () => stateListeners.delete(l);
    },
    async close() {
      if (closing) return;
      closing = true;
      if (up && availability) await publish(statusTopic, 'offline', { qos: 1, retain: true, timeoutMs: 2000 }).catch((err: unknown) => log.warn(`mqtt: ${errorMessage(err)}`));
      await client.endAsync().catch(() => {});
    },
  };
}
