// What the dashboard reads and acts on that the store does not hold, connected to the running
// gateway's parts: the channels' states, the MCP servers, the memory's search, the board and its
// held lines, and for the admin views the config, the governed tool path, the confirmations, the
// conductor and the recent log.
import { HttpError } from '../channels/http/io.js';
import type { ChannelState, DashboardSources } from '../channels/http/dashboard-api.js';
import type { AdminSources } from '../channels/http/admin/sources.js';
import type { Confirmations } from '../channels/http/confirmations.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Conductor } from '../conductor/conductor.js';
import { recentLog } from '../log.js';
import { memoryInputError, type MemoryHolder } from '../memory/holder.js';
import type { Registry } from '../tools/registry.js';
import type { ProcessContext } from './context.js';
import type { HardwareRuntime } from './hardware.js';

export interface DashboardParts {
  ctx: ProcessContext;
  config: PinclawConfig;
  startedAt: number;
  hardware: HardwareRuntime;
  memory: MemoryHolder;
  tools: Registry;
  conductor: Conductor;
  confirmations: Confirmations;
  /** the names of the channels this gateway serves */
  channels: readonly string[];
  channelStatus: () => ChannelState[];
  mcp?: DashboardSources['mcp'];
  checkConfigSet: AdminSources['checkConfigSet'];
}

export function dashboardOptions(p: DashboardParts): DashboardSources {
  const { hardware } = p;
  return {
    startedAt: p.startedAt,
    channels: p.channelStatus,
    ...(p.mcp ? { mcp: p.mcp } : {}),
    memorySearch: async (q, limit) => {
      try {
        return await (await p.memory.get()).search(q, { limit });
      } catch (err) {
        const input = await memoryInputError(err);
        throw input ? new HttpError(400, input.message) : err;
      }
    },
    board:
      hardware.gpio || hardware.promptText !== undefined
        ? async () => ({
            info: (await hardware.tools.find((t) => t.name === 'board_info')?.execute({}, { sessionKey: 'dashboard', channel: 'http', chatId: 'dashboard' }))?.content ?? null,
            held: hardware.gpio?.held() ?? [],
          })
        : undefined,
    admin: {
      config: p.config,
      paths: p.ctx.paths,
      env: p.ctx.env,
      callTool: (call, toolCtx) => p.tools.call(call, toolCtx),
      // The Home view's questions: shown there and answered by POST /api/confirm.
      confirm: (chatId, request) => p.confirmations.ask(chatId, request),
      gpio: hardware.gpio,
      channels: p.channels,
      submit: (msg) => p.conductor.submit(msg),
      recentLog: () => recentLog,
      checkConfigSet: p.checkConfigSet,
    },
  };
}
