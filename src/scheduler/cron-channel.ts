// The 'cron' channel: where the replies of jobs without --deliver go. Nobody waits for them in a
// chat, so they are logged (the journal keeps what the agent made of "check the backups at 3"), and
// `pinclaw cron list|runs` shows them from the run log. Like the hardware channel it has no confirm:
// a tool that needs the owner's yes is refused in a job's turn, since nobody is there to say it.
import type { ChannelAdapter } from '../conductor/conductor.js';
import { log as defaultLog, type Logger } from '../log.js';
import type { OutboundRow } from '../store/queue.js';
import { CRON_CHANNEL } from './jobs.js';

/** A reply longer than this is cut in the log: one journal line, not pages of it. */
const MAX_LOGGED_CHARS = 2000;

export function oneLine(text: string, max = MAX_LOGGED_CHARS): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
  return flat.length > max ? `${flat.slice(0, max)}… (${flat.length} characters)` : flat;
}

export function cronChannel(opts: { log?: Pick<Logger, 'info' | 'warn'> } = {}): ChannelAdapter {
  const log = opts.log ?? defaultLog;
  return {
    name: CRON_CHANNEL,
    // One message per run: nothing to coalesce, no reason to wait.
    debounceMs: 0,
    async send(o: OutboundRow) {
      // The chat id of a logged job is its id.
      const line = `cron job ${o.chat_id} (session ${o.session_key}) ${o.kind === 'notice' ? 'could not be answered' : 'replied'}: ${oneLine(o.text)}`;
      if (o.kind === 'notice') log.warn(line);
      else log.info(line);
    },
  };
}
