// MQTT triggers (mqtt.triggers): a message on a watched topic that meets its condition starts an
// agent turn through the durable queue. The condition is judged here, without the model
// (condition.ts), and what matches passes the same filter as a GPIO edge (debounce, then a rate
// limit per window), so a chatty sensor costs at most a bounded handful of turns, never tokens for
// messages that do not match.
import type { MqttLink } from '../mqtt/connection.js';
import type { PinclawConfig } from '../config/schema.js';
import { count } from '../counters.js';
import { ConfigError, errorMessage } from '../errors.js';
import { EdgeFilter } from '../hardware/triggers/edge-filter.js';
import { routeSession } from '../hardware/triggers/runner.js';
import { log as defaultLog, type Logger } from '../log.js';
import type { NewInbound } from '../store/queue.js';
import { judge } from './condition.js';

export type MqttTriggerConfig = PinclawConfig['mqtt']['triggers'][number];

/** A trigger whose messages cannot match (not JSON, no such field) says so at most this often. */
const SHAPE_WARNING_EVERY_MS = 60 * 60_000;
/** The payload is appended to the message up to this many characters. */
const MAX_PAYLOAD_CHARS = 2000;

export interface MqttTriggerStatus {
  topic: string;
  session: string;
  /** messages on the topic */
  seen: number;
  /** turns submitted */
  submitted: number;
  /** matches dropped by debounce or the rate limit */
  suppressed: number;
  /** why the last message did not match */
  lastMiss?: string;
}

export interface MqttTriggers {
  stop(): void;
  status(): MqttTriggerStatus[];
}

export interface MqttTriggerDeps {
  link: Pick<MqttLink, 'subscribe'>;
  triggers: readonly MqttTriggerConfig[];
  submit(msg: NewInbound): unknown;
  knownChannels?: readonly string[];
  /** where a turn of a session that is not `channel:chat` is answered; default: routeSession's */
  channelFor?(session: string): { channel: string; chatId: string };
  now?: () => number;
  log?: Logger;
}

const hasWildcardMisuse = (filter: string) => filter.split('/').some((level, i, all) => (level.includes('#') && (level !== '#' || i !== all.length - 1)) || (level.includes('+') && level !== '+'));

/** A trigger whose required fields checkMqttTriggers has seen. */
type Checked = MqttTriggerConfig & { topic: string; session: string; message: string };

/** What the schema cannot say: required fields and valid topic filters; a ConfigError exits 78. */
export function checkMqttTriggers(triggers: readonly MqttTriggerConfig[]): void {
  triggers.forEach((t, i) => {
    const at = `mqtt.triggers[${i}]`;
    if (!t.topic) throw new ConfigError(`${at}.topic: required (the topic or filter to watch)`);
    if (hasWildcardMisuse(t.topic)) throw new ConfigError(`${at}.topic: ${JSON.stringify(t.topic)} is not a valid filter (+ stands for a whole level, # only for the last)`);
    if (!t.session) throw new ConfigError(`${at}.session: required (the session that gets the message)`);
    if (!t.message) throw new ConfigError(`${at}.message: required (what the agent is told)`);
  });
}

export function startMqttTriggers(deps: MqttTriggerDeps): MqttTriggers {
  checkMqttTriggers(deps.triggers);
  const log = deps.log ?? defaultLog;
  const now = deps.now ?? Date.now;
  const route = deps.channelFor ?? ((s: string) => routeSession(s, deps.knownChannels));
  const stops: (() => void)[] = [];
  const statuses: MqttTriggerStatus[] = [];
  (deps.triggers as readonly Checked[]).forEach((t, i) => {
    const status: MqttTriggerStatus = { topic: t.topic, session: t.session, seen: 0, submitted: 0, suppressed: 0 };
    statuses.push(status);
    const filter = new EdgeFilter({ edge: 'both', debounceMs: t.debounceMs, maxPerWindow: t.rateLimit.max, windowMs: t.rateLimit.perSeconds * 1000 });
    const what = `mqtt trigger ${i} (${t.topic})`;
    let lastShapeWarning = -Infinity;
    stops.push(
      deps.link.subscribe(t.topic, (topic, payload, info) => {
        // A retained message is the topic's old state handed to a new subscription, not an event.
        if (info.retain) return;
        status.seen++;
        const text = payload.toString('utf8');
        const verdict = judge(t.when, text);
        if (!verdict.match) {
          status.lastMiss = verdict.why;
          // A payload of the wrong shape says the topic or when.path is probably wrong: told, once an hour.
          if (verdict.shape && now() - lastShapeWarning >= SHAPE_WARNING_EVERY_MS) {
            lastShapeWarning = now();
            log.warn(`${what}: a message on ${topic} cannot match: ${verdict.why} (mqtt.triggers[${i}].when.path; said once an hour)`);
          } else {
            log.debug(`${what}: no match on ${topic}: ${verdict.why}`);
          }
          return;
        }
        const v = filter.offer('rising', now());
        if (!v.pass) {
          status.suppressed++;
          if (v.reason === 'rate' && v.stormStarted) log.warn(`${what}: more than ${t.rateLimit.max} matches within ${t.rateLimit.perSeconds} s; further matches are dropped until it is quiet for that long`);
          return;
        }
        const shown = text.length > MAX_PAYLOAD_CHARS ? `${text.slice(0, MAX_PAYLOAD_CHARS)}… (${text.length} characters)` : text;
        const { channel, chatId } = route(t.session);
        try {
          const r = deps.submit({ sessionKey: t.session, channel, chatId, sender: 'mqtt-trigger', text: `${t.message}\n\n(MQTT message on ${topic}: ${shown})`, meta: { trigger: i, topic } });
          if (r instanceof Promise) r.catch((err: unknown) => log.error(`${what}: the message could not be queued: ${errorMessage(err)}`));
          status.submitted++;
          count('triggers', { source: 'mqtt' });
        } catch (err) {
          // The store refused it (full disk, a lock held too long): the match is lost, and said so.
          log.error(`${what}: the message could not be queued: ${errorMessage(err)}`);
        }
      }),
    );
  });
  return {
    stop: () => stops.splice(0).forEach((s) => s()),
    status: () => statuses.map((s) => ({ ...s })),
  };
}
