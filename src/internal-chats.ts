// Chats that pinclaw itself talks in, as opposed to chats a channel's users name. They live in
// channels of their own, so no user-chosen name (an MQTT chat session, a Telegram chat id) can ever
// equal one and borrow its rights in tools.controlChats or tools.overrides. A leaf module: the tool
// policy, the MQTT chat and Home Assistant all read it.

/** Home Assistant's switch commands run as this chat; tools.controlChats names it "homeassistant:commands". */
export const HA_CHANNEL = 'homeassistant';
export const HA_CHAT = 'commands';

/**
 * The name Home Assistant's commands had before they got their own channel: the MQTT chat's session
 * "homeassistant" shared it, so any publisher on chat/in could pose as Home Assistant. An owner's
 * existing "mqtt:homeassistant" keeps meaning Home Assistant (never the chat, which refuses that
 * session), and the gateway says to rename it.
 */
export const LEGACY_HA_CHANNEL = 'mqtt';
export const LEGACY_HA_CHAT = 'homeassistant';
