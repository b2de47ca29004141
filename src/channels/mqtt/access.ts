// Who the MQTT chat answers. A broker does not tell a subscriber who published a message: MQTT 5
// forwards neither the publisher's client id nor its user name, and user properties are whatever the
// publisher wrote. So a sender proves itself with a token in the payload: `"from"` names it and
// `"token"` is its secret, compared in constant time with the one in mqtt.chat.allowFrom. A sender
// not listed gets a pairing request bound to its name and token (a hash of them, never the token),
// which the owner approves with `pinclaw pairing approve CODE`, as a stranger on Telegram does.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../../errors.js';
import { MQTT_SESSION_NAME, MQTT_SESSION_RULE, reservedMqttSession } from '../../mqtt-session-name.js';
import type { Db } from '../../store/db.js';
import { claimPrompt, isPaired, pendingPairings, requestPairing, type Pairing } from '../../store/pairing.js';
import { approveCommand } from '../pairing-hint.js';

/** A sender's name: kept short and plain, it lands in the session's sender column and in log lines. */
export const SENDER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
export const SENDER_NAME_RULE = '1-64 letters, digits or _ . @ -';
/** A token must be hard to guess: anyone who may publish on chat/in can try tokens. */
export const MIN_TOKEN_CHARS = 16;
const MAX_TOKEN_CHARS = 512;
/** Pending MQTT pairing requests past which a new stranger is refused until the owner answers or they expire. */
export const MAX_PENDING_MQTT_PAIRINGS = 16;

export interface AllowedSender {
  name?: string;
  token?: string;
  /** the sessions this sender may talk in (absent: any session no entry lists and without rights of its own) */
  sessions?: string[];
}

export type Admission =
  | { ok: true; sender: string; rule: 'mqtt.chat.allowFrom' | 'pairing' }
  | { ok: false; error: string; pairing?: Pairing };

const HOW = 'send {"from":"NAME","token":"TOKEN","session":"...","text":"..."} with a name and token listed in mqtt.chat.allowFrom, or any name and a token of your own to ask the owner for pairing (docs/mqtt.md)';

