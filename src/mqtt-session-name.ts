// What an MQTT chat session name may be: shared by the MQTT chat (src/channels/mqtt/chat.ts), which
// refuses other names on chat/in, and by the scheduler, whose `--deliver mqtt:NAME` must name a
// session the chat can also be written to. A leaf, so neither depends on the other.

/** A session name becomes part of a session key (`mqtt:<session>`) and of log lines: kept short and plain. */
export const MQTT_SESSION_NAME = /^[A-Za-z0-9_.:@-]{1,64}$/;

export const MQTT_SESSION_RULE = '1-64 letters, digits or _ . : @ -';

/**
 * Session names no MQTT chat may use. `homeassistant` was the chat id of Home Assistant's commands
 * before they got their own channel (`homeassistant:commands`), and an old `mqtt:homeassistant` in
 * tools.controlChats still means those commands: a chat of that name would get their rights.
 */
const RESERVED = new Set(['homeassistant']);

/** Why this session name is reserved, or undefined when a chat may use it. */
export function reservedMqttSession(name: string): string | undefined {
  if (!RESERVED.has(name.toLowerCase())) return undefined;
  return `the session name ${JSON.stringify(name)} is reserved (it named Home Assistant's commands, which tools.controlChats may still grant rights as mqtt:homeassistant); choose another`;
}
