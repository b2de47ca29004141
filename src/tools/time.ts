// current_time: the model knows the date from its prompt (day granularity, to keep the prompt
// cacheable) but not the time of day mid-turn, nor the time in another zone.
import type { Tool } from './types.js';

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function currentTimeTool(opts: { timezone?: string; now?: () => Date } = {}): Tool {
  return {
    name: 'current_time',
    readOnly: true,
    description: 'The current date and time, in the configured time zone or an IANA zone you name (e.g. "Europe/Berlin").',
    inputSchema: {
      type: 'object',
      properties: { timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone; default: the configured one' } },
      additionalProperties: false,
    },
    async execute(input) {
      const { timezone } = input as { timezone?: string };
      const zone = timezone ?? opts.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
      if (!validZone(zone)) return { content: `unknown time zone '${zone}'; use an IANA name such as "Europe/Berlin"`, isError: true };
      const now = opts.now?.() ?? new Date();
      const local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' }).format(now);
      return { content: `${local} (${zone})\nISO 8601 UTC: ${now.toISOString()}` };
    },
  };
}
