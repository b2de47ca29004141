// The GPIO tools and board_info. gpio_write is a physical action: it runs one call at a time, its
// result carries the line's value before and after (the audit row keeps them), and lines listed in
// hardware.confirm ask the owner first — in any chat, also the owner's own.
import type { Tool, ToolContext, ToolResult } from '../../tools/types.js';
import { GpioError } from './errors.js';
import type { GpioService } from './service.js';
import type { EdgeEvent } from './types.js';
import { defineTool } from '../../tools/define.js';

export interface GpioToolDeps {
  /** absent when GPIO cannot run here: the tools are then listed as unavailable with `unavailable` */
  gpio: GpioService | undefined;
  /** why there is no GPIO service, with the fix (gpio/availability.ts) */
  unavailable?: string;
  /** hardware.confirm: line names whose writes need the owner's yes */
  confirm: readonly string[];
  /** board_info's text (board, reservations, chips); computed by the caller */
  boardInfo: () => string;
}

const LINE = { type: 'string', minLength: 1, maxLength: 80, description: 'a hardware.lines name (garage_relay), a board line (GPIO17), chip:offset (gpiochip0:17) or a kernel line name' } as const;
const MAX_WATCH_SECONDS = 300;

function refused(err: unknown): ToolResult {
  if (err instanceof GpioError) return { content: err.message, isError: true };
  throw err;
}

function edgeText(e: EdgeEvent, first: bigint): string {
  const ms = Number(e.timestampNs - first) / 1e6;
  return `${e.edge} at +${ms.toFixed(3)} ms (seq ${e.lineSeqno})`;
}

export function gpioTools(d: GpioToolDeps): Tool[] {
  const why = d.gpio ? undefined : (d.unavailable ?? 'no GPIO chip on this machine');
  // The registry answers `why` before execute runs; this only keeps a direct execute honest.
  const gpio: GpioService = d.gpio ?? new Proxy({} as GpioService, {
    get() {
      throw new GpioError(`GPIO cannot run on this machine: ${why}`, { code: 'ENODEV', device: 'gpio' });
    },
  });
  const read: Tool = defineTool({
    name: 'gpio_read',
    description: 'Read the level of one GPIO line (1 = active, after activeLow). Does not change the line.',
    inputSchema: { type: 'object', properties: { line: LINE }, required: ['line'], additionalProperties: false },
    sequential: true,
    async execute(input) {
      const { line } = input;
      try {
        const r = gpio.read(line);
        return { content: `${r.line}: ${r.value} (${r.direction}${r.held ? ', held by pinclaw' : ''})` };
      } catch (err) {
        return refused(err);
      }
    },
  });

  const write: Tool = defineTool({
    name: 'gpio_write',
    description: 'Drive one GPIO line to 1 (active) or 0 (inactive). The line stays driven until pinclaw stops. Checked against the board profile (reserved lines are refused) and rate-limited per line.',
    inputSchema: {
      type: 'object',
      properties: { line: LINE, value: { type: 'integer', enum: [0, 1], description: '1 = active, 0 = inactive (after activeLow)' } },
      required: ['line', 'value'],
      additionalProperties: false,
    },
    sequential: true,
    physical: true,
    async execute(input, ctx: ToolContext) {
      const { line, value } = input;
      try {
        const r = gpio.resolve(line);
        const name = r.named?.name ?? line;
        if (d.confirm.includes(name)) {
          if (!ctx.confirm) return { content: `gpio_write to ${r.display} refused: hardware.confirm asks the owner first, and channel ${ctx.channel} cannot ask`, isError: true };
          const yes = await ctx.confirm({ tool: 'gpio_write', input, summary: `gpio_write ${r.display} = ${value}`, channel: ctx.channel, chatId: ctx.chatId });
          if (!yes) return { content: `gpio_write to ${r.display} refused: the owner said no (hardware.confirm)`, isError: true };
        }
        const w = gpio.write(line, value);
        return {
          content: `${w.line}: ${w.before ?? '?'} -> ${w.after}${w.after !== value ? ` (the line reads ${w.after}, not ${value}: something else drives it or it is not connected)` : ''}`,
          physical: { device: w.line, before: w.before, after: w.after, ...(w.released !== undefined ? { released: w.released } : {}) },
        };
      } catch (err) {
        return refused(err);
      }
    },
  });

  const watch: Tool = defineTool({
    name: 'gpio_watch',
    description: `Wait up to \`seconds\` (at most ${MAX_WATCH_SECONDS}) for edges on a GPIO input line and return them with their timing. Use hardware triggers for lasting watches.`,
    inputSchema: {
      type: 'object',
      properties: {
        line: LINE,
        edge: { type: 'string', enum: ['rising', 'falling', 'both'], description: 'default both' },
        seconds: { type: 'number', minimum: 0.01, maximum: MAX_WATCH_SECONDS },
        maxEvents: { type: 'integer', minimum: 1, maximum: 1000, description: 'return as soon as this many edges came (default 100)' },
      },
      required: ['line', 'seconds'],
      additionalProperties: false,
    },
    timeoutMs: (MAX_WATCH_SECONDS + 10) * 1000,
    async execute(input, ctx) {
      const { line, edge = 'both', seconds, maxEvents = 100 } = input;
      try {
        const events = await gpio.collectEdges(line, edge, seconds * 1000, ctx.signal, maxEvents);
        const shown = gpio.resolve(line).display;
        if (!events.length) return { content: `${shown}: no ${edge === 'both' ? '' : `${edge} `}edge in ${seconds} s` };
        const first = events[0]!.timestampNs;
        return { content: `${shown}: ${events.length} edge${events.length === 1 ? '' : 's'}${events.length >= maxEvents ? ` (stopped at maxEvents ${maxEvents})` : ''}\n${events.map((e) => edgeText(e, first)).join('\n')}` };
      } catch (err) {
        return refused(err);
      }
    },
  });

  return why === undefined ? [read, write, watch] : [read, write, watch].map((t) => ({ ...t, unavailable: () => why }));
}

export function boardInfoTool(text: () => string): Tool {
  return defineTool({
    name: 'board_info',
    readOnly: true,
    description: 'What board pinclaw runs on and has attached: the profile, its reserved lines as they are now, GPIO chips, I2C buses, lines pinclaw holds.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    async execute() {
      return { content: text() };
    },
  });
}