/** mqtt.chat.allowFrom as the schema cannot check it: names and tokens present, names unique, tokens long enough. */
export function checkAllowFrom(list: readonly AllowedSender[]): void {
  const seen = new Set<string>();
  list.forEach((e, i) => {
    const at = `mqtt.chat.allowFrom[${i}]`;
    if (!e.name || !SENDER_NAME.test(e.name)) throw new ConfigError(`${at}.name: ${JSON.stringify(e.name ?? null)} must be ${SENDER_NAME_RULE}`);
    if (seen.has(e.name)) throw new ConfigError(`${at}.name: ${e.name} is listed twice; each sender has one token`);
    seen.add(e.name);
    if (!e.token || e.token.length < MIN_TOKEN_CHARS) {
      throw new ConfigError(`${at}.token: required, at least ${MIN_TOKEN_CHARS} characters (make one with: openssl rand -hex 16)`);
    }
    e.sessions?.forEach((name, j) => {
      if (!MQTT_SESSION_NAME.test(name)) throw new ConfigError(`${at}.sessions[${j}]: ${JSON.stringify(name)} must be ${MQTT_SESSION_RULE}`);
      const reserved = reservedMqttSession(name);
      if (reserved) throw new ConfigError(`${at}.sessions[${j}]: ${reserved}`);
    });
    if (e.sessions && !e.sessions.length) throw new ConfigError(`${at}.sessions: empty, so ${e.name} could talk nowhere; list its sessions or remove the key to let it use any open session`);
  });
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Equal digests in constant time: the time taken tells nothing of how much of a guess was right. */
function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The pairing subject of a sender: its name and a hash of its token, so an approval admits that token only. */
export function pairingSubject(from: string, token: string): string {
  return `${from}#${digest(`pinclaw-mqtt-chat\n${token}`).toString('hex').slice(0, 32)}`;
}

/** Whether this message's sender may talk, or why not (with a pairing request for a stranger). */
export function admit(db: Db, allowFrom: readonly AllowedSender[], from: unknown, token: unknown, now = Date.now(), home?: string): Admission {
  if (from === undefined || token === undefined) return { ok: false, error: `the MQTT chat answers only senders that say who they are: ${HOW}` };
  if (typeof from !== 'string' || !SENDER_NAME.test(from)) return { ok: false, error: `"from" must be ${SENDER_NAME_RULE}` };
  if (typeof token !== 'string' || token.length < MIN_TOKEN_CHARS || token.length > MAX_TOKEN_CHARS) {
    return { ok: false, error: `"token" must be ${MIN_TOKEN_CHARS}-${MAX_TOKEN_CHARS} characters (make one with: openssl rand -hex 16)` };
  }
  const listed = allowFrom.find((e) => e.name === from);
  if (listed) {
    // A listed name never falls back to pairing: a wrong token for it is simply wrong.
    if (listed.token && sameToken(listed.token, token)) return { ok: true, sender: from, rule: 'mqtt.chat.allowFrom' };
    return { ok: false, error: `the token of sender ${from} does not match its entry in mqtt.chat.allowFrom` };
  }
  const subject = pairingSubject(from, token);
  if (isPaired(db, 'mqtt', subject)) return { ok: true, sender: from, rule: 'pairing' };
  const waiting = pendingPairings(db, 'mqtt', now);
  if (!waiting.some((p) => p.subject === subject) && waiting.length >= MAX_PENDING_MQTT_PAIRINGS) {
    return { ok: false, error: `sender ${from} is not in mqtt.chat.allowFrom, and ${waiting.length} MQTT pairing requests already wait for the owner (pinclaw pairing list); try again after they are approved or expire (an hour)` };
  }
  const pairing = requestPairing(db, 'mqtt', subject, from, now);
  if (!claimPrompt(db, pairing.id, undefined, now)) {
    return { ok: false, error: `sender ${from} is not in mqtt.chat.allowFrom; its pairing request waits for the owner (pinclaw pairing list)` };
  }
  return {
    ok: false,
    pairing,
    error: `sender ${from} is not in mqtt.chat.allowFrom. To let it in, the owner runs on the gateway's machine: ${approveCommand(pairing.code, home)} (the code is good for an hour; later messages must carry the same token)`,
  };
}

/**
 * Whether an admitted sender may talk in this session, or why not. Any sender may name any session,
 * so a session is tied to senders: one listed in an allowFrom entry's `sessions` belongs to the
 * entries that list it, an entry with `sessions` talks only there, and a session with rights of its
 * own (`withRights`: mqtt:NAME in tools.controlChats or a tools.overrides chat) needs such a listing:
 * otherwise whoever was admitted for "kitchen" could write to "owner-room" and act with its rights.
 */
export function sessionRefusal(allowFrom: readonly AllowedSender[], sender: string, rule: 'mqtt.chat.allowFrom' | 'pairing', session: string, withRights: ReadonlySet<string>): string | undefined {
  const index = rule === 'mqtt.chat.allowFrom' ? allowFrom.findIndex((e) => e.name === sender) : -1;
  const own = index >= 0 ? allowFrom[index]?.sessions : undefined;
  if (own) {
    if (own.includes(session)) return undefined;
    return `sender ${sender} may talk only in ${own.map((x) => JSON.stringify(x)).join(', ')} (mqtt.chat.allowFrom[${index}].sessions), not in ${JSON.stringify(session)}; the owner adds it there to allow it`;
  }
  const where = index >= 0 ? `mqtt.chat.allowFrom[${index}].sessions` : `a mqtt.chat.allowFrom entry's "sessions" (a paired sender has none: the owner lists ${sender} with a token in mqtt.chat.allowFrom)`;
  if (allowFrom.some((e) => e.sessions?.includes(session))) {
    return `the session ${JSON.stringify(session)} belongs to the senders whose mqtt.chat.allowFrom entry lists it; for ${sender} to talk there, the owner adds it to ${where}`;
  }
  if (withRights.has(session)) {
    return `the session ${JSON.stringify(session)} has rights of its own (mqtt:${session} in tools.controlChats or a tools.overrides chat), so only a sender whose mqtt.chat.allowFrom entry lists it in "sessions" may talk there; for ${sender}, the owner adds it to ${where}`;
  }
  return undefined;
}
