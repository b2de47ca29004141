// HardwareTrigger: the owner's hooks see each message a hardware trigger (a GPIO edge, a sensor, a
// camera detection) is about to queue, and a block means no turn. The hook's decision is its audit row.
import { log } from '../log.js';
import type { NewInbound } from '../store/queue.js';
import type { Hooks } from './types.js';

/** `submit` behind the HardwareTrigger hooks; `submit` itself when there are none. */
export function gatedSubmit(submit: (m: NewInbound) => unknown, hooks: Hooks | undefined): (m: NewInbound) => unknown {
  if (!hooks?.has('HardwareTrigger')) return submit;
  return async (m) => {
    const v = await hooks.fire('HardwareTrigger', { sessionKey: m.sessionKey, channel: m.channel, chatId: m.chatId }, { text: m.text, trigger: m.meta?.trigger ?? null });
    if (v.block) {
      log.info(`hardware trigger for session ${m.sessionKey}: no turn, ${v.block.rule} blocked it (${v.block.reason})`);
      return undefined;
    }
    return submit(m);
  };
}
