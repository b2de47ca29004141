// current_time: the model knows the date from its prompt (day granularity, to keep the prompt
// cacheable) but not the time of day mid-turn, nor the time in another zone.
// The host's zone is formatted without ICU (src/local-time.ts says why).
import { dateTimeText, knownZone, systemZone } from '../local-time.js';
import { defineTool } from './define.js';
import type { Tool } from './types.js';

export function currentTimeTool(opts: { timezone?: string; now?: () => Date } = {}): Tool {
  return defineTool({
    name: 'current_time',
    readOnly: true,
    description: 'The current date and time, in the configured time zone or an IANA zone you name (e.g. "Europe/Berlin").',
    inputSchema: {
      type: 'object',
      properties: { timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone; default: the configured one' } },
      additionalProperties: false,
    },
    async execute(input) {
      const { timezone } = input;
      const zone = timezone ?? opts.timezone ?? systemZone();
      if (!knownZone(zone)) return { content: `unknown time zone '${zone}'; use an IANA name such as "Europe/Berlin"`, isError: true };
      const now = opts.now?.() ?? new Date();
      return { content: `${dateTimeText(now, zone)} (${zone})\nISO 8601 UTC: ${now.toISOString()}` };
    },
  });
}
