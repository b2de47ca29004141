// The command tree of the command-line contract. Implementations are imported only when their
// command runs, so `--version` and `--help` load neither the addon nor the database.
import type { CommandOptions } from './args.js';
import type { CliContext } from './context.js';
import { prefetchAddons } from '../native/loader.js';

export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** The command's own flags; the global ones are added to them in the one strict parse (args.ts). */
  options?: CommandOptions;
  subcommands?: readonly string[];
  /** Left out of --help: internal commands of the tests and benchmarks. */
  hidden?: boolean;
  /** Set while the command is not built yet: names the capability that brings it. */
  arrives?: string;
  run?: (args: string[], ctx: CliContext) => Promise<number>;
}

import { gatewayOptions, agentOptions, configOptions, auditOptions, gpioBenchOptions, memoryOptions, tokensOptions, cronOptions, onboardOptions, backupOptions, restoreOptions, logsOptions, skillsOptions, voiceOptions, serviceOptions, migrateOptions, ONBOARD_USAGE } from './options.js';

export const commands: readonly Command[] = [
  {
    name: 'gateway',
    options: gatewayOptions,
    usage: 'pinclaw gateway [--host H] [--port N]',
    summary: 'run the channels, scheduler and hardware triggers in the foreground',
    // SQLite's and pinclaw's addons, which a first start extracts, decompressed while the command's modules load.
    run: async (args, ctx) => {
      const ahead = prefetchAddons(['better_sqlite3', 'pinclaw'], ctx.paths.cache);
      return (await import('./gateway-command.js')).runGateway(args, ctx, ahead);
    },
  },
  {
    name: 'agent',
    options: agentOptions,
    usage: 'pinclaw agent [-m TEXT] [--session KEY]',
    summary: 'one turn (or an interactive chat) through the queue',
    run: async (args, ctx) => (await import('./agent-command.js')).runAgent(args, ctx),
  },
  {
    name: 'tool',
    usage: 'pinclaw tool list | run NAME [JSON]',
    summary: 'list tools or run one through policy and audit',
    subcommands: ['list', 'run'],
    run: async (args, ctx) => (await import('./tool-command.js')).runTool(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'mcp',
    usage: 'pinclaw mcp list | tools NAME | call NAME TOOL [JSON] | resources NAME | read NAME URI | prompts NAME | prompt NAME PROMPT [JSON] | serve',
    summary: "MCP: the servers of mcp.servers (state, tools, a call through policy and audit, resources, prompts); serve: this board's tools to an MCP client over stdio",
    subcommands: ['list', 'tools', 'call', 'resources', 'read', 'prompts', 'prompt', 'serve'],
    // The client's commands and the server (src/mcp/server/) are two lazy chunks: `serve` loads only its own.
    run: async (args, ctx) => (args[0] === 'serve' ? (await import('./mcp-serve-command.js')).runMcpServe(args.slice(1), ctx) : (await import('./mcp-command.js')).runMcp(args, ctx)),
  },
  {
    name: 'memory',
    options: memoryOptions,
    usage: 'pinclaw memory add TEXT | list | forget ID | search QUERY | reindex | export FILE | import FILE | stats',
    summary: 'the long-term memory',
    subcommands: ['add', 'list', 'forget', 'search', 'reindex', 'export', 'import', 'stats'],
    run: async (args, ctx) => (await import('./memory-command.js')).runMemory(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'skills',
    options: skillsOptions,
    usage: 'pinclaw skills list | install SRC [--enable] [--force] | enable NAME | disable NAME | remove NAME',
    summary: 'skills under workspace/skills: install from a directory, .tar.gz, .zip or https URL (checked, shown, disabled until enabled)',
    subcommands: ['list', 'install', 'enable', 'disable', 'remove'],
    run: async (args, ctx) => (await import('./skills-command.js')).runSkills(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'voice',
    options: voiceOptions,
    usage: 'pinclaw voice transcribe FILE | say TEXT -o FILE',
    summary: 'test the voice setup: the speech-to-text backend on an audio file, the text-to-speech backend into an OGG/Opus voice note',
    subcommands: ['transcribe', 'say'],
    run: async (args, ctx) => (await import('./voice-command.js')).runVoice(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'board',
    usage: 'pinclaw board list | show NAME | detect [--json]',
    summary: 'board profiles and detection',
    subcommands: ['list', 'show', 'detect'],
    run: async (args, ctx) => (await import('./board-command.js')).runBoard(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'cron',
    options: cronOptions,
    usage:
      'pinclaw cron add (--cron EXPR | --every DURATION | --at TIME) --message TEXT [--session KEY] [--deliver CHANNEL:CHAT] [--tz ZONE]\n' +
      '            | list | remove ID | run ID | runs ID [--limit N] | pause ID | resume ID',
    summary: 'scheduled jobs: cron times, intervals, one-shots',
    subcommands: ['add', 'list', 'remove', 'run', 'runs', 'pause', 'resume'],
    run: async (args, ctx) => (await import('./cron-command.js')).runCron(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'service',
    options: serviceOptions,
    usage: 'pinclaw service install|uninstall|status [--user|--system] [--dry-run]',
    summary: 'the systemd unit of the gateway (install --dry-run prints it)',
    subcommands: ['install', 'uninstall', 'status'],
    run: async (args, ctx) => (await import('./service-command.js')).runService(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'onboard',
    options: onboardOptions,
    usage: ONBOARD_USAGE,
    summary: 'first-run setup: provider and key, Telegram and your chat, time zone, the dashboard on the LAN, the board, the service',
    run: async (args, ctx) => (await import('./onboard-command.js')).runOnboard(args, ctx),
  },
  {
    name: 'doctor',
    // Not exported like the others: doctor-command.ts declares the same flag (every export here is
    // one more the lazy chunks' registry of this module carries, see scripts/build.mjs).
    options: { probe: { type: 'boolean' } },
    usage: 'pinclaw doctor [--probe] [--json]',
    summary: 'check config, database, native addons, sandbox, hardware, providers (--probe: one real request each)',
    run: async (args, ctx) => (await import('./doctor-command.js')).runDoctor(args, ctx),
  },
  {
    name: 'status',
    usage: 'pinclaw status [--json]',
    summary: 'one screen: gateway, model, channels, board, triggers, queue, last errors',
    run: async (args, ctx) => (await import('./status-command.js')).runStatus(args, ctx),
  },
  {
    name: 'logs',
    options: logsOptions,
    usage: 'pinclaw logs [-f] [-n LINES]',
    summary: "the gateway's log: the journal under the service, else HOME/logs/gateway.log",
    run: async (args, ctx) => (await import('./logs-command.js')).runLogs(args, ctx),
  },
  {
    name: 'config',
    options: configOptions,
    usage: 'pinclaw config path | show | get KEY | set [--plain] KEY VALUE | unset KEY | validate',
    summary: 'read and change the configuration (dot-path keys; show: what you set)',
    subcommands: ['path', 'show', 'get', 'set', 'unset', 'validate'],
    run: async (args, ctx) => (await import('./config-command.js')).runConfig(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'sessions',
    usage: 'pinclaw sessions list | show KEY | reset KEY',
    summary: 'inspect and reset sessions',
    subcommands: ['list', 'show', 'reset'],
    run: async (args, ctx) => (await import('./sessions-command.js')).runSessions(args[0]!, args.slice(1), ctx),
  },
  {
    name: 'pairing',
    usage: 'pinclaw pairing list | approve CODE | revoke CHANNEL ID',
    summary: 'approve a new chat sender or dashboard client',
    subcommands: ['list', 'approve', 'revoke'],
    run: async (args, ctx) => (await import('./pairing-command.js')).runPairing(args[0] as 'list' | 'approve' | 'revoke', args.slice(1), ctx),
  },
  {
    name: 'audit',
    options: auditOptions,
    usage: 'pinclaw audit [--since DURATION|ISO] [--tool NAME] [--limit N] [--json]',
    summary: 'the tool-call audit log',
    run: async (args, ctx) => (await import('./audit-command.js')).runAudit(args, ctx),
  },
  {
    name: 'backup',
    options: backupOptions,
    usage: 'pinclaw backup FILE [--include-secrets] [--force]',
    summary: 'the home (database, config, workspace) in one file, also while the gateway runs',
    run: async (args, ctx) => (await import('./backup-command.js')).runBackup(args, ctx),
  },
  {
    name: 'restore',
    options: restoreOptions,
    usage: 'pinclaw restore FILE [--force]',
    summary: 'put a backup back into an empty home (--force: keep what is there aside)',
    run: async (args, ctx) => (await import('./backup-command.js')).runRestore(args, ctx),
  },
  {
    name: 'update',
    // Declared again in update-command.ts, as doctor does: an export here costs the bundle bytes.
    options: { check: { type: 'boolean' }, to: { type: 'string' }, 'allow-downgrade': { type: 'boolean' } },
    usage: 'pinclaw update [--check] [--to VERSION] [--allow-downgrade] [--yes]',
    summary: 'install the signed release at update.url (checked, swapped, rolled back when the gateway does not come up healthy)',
    run: async (args, ctx) => (await import('./update-command.js')).runUpdateCommand(args, ctx),
  },
  {
    name: 'migrate',
    options: migrateOptions,
    usage: 'pinclaw migrate openclaw [--from DIR] [--dry-run] [--include-secrets]',
    summary: "bring an OpenClaw home (~/.openclaw, either era) over: workspace, skills (disabled), cron jobs, channels, model, recent sessions; prints the plan first, never changes the OpenClaw home",
    subcommands: ['openclaw'],
    run: async (args, ctx) => (await import('./migrate-command.js')).runMigrate(args, ctx),
  },
  {
    name: 'tokens',
    options: tokensOptions,
    usage: 'pinclaw tokens [--encoding NAME] [FILE|-]',
    summary: 'token count of a text',
    run: async (args, ctx) => (await import('./tokens-command.js')).runTokens(args, ctx),
  },
  {
    name: '__tool-script',
    hidden: true,
    usage: 'pinclaw __tool-script FILE',
    summary: 'run a JSON list of tool calls and shell steps in one process (VM tests, bench/gpio)',
    run: async (args, ctx) => (await import('./tool-script-command.js')).runToolScript(args, ctx),
  },
  {
    name: '__gpio-bench',
    hidden: true,
    options: gpioBenchOptions,
    usage: 'pinclaw __gpio-bench --out LINE --in LINE [--n N] [--edges M]',
    summary: 'the GPIO measurements of bench/gpio, run on the machine with the lines',
    run: async (args, ctx) => (await import('./gpio-bench-command.js')).runGpioBench(args, ctx),
  },
  {
    name: '__i2c-selftest',
    hidden: true,
    usage: 'pinclaw __i2c-selftest BUS ADDRESS | tools JSON',
    summary: 'the I2C self-test against i2c-stub (report as JSON), or I2C tool calls (the x64 VM test)',
    run: async (args, ctx) => (await import('./i2c-selftest-command.js')).runI2cSelfTest(args, ctx),
  },
];

export function helpText(version: string): string {
  const shown = commands.filter((c) => !c.hidden);
  const width = Math.max(...shown.map((c) => c.name.length));
  const lines = [
    `pinclaw ${version} — a personal AI agent runtime for single-board computers`,
    '',
    'usage: pinclaw [--home DIR] [--config FILE] [--json] COMMAND [ARGS]',
    '',
    'commands:',
    ...shown.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}${c.arrives ? ' (not available yet)' : ''}`),
    '',
    'global flags:',
    '  --home DIR       state directory (env PINCLAW_HOME, default ~/.pinclaw)',
    '  --config FILE    config file (env PINCLAW_CONFIG, default $PINCLAW_HOME/config.json)',
    '  --json           machine-readable output',
    '  -y, --yes        answer yes to confirmations (tools that ask first)',
    '  --verbose        show the info log lines of a one-shot command (it shows warnings and errors only)',
    '  -h, --help       this help, or a command\'s usage',
    '  -V, --version    print the version',
    '',
    'exit codes: 0 ok, 1 failure, 2 usage error, 78 configuration error',
  ];
  return lines.join('\n');
}

