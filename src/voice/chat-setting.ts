// Whether a chat gets its replies also as voice notes (/voice on|off): one row per chat in the
// state table, so it outlives restarts. Read for every reply, hence outside the voice chunk: a chat
// without voice never loads it.
import type { Db } from '../store/db.js';
import { getState, setState } from '../store/state.js';

const key = (channel: string, chatId: string) => `voice.replies:${channel}:${chatId}`;

export function voiceRepliesOn(db: Db, channel: string, chatId: string): boolean {
  return getState(db, key(channel, chatId)) === 'on';
}

export function setVoiceReplies(db: Db, channel: string, chatId: string, on: boolean): void {
  setState(db, key(channel, chatId), on ? 'on' : 'off');
}
