// One /sync answer becomes what is committed with its next_batch token: each message of an allowed
// sender that is for the bot becomes a queued message (in a room of more than two members only when
// it mentions the bot), a stranger in a two-member room gets a pairing code, an encrypted room gets
// its one notice, and the invites of allowed users are joined (before the commit: a join is
// idempotent, an invite missed would not come again). Sessions: matrix:<room id>.
import type { Conductor } from '../../conductor/conductor.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { claimPrompt, isPaired, requestPairing } from '../../store/pairing.js';
import { approveCommand } from '../pairing-hint.js';
import { enc, MatrixApiError, type MatrixApi } from './api.js';
import { addressedText, announcesEncryption, inviterOf, membershipChanged, messageBody, type JoinedRoom, type SyncResponse } from './events.js';
import type { Rooms } from './rooms.js';

export type Commit = () => void;

export interface InboundOptions {
  db: Db;
  api: MatrixApi;
  conductor: Conductor;
  rooms: Rooms;
  botId: string;
  displayName: () => string | undefined;
  allowFrom: readonly string[];
  maxMessageChars: number;
  home?: string;
  signal: AbortSignal;
  /** a yes or no to a pending confirmation in that room; true when it was one (and is taken) */
  answer(roomId: string, text: string): boolean;
}

export const sessionKeyFor = (roomId: string) => `matrix:${roomId}`;

export const ENCRYPTED_NOTICE = 'This room is end-to-end encrypted; pinclaw cannot read it. Use an unencrypted room to talk to me (create a room with encryption off and invite me).';

export function createInbound(o: InboundOptions): (res: SyncResponse, first: boolean) => Promise<Commit> {
  const reply = (roomId: string, text: string, key: string) => o.conductor.send({ channel: 'matrix', chatId: roomId, text, idempotencyKey: key });
  const allowed = (userId: string) => o.allowFrom.includes(userId) || isPaired(o.db, 'matrix', userId);

  async function joinInvites(res: SyncResponse): Promise<void> {
    for (const [roomId, room] of Object.entries(res.rooms?.invite ?? {})) {
      const inviter = inviterOf(room, o.botId);
      if (!inviter || !allowed(inviter)) {
        log.info(`matrix: ignored an invite to ${roomId} from ${inviter ?? 'someone unknown'}: not in channels.matrix.allowFrom nor paired`);
        continue;
      }
      try {
        await o.api.call('POST', `/join/${enc(roomId)}`, {}, { signal: o.signal });
        log.info(`matrix: joined ${roomId} (invited by ${inviter})`);
      } catch (err) {
        // A refusal (the invite withdrawn, the room gone) is final; no answer is retried with the batch.
        if (err instanceof MatrixApiError && err.status >= 400 && err.status !== 429) log.warn(`matrix: could not join ${roomId}: ${errorMessage(err)}`);
        else throw err;
      }
    }
  }

  async function room(roomId: string, r: JoinedRoom, commits: Commit[]): Promise<void> {
    if (membershipChanged(r)) o.rooms.forgetMembers(roomId);
    const count = r.summary?.['m.joined_member_count'];
    if (typeof count === 'number') o.rooms.setMembers(roomId, count);
    const events = r.timeline?.events ?? [];
    const encrypted = announcesEncryption(r) || events.some((e) => e.type === 'm.room.encrypted' && e.sender !== o.botId);
    if (encrypted && !o.rooms.toldEncrypted(roomId)) {
      commits.push(() => {
        reply(roomId, ENCRYPTED_NOTICE, `encrypted:${roomId}`);
        o.rooms.markToldEncrypted(roomId);
      });
      log.warn(`matrix: ${roomId} is end-to-end encrypted; pinclaw cannot read it and said so there once`);
    }
    for (const e of events) {
      if (e.sender === o.botId) continue;
      const body = messageBody(e);
      if (body === null) continue;
      const members = await o.rooms.members(roomId, o.signal);
      const group = members > 2;
      const text = group ? addressedText(e, body, o.botId, o.displayName()) : body.trim();
      if (text === null) continue;
      const from = e.sender;
      const key = `${roomId}:${e.event_id ?? e.origin_server_ts}`;
      if (!allowed(from)) {
        // A stranger starts no turn. In a room of two they learn how to ask, at most once an hour; in a bigger room the bot stays quiet.
        if (group) continue;
        commits.push(() => {
          const pairing = requestPairing(o.db, 'matrix', from, from);
          if (!claimPrompt(o.db, pairing.id)) return;
          const approve = approveCommand(pairing.code, o.home);
          log.info(`matrix: ${from} asked to talk to the bot; to let them in: ${approve}`);
          reply(roomId, `I only talk to my owner. To let you in, my owner runs this on my machine:\n\n${approve}\n\n(The code is good for an hour.)`, `pairing:${pairing.id}:${pairing.code}`);
        });
        continue;
      }
      if (text === '') continue;
      commits.push(() => {
        if (o.answer(roomId, text)) return;
        if (text.length > o.maxMessageChars) {
          reply(roomId, `Your message has ${text.length} characters, more than the ${o.maxMessageChars} I accept (agent.maxMessageChars); please send it in smaller parts.`, `too-long:${key}`);
          return;
        }
        o.conductor.submit({ sessionKey: sessionKeyFor(roomId), channel: 'matrix', chatId: roomId, sender: from, text, meta: { eventId: e.event_id, group } });
      });
    }
  }

  return async (res, first) => {
    await joinInvites(res);
    const commits: Commit[] = [];
    // The position-taking first sync: what was written before pinclaw came is not answered.
    if (first) return () => {};
    for (const [roomId, r] of Object.entries(res.rooms?.join ?? {})) {
      try {
        await room(roomId, r, commits);
      } catch (err) {
        if (err instanceof MatrixApiError && (err.status === 0 || err.status === 429)) throw err; // no answer: the batch is taken again
        // One broken room must not stop the channel or come back forever: logged and passed.
        log.error(`matrix: the events of ${roomId} could not be handled and are skipped: ${errorMessage(err)}`);
      }
    }
    return () => {
      for (const c of commits) c();
    };
  };
}
