// Where a job or the heartbeat can send its replies: the chat channels the gateway runs with this
// configuration. Shared by `cron add --deliver`, the cron tools and heartbeat.deliver.
import type { PinclawConfig } from '../config/schema.js';
import { MQTT_SESSION_NAME, MQTT_SESSION_RULE, reservedMqttSession } from '../mqtt-session-name.js';

/**
 * Channels a reply can be delivered to from a job: those with a chat at the other end. For MQTT the
 * chat is a session name: `mqtt:kitchen` is published on chat/out with "session": "kitchen", the
 * session key an MQTT chat message to "kitchen" has too.
 */
export function deliverableChannels(config: PinclawConfig): string[] {
  return [...(config.channels.telegram.token ? ['telegram'] : []), ...(config.channels.signal.url ? ['signal'] : []), ...(config.mqtt.url && config.mqtt.chat.enabled ? ['mqtt'] : [])];
}

/** "telegram:12345" → its parts; undefined when it is not CHANNEL:CHAT. */
export function splitTarget(text: string): { channel: string; chatId: string } | undefined {
  const i = text.indexOf(':');
  return i > 0 && i < text.length - 1 ? { channel: text.slice(0, i), chatId: text.slice(i + 1) } : undefined;
}

/** Why a channel cannot take replies here, naming what to set. */
export function undeliverable(channel: string, config: PinclawConfig): string {
  const why =
    channel === 'telegram'
      ? 'channel telegram is not set up (channels.telegram.token is unset)'
      : channel === 'signal'
        ? 'channel signal is not set up (channels.signal.url is unset)'
        : channel === 'mqtt'
          ? `channel mqtt is not set up (${config.mqtt.url ? 'mqtt.chat.enabled is false' : 'mqtt.url is unset'})`
          : `unknown channel '${channel}'`;
  return `${why}; channels it can deliver to: ${deliverableChannels(config).join(', ') || 'none'}`;
}

/** What is wrong with the chat part of a deliverable target, if anything. */
export function chatProblem(target: { channel: string; chatId: string }): string | undefined {
  if (target.channel === 'mqtt' && !MQTT_SESSION_NAME.test(target.chatId)) return `the MQTT session ${JSON.stringify(target.chatId)} must be ${MQTT_SESSION_RULE}`;
  if (target.channel === 'mqtt') return reservedMqttSession(target.chatId);
  // A Signal chat as its sessions name it (docs/channels.md): a number, uuid:<ACI>, or group.<id>.
  if (target.channel === 'signal' && !/^(\+\d{6,15}|uuid:[0-9a-fA-F-]{36}|group\.[A-Za-z0-9_-]+)$/.test(target.chatId)) return `the Signal chat ${JSON.stringify(target.chatId)} must be a number (+4915112345678), uuid:<ACI> or group.<id> (the chat of a signal: session)`;
  return undefined;
}

/** The word that sends a job's or the heartbeat's replies to the log even when owner.notify is set. */
export const LOG_TARGET = 'log';

/**
 * owner.notify as a chat: what a trigger, a job or the heartbeat that names no target reports to.
 * Undefined when unset or unusable (ownerNotifyProblem says why; the start checks refuse it).
 */
export function ownerTarget(config: PinclawConfig): { channel: string; chatId: string } | undefined {
  const text = config.owner.notify;
  if (text === undefined || text === '' || ownerNotifyProblem(config)) return undefined;
  return splitTarget(text);
}

/** What is wrong with owner.notify, naming the key and the way out; undefined when unset or good. */
export function ownerNotifyProblem(config: PinclawConfig): string | undefined {
  const text = config.owner.notify;
  if (text === undefined || text === '') return undefined;
  const target = splitTarget(text);
  if (!target) return `owner.notify: expected CHANNEL:CHAT such as telegram:12345, got '${text}' (pinclaw onboard learns your chat when you message the bot)`;
  if (!deliverableChannels(config).includes(target.channel)) return `owner.notify: ${undeliverable(target.channel, config)}`;
  const problem = chatProblem(target);
  return problem ? `owner.notify: ${problem}` : undefined;
}
