// What the dashboard's admin views (Home, Cron, Pairings, Logs, Config) need from the running
// gateway. Types only: src/cli/gateway-command.ts fills it in, and the views' code (this folder, the
// lazy chunk 'dashboard-admin') is loaded on the first request for one of them.
import type { PinclawConfig } from '../../../config/schema.js';
import type { RecentLine } from '../../../log.js';
import type { GpioService } from '../../../hardware/gpio/service.js';
import type { Paths } from '../../../paths.js';
import type { NewInbound } from '../../../store/queue.js';
import type { CallReport } from '../../../tools/registry.js';
import type { ConfirmRequest, ToolCall, ToolContext } from '../../../tools/types.js';

export interface AdminSources {
  /** the configuration the gateway runs with (lines and sensors as named at start) */
  config: PinclawConfig;
  paths: Paths;
  env: NodeJS.ProcessEnv;
  /** the tool registry's governed path: policy, confirmation, limits, audit */
  callTool(call: ToolCall, ctx: ToolContext): Promise<CallReport>;
  /** asks the owner through the http channel's confirmations (confirm_request, POST /api/confirm), as chat `chatId` */
  confirm(chatId: string, request: ConfirmRequest): Promise<boolean>;
  /** absent on a machine without a GPIO chip */
  gpio?: GpioService;
  /** the channels this gateway runs (a job's run now needs its delivery channel here) */
  channels: readonly string[];
  /** queues a message for the conductor (a job run by hand) */
  submit(msg: NewInbound): { id: number };
  /**
   * `config set`'s check of KEY VALUE (src/setup/config-checks.ts checkConfigSet): throws the
   * ConfigError the command would exit 78 with, or returns the problems the file already had
   */
  checkConfigSet(key: string, valueText: string): Promise<string[]>;
  /** the logger's last lines (src/log.ts), secrets already scrubbed */
  recentLog(): readonly RecentLine[];
}
