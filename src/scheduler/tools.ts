// cron_add, cron_list, cron_remove, cron_pause, cron_resume: the scheduler as the model uses it
// ("remind me every morning at 9"). A job added in a chat answers in that chat and its session by
// default; one that delivers to another chat, or changing a job of another chat, is allowed only
// from a control chat (policy reads targetChat, as for send_message). The gateway's scheduler
// picks a change up at once, any other process's at its next look.
//
// Only the declarations are here: what the tools do is in the lazy chunk 'scheduler'
// (src/scheduler/cron-actions.ts), loaded by the first call.
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { Db } from '../store/db.js';
import { getJob } from './jobs.js';
import { splitTarget } from './targets.js';
import type { CronActionDeps } from './cron-actions.js';
import type { Tool, ToolResult } from '../tools/types.js';
import { defineTool } from '../tools/define.js';

export interface CronToolOptions {
  db: Db;
  config: PinclawConfig;
  now?: () => number;
}

const idSchema = {
  type: 'object' as const,
  properties: { id: { type: 'integer' as const, minimum: 1, description: 'the job id (cron_list)' } },
  required: ['id'],
  additionalProperties: false,
};

export function cronTools(o: CronToolOptions): Tool[] {
  const clock = o.now ?? Date.now;
  const deps = (): CronActionDeps => ({ db: o.db, config: o.config, now: clock() });
  const act = async (name: string, fn: (a: typeof import('./cron-actions.js')) => string | Promise<string>): Promise<ToolResult> => {
    try {
      return { content: await fn(await import('./cron-actions.js')) };
    } catch (err) {
      // Bad input and a missing job are the model's to fix; both are said in words.
      return { content: `${name}: ${errorMessage(err)}`, isError: true };
    }
  };
  /** The chat a job answers in, for policy: changing another chat's job needs a control chat. */
  const jobChat = ({ id }: { id: number }) => {
    const job = getJob(o.db, id);
    return job ? { channel: job.channel, chatId: job.chat_id } : undefined;
  };
  const idOf = (input: { id: number }) => input.id;

  return [
    defineTool({
      name: 'cron_add',
      description:
        'Schedule a message to yourself: at a cron time ("0 9 * * 1-5"), every interval ("2h"), or once at a time ("2026-03-01T09:00", or "20m" from now). ' +
        'Each run is a turn with that message; its answer goes to this chat (or to deliver, another chat, allowed from a control chat). Give exactly one of cron, every, at.',
      inputSchema: {
        type: 'object',
        properties: {
          cron: { type: 'string', minLength: 1, maxLength: 200, description: 'cron expression: minute hour day-of-month month day-of-week (an optional seconds field first)' },
          every: { type: 'string', minLength: 1, maxLength: 40, description: 'interval such as 30m, 2h, 1d' },
          at: { type: 'string', minLength: 1, maxLength: 40, description: 'one time: ISO date and time (in tz, or with Z or an offset), or a duration from now such as 20m' },
          message: { type: 'string', minLength: 1, maxLength: 8000, description: 'what you will be told at each run, e.g. "remind the owner to water the plants"' },
          tz: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone of cron and at (default: the configured one)' },
          deliver: { type: 'string', minLength: 3, maxLength: 300, description: 'CHANNEL:CHAT that gets the answers, e.g. telegram:12345 or mqtt:kitchen; default: this chat' },
        },
        required: ['message'],
        additionalProperties: false,
      },
      targetChat: ({ deliver }) => (deliver === undefined ? undefined : splitTarget(deliver)),
      execute: (input, ctx) => act('cron_add', (a) => a.cronAdd(deps(), input, ctx)),
    }),
    defineTool({
      name: 'cron_list',
      readOnly: true,
      description: 'The scheduled jobs: schedule, state, next and last run (with its outcome), where answers go, message.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => act('cron_list', (a) => a.cronList(deps())),
    }),
    defineTool({
      name: 'cron_remove',
      description: 'Delete a scheduled job and its run log.',
      inputSchema: idSchema,
      targetChat: jobChat,
      execute: (input) => act('cron_remove', (a) => a.cronRemove(deps(), idOf(input))),
    }),
    defineTool({
      name: 'cron_pause',
      description: 'Pause a scheduled job: it stays listed and runs no more until cron_resume.',
      inputSchema: idSchema,
      targetChat: jobChat,
      execute: (input) => act('cron_pause', (a) => a.cronPause(deps(), idOf(input))),
    }),
    defineTool({
      name: 'cron_resume',
      description: 'Resume a paused job from now on (times that passed while it was paused are not made up).',
      inputSchema: idSchema,
      targetChat: jobChat,
      execute: (input) => act('cron_resume', (a) => a.cronResume(deps(), idOf(input))),
    }),
  ];
}
