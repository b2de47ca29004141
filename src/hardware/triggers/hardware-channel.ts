// The 'hardware' channel: where the turns started by hardware triggers are answered when their
// session is not a chat. Such a reply has nobody to go to (the agent reaches its owner with
// send_message), so it is logged, which keeps it in the journal for whoever wonders what the agent
// made of the doorbell. It has no confirm: a tool that needs the owner's yes is refused in a trigger
// turn, because nobody is there to say it, and an edge on a wire must not be able to open a lock.
import type { ChannelAdapter } from '../../conductor/conductor.js';
import { log as defaultLog, type Logger } from '../../log.js';
import type { OutboundRow } from '../../store/queue.js';

export const HARDWARE_CHANNEL = 'hardware';

/** A reply longer than this is cut in the log: one journal line, not pages of it. */
const MAX_LOGGED_CHARS = 2000;

export interface HardwareChannelOptions {
  log?: Pick<Logger, 'info' | 'warn'>;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
  return flat.length > MAX_LOGGED_CHARS ? `${flat.slice(0, MAX_LOGGED_CHARS)}… (${flat.length} characters)` : flat;
}

export function hardwareChannel(opts: HardwareChannelOptions = {}): ChannelAdapter {
  const log = opts.log ?? defaultLog;
  return {
    name: HARDWARE_CHANNEL,
    // Trigger messages are already filtered and rate-limited; waiting to coalesce them would only delay the turn.
    debounceMs: 0,
    async send(o: OutboundRow) {
      // A notice says a turn failed (the provider was unreachable): worth a warning, not an info line.
      const line = `hardware trigger turn in session ${o.session_key} ${o.kind === 'notice' ? 'could not be answered' : 'replied'}: ${oneLine(o.text)}`;
      if (o.kind === 'notice') log.warn(line);
      else log.info(line);
    },
  };
}
