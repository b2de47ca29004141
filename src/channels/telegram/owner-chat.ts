// Onboarding's "message the bot now": learns the owner's Telegram chat id (for owner.notify) from
// the first private message the bot gets while onboarding waits, and answers it so the owner sees
// the bot works. An entry of the telegram lazy chunk, beside the Bot API client it uses; only
// `pinclaw onboard` loads it.
//
// Only messages sent while waiting count: updates already pending when the wait starts are passed
// over (a stranger who found the bot earlier must not become the owner). Waiting for new ones
// confirms them to Telegram, so a gateway started later does not get them: the wait says how many
// there were (onboarding normally runs before any gateway, when there are none).
import type { Update } from '@grammyjs/types';
import { telegramApi, TelegramError, type TelegramApi } from './api.js';
import { errorMessage } from '../../errors.js';

export interface OwnerChat {
  /** the private chat's id, as owner.notify takes it after "telegram:" */
  chatId: string;
  /** the sender's user id, for channels.telegram.allowFrom */
  userId: string;
  /** how the sender is called, for the confirmation line */
  name: string;
}

export interface WaitOptions {
  apiBaseUrl: string;
  token: string;
  say(line: string): void;
  /** aborted: the owner skipped (Enter) */
  signal?: AbortSignal;
  /** the longest wait; default 5 minutes */
  timeoutMs?: number;
  /** one long poll; default 10 s (also how often progress is shown) */
  pollSeconds?: number;
  api?: TelegramApi;
}

export type WaitResult = { found: OwnerChat } | { skipped: true } | { failed: string };

function fromUpdate(u: Update): OwnerChat | undefined {
  const m = u.message;
  if (!m || m.chat.type !== 'private' || !m.from || m.from.is_bot) return undefined;
  const name = m.from.username ? `@${m.from.username}` : [m.from.first_name, m.from.last_name].filter(Boolean).join(' ');
  return { chatId: String(m.chat.id), userId: String(m.from.id), name };
}

/** Why a Bot API failure stops the wait, in words that say what to do. */
function failure(err: unknown): string {
  if (err instanceof TelegramError && err.code === 401) return 'Telegram refused the bot token (401 Unauthorized): check it with @BotFather';
  if (err instanceof TelegramError && err.code === 409) return 'another program reads this bot\'s updates (a running pinclaw gateway?): stop it while onboarding waits, or give the chat id with --owner-chat ID';
  return `the Bot API could not be reached: ${errorMessage(err)}`;
}

/** Waits for the owner's first private message to the bot; bounded, skippable, never throws. */
export async function waitForOwnerChat(o: WaitOptions): Promise<WaitResult> {
  const api = o.api ?? telegramApi(o.apiBaseUrl, o.token);
  const timeoutMs = o.timeoutMs ?? 5 * 60_000;
  const pollSeconds = o.pollSeconds ?? 10;
  const deadline = Date.now() + timeoutMs;
  let offset: number;
  let bot: string;
  try {
    bot = (await api.getMe()).username;
    // The last pending update (offset -1) tells where the wait starts; earlier ones are passed over.
    // Telegram hands out at most 100 at a time: read on until none is left from before the wait.
    offset = 0;
    let passed = 0;
    for (;;) {
      const pending = await api.getUpdates(offset, 0, o.signal);
      if (!pending.length) break;
      passed += pending.length;
      offset = pending[pending.length - 1]!.update_id + 1;
    }
    if (passed) o.say(`  (${passed} earlier update${passed === 1 ? '' : 's'} to the bot, from before this wait, ${passed === 1 ? 'is' : 'are'} passed over)`);
  } catch (err) {
    if (o.signal?.aborted) return { skipped: true };
    return { failed: failure(err) };
  }
  o.say(`  Send any message to @${bot} from your own Telegram account now; waiting up to ${Math.round(timeoutMs / 1000)} s (Enter skips).`);
  while (!o.signal?.aborted) {
    const left = deadline - Date.now();
    if (left <= 0) return { failed: `no message reached @${bot} within ${Math.round(timeoutMs / 1000)} s` };
    let updates: Update[];
    try {
      updates = await api.getUpdates(offset, Math.max(1, Math.min(pollSeconds, Math.ceil(left / 1000))), o.signal);
    } catch (err) {
      if (o.signal?.aborted) break;
      return { failed: failure(err) };
    }
    for (const u of updates) {
      offset = Math.max(offset, u.update_id + 1);
      const found = fromUpdate(u);
      if (!found) continue;
      // Confirm the poll (so the message is not handed out again), then answer in that chat.
      await api.getUpdates(offset, 0).catch(() => undefined);
      await api.sendMessage({ chat_id: Number(found.chatId), text: `pinclaw: this chat (${found.chatId}) will get your notifications: door alerts, cron jobs and the heartbeat (owner.notify).` }).catch((err: unknown) => {
        o.say(`  (the confirmation could not be sent: ${errorMessage(err)})`);
      });
      return { found };
    }
    if (updates.length === 0 && !o.signal?.aborted) o.say(`  still waiting for a message to @${bot} (${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left; Enter skips)`);
  }
  return { skipped: true };
}
