// Each command's own flags, declared in this leaf so that the one strict parse in index.ts knows them
// before the command's module is loaded, and the module parses its arguments with the same object
// without importing the command table (commands.ts imports the command modules, lazily).
import type { CommandOptions } from './args.js';

export const gatewayOptions = { host: { type: 'string' }, port: { type: 'string' } } as const satisfies CommandOptions;
export const agentOptions = { message: { type: 'string', short: 'm' }, session: { type: 'string', short: 's' } } as const satisfies CommandOptions;
export const configOptions = { secret: { type: 'boolean' }, plain: { type: 'boolean' } } as const satisfies CommandOptions;
export const auditOptions = { since: { type: 'string' }, tool: { type: 'string' }, limit: { type: 'string' } } as const satisfies CommandOptions;
export const gpioBenchOptions = { out: { type: 'string' }, in: { type: 'string' }, n: { type: 'string' }, edges: { type: 'string' } } as const satisfies CommandOptions;
export const memoryOptions = { kind: { type: 'string' }, limit: { type: 'string' }, mode: { type: 'string' } } as const satisfies CommandOptions;
export const tokensOptions = { encoding: { type: 'string', short: 'e' } } as const satisfies CommandOptions;
export const cronOptions = {
  cron: { type: 'string' },
  every: { type: 'string' },
  at: { type: 'string' },
  message: { type: 'string', short: 'm' },
  session: { type: 'string', short: 's' },
  deliver: { type: 'string' },
  tz: { type: 'string' },
  limit: { type: 'string' },
} as const satisfies CommandOptions;
export const onboardOptions = {
  'non-interactive': { type: 'boolean' },
  provider: { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-env': { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'telegram-token': { type: 'string' },
  'telegram-allow': { type: 'string' },
  board: { type: 'string' },
  service: { type: 'string' },
  timezone: { type: 'string' },
  'dashboard-lan': { type: 'string' },
  'owner-chat': { type: 'string' },
} as const satisfies CommandOptions;
export const backupOptions = { 'include-secrets': { type: 'boolean' }, force: { type: 'boolean' } } as const satisfies CommandOptions;
export const restoreOptions = { force: { type: 'boolean' } } as const satisfies CommandOptions;
export const logsOptions = { follow: { type: 'boolean', short: 'f' }, lines: { type: 'string', short: 'n' } } as const satisfies CommandOptions;
export const skillsOptions = { enable: { type: 'boolean' }, force: { type: 'boolean' } } as const satisfies CommandOptions;
export const voiceOptions = { out: { type: 'string', short: 'o' } } as const satisfies CommandOptions;
export const migrateOptions = { from: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'include-secrets': { type: 'boolean' } } as const satisfies CommandOptions;
export const serviceOptions = { user: { type: 'boolean' }, system: { type: 'boolean' }, 'dry-run': { type: 'boolean' } } as const satisfies CommandOptions;

/** onboard's usage, printed by the command table and by onboard's own errors. */
export const ONBOARD_USAGE =
  'pinclaw onboard [--non-interactive] [--provider anthropic|openai|openai-compatible] [--api-key KEY | --api-key-env VAR] [--model M] [--base-url URL]\n' +
  '                [--telegram-token T] [--telegram-allow ID,...] [--owner-chat CHAT_ID] [--timezone ZONE] [--dashboard-lan yes|no]\n' +
  '                [--board NAME|auto] [--service user|system|none]';
