// The MQTT chat channel: `<base>/<node>/chat/in` takes `{"session","text"[,"id"]}` or plain text, and
// each reply goes out on `<base>/<node>/chat/out` as `{"session","text","inReplyTo","id"}` at QoS 1,
// through the durable queue like every channel. A message is committed to SQLite inside the link's
// handler, which runs before the broker gets its PUBACK: once the broker thinks we have it, we do.
// Bad input is not queued; the sender gets `{"session","error","inReplyTo"}` on chat/out instead.
import type { ChannelAdapter } from '../../conductor/conductor.js';
import type { Delivery } from '../../conductor/delivery.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { MQTT_SESSION_NAME as SESSION, MQTT_SESSION_RULE, reservedMqttSession } from '../../mqtt-session-name.js';
import type { Db } from '../../store/db.js';
import { inboundById, type InboundRow, type NewInbound, type OutboundRow } from '../../store/queue.js';
import { sql } from '../../store/statements.js';
import { admit, checkAllowFrom, sessionRefusal } from './access.js';
import type { MessageInfo, MqttLink, MqttSettings } from '../../mqtt/connection.js';

const MAX_ID_CHARS = 128;
/**
 * The largest text of one chat/out message, in characters (at most 4 UTF-8 bytes each: 256 KiB).
 * Brokers cap payloads (mosquitto's message_size_limit, small brokers on a NAS); a longer reply goes
 * out in parts that carry "part" and "parts", each part committed as delivered the moment it is sent.
 */
export const MAX_PART_CHARS = 64 * 1024;
/** How many of a session's latest messages a repeated `id` is looked for in. */
const DEDUPE_WINDOW = 1000;

type SenderId = string | number;

export interface ChatMessage {
  session: string;
  text: string;
  id?: SenderId;
  /** who says they sent it and their proof (access.ts judges them); absent in plain text */
  from?: unknown;
  token?: unknown;
}

/** What was wrong with a payload, with what is known of its session and id for the error reply. */
export interface ChatRefusal {
  error: string;
  session: string;
  id?: SenderId;
}

export interface MqttChat {
  channel: ChannelAdapter;
  /** Subscribes chat/in (call it before the link connects); returns the unsubscribe. */
  start(submit: (m: NewInbound) => InboundRow): () => void;
}

/** Strict UTF-8 text without control characters other than tab and line breaks, else undefined. */
function textOf(payload: Buffer): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(payload);
  } catch {
    return undefined;
  }
  // Valid UTF-8 can still be binary (a NUL-padded struct, an image header): refused the same way.
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

function idOf(v: unknown): { id?: SenderId; error?: string } {
  if (v === undefined || v === null) return {};
  if (typeof v === 'number' && Number.isFinite(v)) return { id: v };
  if (typeof v === 'string' && v.length > 0 && v.length <= MAX_ID_CHARS) return { id: v };
  return { error: `"id" must be a non-empty string of at most ${MAX_ID_CHARS} characters or a number, not ${JSON.stringify(v)?.slice(0, 80)}` };
}

function fromJson(raw: string, defaultSession: string): ChatMessage | ChatRefusal {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    return { error: `not JSON: ${errorMessage(err)}; send {"session":"...","text":"..."} or plain text that does not start with {`, session: defaultSession };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'not a JSON object; send {"session":"...","text":"..."}', session: defaultSession };
  const o = v as Record<string, unknown>;
  const { id, error: idError } = idOf(o.id);
  const echo = typeof o.session === 'string' ? o.session.slice(0, 64) : defaultSession;
  const refuse = (error: string): ChatRefusal => ({ error, session: echo, ...(id !== undefined ? { id } : {}) });
  if (idError) return refuse(idError);
  if (o.session !== undefined && (typeof o.session !== 'string' || !SESSION.test(o.session))) {
    return refuse(`"session" must be ${MQTT_SESSION_RULE}, not ${JSON.stringify(o.session)?.slice(0, 80)}`);
  }
  const reserved = typeof o.session === 'string' ? reservedMqttSession(o.session) : undefined;
  if (reserved) return refuse(`"session": ${reserved}`);
  if (typeof o.text !== 'string') return refuse(o.text === undefined ? 'no "text": send {"session":"...","text":"..."}' : `"text" must be a string, not ${typeof o.text}`);
  const text = o.text.trim();
  if (!text) return refuse('"text" is empty');
  return {
    session: typeof o.session === 'string' ? o.session : defaultSession, text, ...(id !== undefined ? { id } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}), ...(o.token !== undefined ? { token: o.token } : {}),
  };
}

