// What pinclaw reads of a /sync answer (the client-server API's shapes, only the fields used), and
// the rules on one message: is it addressed to the bot in a room of more than two, and its text
// without the mention. Pure functions, so every rule is tested without a homeserver.

export interface MatrixEvent {
  type: string;
  event_id?: string;
  sender: string;
  state_key?: string;
  origin_server_ts?: number;
  content: Record<string, unknown>;
}

export interface JoinedRoom {
  timeline?: { events?: MatrixEvent[] };
  state?: { events?: MatrixEvent[] };
  summary?: { 'm.joined_member_count'?: number };
}

export interface InvitedRoom {
  invite_state?: { events?: MatrixEvent[] };
}

export interface SyncResponse {
  next_batch: string;
  rooms?: { join?: Record<string, JoinedRoom>; invite?: Record<string, InvitedRoom> };
}

/** Who invited the bot: the sender of the m.room.member invite event about it. */
export function inviterOf(room: InvitedRoom, botId: string): string | undefined {
  return room.invite_state?.events?.find((e) => e.type === 'm.room.member' && e.state_key === botId && e.content.membership === 'invite')?.sender;
}

/** The room's state says it is end-to-end encrypted (in the state block or the timeline). */
export const announcesEncryption = (room: JoinedRoom) =>
  [...(room.state?.events ?? []), ...(room.timeline?.events ?? [])].some((e) => e.type === 'm.room.encryption' && e.state_key === '');

/** A membership changed in the room: the member count known for it is stale. */
export const membershipChanged = (room: JoinedRoom) =>
  [...(room.state?.events ?? []), ...(room.timeline?.events ?? [])].some((e) => e.type === 'm.room.member');

/** Text messages pinclaw answers: m.text, and m.emote/m.notice read as text (a bot's m.notice is skipped by the caller). */
export function messageBody(e: MatrixEvent): string | null {
  if (e.type !== 'm.room.message') return null;
  const type = e.content.msgtype;
  if (type !== 'm.text' && type !== 'm.emote') return null;
  // An edit (m.replace) is a new event carrying the old text's replacement: not a new message.
  const rel = e.content['m.relates_to'] as { rel_type?: string } | undefined;
  if (rel?.rel_type === 'm.replace') return null;
  return typeof e.content.body === 'string' ? e.content.body : null;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The text of a message in a room of more than two members when it is addressed to the bot, else
 * null. Addressed: the intentional mention (m.mentions.user_ids, Matrix 1.7), a pill to the bot in
 * the formatted body, or the body naming the bot's id, or starting with its display name or
 * localpart and a colon (what clients without pills send). The mention is taken out of the text.
 */
export function addressedText(e: MatrixEvent, body: string, botId: string, displayName: string | undefined): string | null {
  const localpart = botId.slice(1).split(':')[0] ?? '';
  const mentions = (e.content['m.mentions'] as { user_ids?: unknown } | undefined)?.user_ids;
  const formatted = typeof e.content.formatted_body === 'string' ? e.content.formatted_body : '';
  const names = [botId, ...(displayName ? [displayName] : []), localpart].filter(Boolean).map(escapeRe);
  const leading = new RegExp(`^\\s*@?(?:${names.join('|')})[:,]?\\s*`, 'i');
  const mentioned =
    (Array.isArray(mentions) && mentions.includes(botId)) ||
    formatted.includes(`matrix.to/#/${botId}`) ||
    formatted.includes(`matrix.to/#/${encodeURIComponent(botId)}`) ||
    body.includes(botId) ||
    new RegExp(`^\\s*@?(?:${names.join('|')})[:,]`, 'i').test(body);
  if (!mentioned) return null;
  return body.replace(leading, '').split(botId).join('').trim();
}
