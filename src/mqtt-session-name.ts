// What an MQTT chat session name may be: shared by the MQTT chat (src/channels/mqtt/chat.ts), which
// refuses other names on chat/in, and by the scheduler, whose `--deliver mqtt:NAME` must name a
// session the chat can also be written to. A leaf, so neither depends on the other.

/** A session name becomes part of a session key (`mqtt:<session>`) and of log lines: kept short and plain. */
export const MQTT_SESSION_NAME = /^[A-Za-z0-9_.:@-]{1,64}$/;

export const MQTT_SESSION_RULE = '1-64 letters, digits or _ . : @ -';