/** A chat/in payload as a message, or what was wrong with it. */
export function parseChatPayload(payload: Buffer, defaultSession: string): ChatMessage | ChatRefusal {
  const raw = textOf(payload);
  if (raw === undefined) return { error: `not UTF-8 text (${payload.length} bytes of binary); send {"session":"...","text":"..."} or plain UTF-8 text`, session: defaultSession };
  const trimmed = raw.trim();
  if (trimmed.startsWith('{')) return fromJson(trimmed, defaultSession);
  if (!trimmed) return { error: 'empty message', session: defaultSession };
  return { session: defaultSession, text: trimmed };
}

const isRefusal = (p: ChatMessage | ChatRefusal): p is ChatRefusal => 'error' in p;

/**
 * Whether this message was queued already: its `id` among the session's latest messages, or (a QoS 1
 * redelivery without an id) the same text as the session's latest message. The broker sets dup when
 * it sends a message again whose PUBACK it did not get, which happens when the connection broke right
 * after our commit; a new message with the same text is not marked dup.
 */
function alreadyQueued(db: Db, sessionKey: string, sender: string, m: ChatMessage, dup: boolean): boolean {
  // Per sender: ids are chosen by each sender, and one must not be able to block another's.
  if (m.id !== undefined) {
    return sql(db, `select 1 from (select meta from inbound where session_key = ? and channel = 'mqtt' and sender = ? order by id desc limit ${DEDUPE_WINDOW})
      where json_extract(meta, '$.id') = ? limit 1`).get(sessionKey, sender, m.id) !== undefined;
  }
  if (!dup) return false;
  const last = sql(db, `select text from inbound where session_key = ? and channel = 'mqtt' and sender = ? order by id desc limit 1`).get(sessionKey, sender) as { text: string } | undefined;
  return last?.text === m.text;
}

/** Refusals per minute logged and answered one by one: whoever may publish on chat/in can send many. */
export const CHAT_REFUSALS_PER_MINUTE = 10;

/** The sender's id of the message a reply answers, else its inbound row id; null for a message not in reply. */
function inReplyTo(db: Db, inboundId: number | null): SenderId | null {
  if (inboundId === null) return null;
  const meta = inboundById(db, inboundId)?.meta;
  if (meta) {
    try {
      const id = (JSON.parse(meta) as { id?: unknown }).id;
      if (typeof id === 'string' || typeof id === 'number') return id;
    } catch {
      // a row written by something else: its own id still names it
    }
  }
  return inboundId;
}

/** The text in parts of at most MAX_PART_CHARS, never cutting a surrogate pair. */
export function chatParts(text: string, max = MAX_PART_CHARS): string[] {
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + max);
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts.length ? parts : [''];
}

/** mqtt.chat as the schema cannot check it: run by createMqttChat (the gateway exits 78 before it starts), by doctor, and by `config set` and `config validate` (src/setup/config-checks.ts). */
export function checkChatSettings(chat: MqttSettings['chat']): void {
  if (!SESSION.test(chat.session)) throw new ConfigError(`mqtt.chat.session: ${JSON.stringify(chat.session)} must be ${MQTT_SESSION_RULE}`);
  const reserved = reservedMqttSession(chat.session);
  if (reserved) throw new ConfigError(`mqtt.chat.session: ${reserved}`);
  checkAllowFrom(chat.allowFrom);
}

/** What of tools.* gives a chat rights of its own. */
export interface ChatRights {
  controlChats: readonly string[];
  overrides: readonly { channel?: string; chat?: string }[];
}

/** The MQTT sessions the tool settings give rights of their own: mqtt:NAME in tools.controlChats, a tools.overrides chat of channel mqtt. */
export function mqttSessionsWithRights(tools: ChatRights): Set<string> {
  const out = new Set<string>();
  for (const c of tools.controlChats) if (c.startsWith('mqtt:')) out.add(c.slice('mqtt:'.length));
  for (const x of tools.overrides) if (x.channel === 'mqtt' && x.chat !== undefined) out.add(x.chat);
  return out;
}

export function createMqttChat(o: { link: () => MqttLink; db: Db; settings: MqttSettings; tools: ChatRights; home?: string }): MqttChat {
  const defaultSession = o.settings.chat.session;
  checkChatSettings(o.settings.chat);
  const withRights = mqttSessionsWithRights(o.tools);
  const out = () => o.link().topic('chat/out');

  let minuteStart = 0;
  let refusedThisMinute = 0;
  function refuse(topic: string, r: ChatRefusal): void {
    const now = Date.now();
    if (now - minuteStart >= 60_000) {
      const untold = refusedThisMinute - CHAT_REFUSALS_PER_MINUTE;
      if (untold > 0) log.warn(`mqtt chat: ${untold} more refused messages on ${topic} within a minute were neither logged nor answered one by one`);
      minuteStart = now;
      refusedThisMinute = 0;
    }
    if (++refusedThisMinute > CHAT_REFUSALS_PER_MINUTE) {
      if (refusedThisMinute === CHAT_REFUSALS_PER_MINUTE + 1) log.warn(`mqtt chat: more than ${CHAT_REFUSALS_PER_MINUTE} refused messages on ${topic} within a minute; the rest of this minute are neither logged nor answered (the broker's ACLs decide who may publish on chat/in: docs/mqtt.md)`);
      return;
    }
    log.error(`mqtt chat: a message on ${topic} was refused: ${r.error}`);
    const body = JSON.stringify({ session: r.session, error: r.error, inReplyTo: r.id ?? null });
    // Best effort: the sender learns why when the broker is there; the refusal is in the log anyway.
    o.link().publish(out(), body, { qos: 1 }).catch((err: unknown) => log.warn(`mqtt chat: could not tell the sender on ${out()}: ${errorMessage(err)}`));
  }

  function onMessage(submit: (m: NewInbound) => InboundRow, topic: string, payload: Buffer, info: MessageInfo): void {
    // A retained message on chat/in is something left on the broker long ago, not someone talking now.
    if (info.retain) return log.debug(`mqtt chat: ignored a retained message on ${topic}`);
    const p = parseChatPayload(payload, defaultSession);
    if (isRefusal(p)) return refuse(topic, p);
    const who = admit(o.db, o.settings.chat.allowFrom, p.from, p.token, Date.now(), o.home);
    if (!who.ok) {
      if (who.pairing) log.info(`mqtt chat: sender ${who.pairing.label ?? '?'} asked to talk; pairing code ${who.pairing.code}`);
      return refuse(topic, { error: who.error, session: p.session, ...(p.id !== undefined ? { id: p.id } : {}) });
    }
    const notHere = sessionRefusal(o.settings.chat.allowFrom, who.sender, who.rule, p.session, withRights);
    if (notHere) return refuse(topic, { error: notHere, session: p.session, ...(p.id !== undefined ? { id: p.id } : {}) });
    const sessionKey = `mqtt:${p.session}`;
    if (alreadyQueued(o.db, sessionKey, who.sender, p, info.dup)) {
      return log.info(`mqtt chat: a message to ${sessionKey}${p.id !== undefined ? ` with id ${JSON.stringify(p.id)}` : ''} arrived again; queued once`);
    }
    try {
      // The token stays out of the row: only the text, who sent it and how they were admitted.
      submit({ sessionKey, channel: 'mqtt', chatId: p.session, sender: who.sender, text: p.text, meta: { ...(p.id !== undefined ? { id: p.id } : {}), topic, from: who.sender, admittedBy: who.rule } });
    } catch (err) {
      refuse(topic, { error: errorMessage(err), session: p.session, ...(p.id !== undefined ? { id: p.id } : {}) });
    }
  }

  async function send(row: OutboundRow, delivery: Delivery): Promise<void> {
    const link = o.link();
    const parts = chatParts(row.text);
    const replyTo = inReplyTo(o.db, row.inbound_id);
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      const many = parts.length > 1;
      const body = {
        session: row.chat_id,
        text: parts[i],
        inReplyTo: replyTo,
        // The receiver drops a message whose id it has seen: a retry after a lost PUBACK repeats it.
        id: many ? `${row.idempotency_key}#${i + 1}` : row.idempotency_key,
        kind: row.kind,
        ...(many ? { part: i + 1, parts: parts.length } : {}),
      };
      await link.publish(out(), JSON.stringify(body), { qos: 1 });
      if (many) delivery.partSent(String(i + 1));
    }
  }

  return {
    channel: { name: 'mqtt', debounceMs: o.settings.chat.debounceMs, send },
    start(submit) {
      const link = o.link();
      return link.subscribe(link.topic('chat/in'), (topic, payload, info) => onMessage(submit, topic, payload, info));
    },
  };
}
