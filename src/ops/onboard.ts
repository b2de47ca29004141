// `pinclaw onboard`: the answers (from flags, or asked one by one), what they change in the config
// file, and the one write at the end. Kept apart from the terminal (src/cli/onboard-command.ts) so
// the questions can be driven by injected answers.
//
// Idempotent by construction: a plan holds only the keys whose value would change, and a secret is
// compared with what the file holds after decrypting it, so the same answers twice give no change
// and no write (a fresh encryption would differ every time: a random IV). Nothing is written while
// questions are asked; an interrupted onboarding leaves config.json (and secret.key) as they were.
import { defaults, formatIssues, validateConfig } from '../config/index.js';
import { decryptSecret, isEncrypted, secretKey } from '../config/secrets.js';
import { writeConfigFile } from '../config/write.js';
import { envVarFor } from '../config/env.js';
import { randomBytes } from 'node:crypto';
import { isLoopback } from '../channels/http/guard.js';
import { ConfigError, PinclawError, UsageError } from '../errors.js';
import { knownZone, systemZone } from '../local-time.js';
import { closest } from '../suggest.js';
import type { WaitResult } from '../channels/telegram/owner-chat.js';
import type { BoardRegistry } from '../hardware/boards/registry.js';
import { unknownProfileMessage } from '../hardware/boards/registry.js';
import type { Paths } from '../paths.js';


/** A value shaped like an encrypted secret (`enc:v1:…`), for validating a plan before its secrets are encrypted. */
const ENCRYPTED_SHAPE = 'enc:v1:AAAA';

export const PROVIDER_CHOICES = ['anthropic', 'openai', 'openai-compatible'] as const;
export type ProviderChoice = (typeof PROVIDER_CHOICES)[number];
export const SERVICE_CHOICES = ['user', 'system', 'none'] as const;
export type ServiceChoice = (typeof SERVICE_CHOICES)[number];

/** What onboarding sets. Undefined: leave that part of the config as it is. */
export interface OnboardAnswers {
  provider?: ProviderChoice;
  /** the API key in clear; stored encrypted */
  apiKey?: string;
  /** the model as the provider names it (stored as provider/model) */
  model?: string;
  baseUrl?: string;
  /** the bot token in clear; stored encrypted */
  telegramToken?: string;
  telegramAllow?: string[];
  /** a board profile id, or 'auto' (detection: board.profile removed) */
  board?: string;
  service: ServiceChoice;
  /** agent.timezone, an IANA zone */
  timezone?: string;
  /** true: the gateway listens on the LAN (0.0.0.0) with a token; false: loopback only */
  dashboardLan?: boolean;
  /** the owner's Telegram chat, for owner.notify; userId (when learned from a message) joins allowFrom */
  ownerChat?: { chatId: string; userId?: string };
}

/** Raised by a prompter when input ends or the user presses Ctrl-C. */
export class OnboardInterrupted extends PinclawError {
  constructor(why: string) {
    super(`onboarding interrupted (${why}); nothing was written`);
    this.name = 'OnboardInterrupted';
  }
}

export interface Prompter {
  /** Shows `question` and returns the line typed (without the newline); `secret`: not echoed. */
  ask(question: string, opts?: { secret?: boolean; signal?: AbortSignal }): Promise<string>;
  say(line: string): void;
}

// ---- checks, each returning what is wrong (for a flag's error or a question asked again) ----

export function checkProvider(v: string): string | undefined {
  if ((PROVIDER_CHOICES as readonly string[]).includes(v)) return undefined;
  const near = closest(v, PROVIDER_CHOICES);
  return `unknown provider '${v}'${near ? ` (did you mean '${near}'?)` : ''}; known: ${PROVIDER_CHOICES.join(', ')}`;
}

/** An IANA zone Intl knows, with the nearest name for a typo. */
export function checkTimezone(v: string): string | undefined {
  if (v !== '' && knownZone(v)) return undefined;
  const near = closest(v, Intl.supportedValuesOf('timeZone'));
  return `unknown time zone '${v}'${near ? ` (did you mean '${near}'?)` : ''}; use an IANA name such as Europe/Berlin`;
}

export function parseYesNo(v: string): boolean | undefined {
  const l = v.trim().toLowerCase();
  return ['y', 'yes'].includes(l) ? true : ['n', 'no'].includes(l) ? false : undefined;
}

/** A Telegram chat id (digits; a group's is negative), with or without "telegram:". */
export function parseOwnerChat(v: string): string | undefined {
  const m = /^(?:telegram:)?(-?\d{1,20})$/.exec(v.trim());
  return m?.[1];
}

export function checkService(v: string): string | undefined {
  return (SERVICE_CHOICES as readonly string[]).includes(v) ? undefined : `expected one of ${SERVICE_CHOICES.join(', ')}, got '${v}'`;
}

export function checkModel(v: string): string | undefined {
  if (!v.trim()) return 'the model name is empty';
  if (/\s/.test(v)) return `a model name has no spaces, got '${v}'`;
  return undefined;
}

export function checkUrl(v: string): string | undefined {
  try {
    if (['http:', 'https:'].includes(new URL(v).protocol)) return undefined;
  } catch {
    // not a URL at all
  }
  return `expected an http(s) URL such as http://127.0.0.1:11434/v1, got '${v}'`;
}

/** A bot token from @BotFather: the bot's numeric id, a colon, and 30-odd letters, digits, - and _. */
export function checkTelegramToken(v: string): string | undefined {
  // The value is a secret: the message says what is wrong without repeating it.
  return /^\d+:[A-Za-z0-9_-]{30,}$/.test(v) ? undefined : 'not a bot token: expected the form 123456789:AAH… (the bot id, a colon, then 30 or more letters, digits, - or _) as @BotFather gives it';
}

/** Numeric user ids, or usernames with or without @ (as channels.telegram.allowFrom takes them). */
export function parseAllowList(v: string): { list: string[] } | { error: string } {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((e) => !/^\d+$/.test(e) && !/^@?[A-Za-z][A-Za-z0-9_]{2,31}$/.test(e));
  if (bad.length) return { error: `not a Telegram user id or @username: ${bad.map((b) => `'${b}'`).join(', ')}` };
  return { list };
}

export function checkBoard(v: string, registry: () => BoardRegistry): string | undefined {
  if (v === 'auto') return undefined;
  const r = registry();
  const p = r.get(v);
  if (!p) return `${unknownProfileMessage(v, r)}; or auto to detect the board at start`;
  // Only a board pinclaw runs on is this machine's profile; a microcontroller is a device on a port.
  if (p.profile.kind !== 'sbc') return `'${v}' is a ${p.profile.kind} board, not one pinclaw runs on: it goes in hardware.devices (docs/hardware.md); this machine's board is one of ${hostBoards(r).join(', ')}, or auto`;
  return undefined;
}

/** The profiles of boards pinclaw itself runs on (kind sbc). */
export function hostBoards(r: BoardRegistry): string[] {
  return r.profiles.filter((p) => p.profile.kind === 'sbc').map((p) => p.profile.id);
}

// ---- what the config holds now ----

type Raw = Record<string, unknown>;

function getAt(raw: Raw, key: string): unknown {
  let cur: unknown = raw;
  for (const seg of key.split('.')) cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Raw)[seg] : undefined;
  return cur;
}

const OPENAI_DEFAULT = 'https://api.openai.com/v1';

export interface CurrentSetup {
  provider?: ProviderChoice;
  /** the model without its provider/ prefix */
  model?: string;
  baseUrl?: string;
  /** a key is stored for anthropic / openai */
  anthropicKey: boolean;
  openaiKey: boolean;
  telegramToken: boolean;
  telegramAllow: string[];
  board?: string;
  timezone?: string;
  /** gateway.host is beyond loopback */
  lan: boolean;
  gatewayToken: boolean;
  port: number;
  ownerNotify?: string;
}

/** The choices the file holds, for defaults and for deciding what a flag leaves alone. */
export function currentSetup(raw: Raw): CurrentSetup {
  const model = getAt(raw, 'agent.model');
  const ref = typeof model === 'string' ? model : defaults().agent.model;
  const slash = ref.indexOf('/');
  const prov = ref.slice(0, slash);
  const baseUrl = getAt(raw, 'providers.openai.baseUrl');
  const anthropicBase = getAt(raw, 'providers.anthropic.baseUrl');
  let provider: ProviderChoice | undefined;
  if (prov === 'anthropic') provider = 'anthropic';
  else if (prov === 'openai') provider = typeof baseUrl === 'string' && baseUrl !== '' && baseUrl.replace(/\/+$/, '') !== OPENAI_DEFAULT ? 'openai-compatible' : 'openai';
  const nonEmpty = (v: unknown) => typeof v === 'string' && v !== '';
  const allow = getAt(raw, 'channels.telegram.allowFrom');
  const board = getAt(raw, 'board.profile');
  return {
    provider,
    model: slash > 0 ? ref.slice(slash + 1) : undefined,
    baseUrl: provider === 'anthropic' ? (nonEmpty(anthropicBase) ? (anthropicBase as string) : undefined) : nonEmpty(baseUrl) ? (baseUrl as string) : undefined,
    anthropicKey: nonEmpty(getAt(raw, 'providers.anthropic.apiKey')),
    openaiKey: nonEmpty(getAt(raw, 'providers.openai.apiKey')),
    telegramToken: nonEmpty(getAt(raw, 'channels.telegram.token')),
    telegramAllow: Array.isArray(allow) ? allow.filter((a): a is string => typeof a === 'string') : [],
    board: typeof board === 'string' ? board : undefined,
    timezone: nonEmpty(getAt(raw, 'agent.timezone')) ? (getAt(raw, 'agent.timezone') as string) : undefined,
    lan: !isLoopback(typeof getAt(raw, 'gateway.host') === 'string' ? (getAt(raw, 'gateway.host') as string) : defaults().gateway.host),
    gatewayToken: nonEmpty(getAt(raw, 'gateway.token')),
    port: typeof getAt(raw, 'gateway.port') === 'number' ? (getAt(raw, 'gateway.port') as number) : defaults().gateway.port,
    ownerNotify: nonEmpty(getAt(raw, 'owner.notify')) ? (getAt(raw, 'owner.notify') as string) : undefined,
  };
}

/** The variable the provider reads its key from when the config has none. */
export function keyVariable(p: ProviderChoice): string {
  return p === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
}

function defaultModel(p: ProviderChoice, current: CurrentSetup): string | undefined {
  const family = (c?: ProviderChoice) => (c === 'anthropic' ? 'anthropic' : c ? 'openai' : undefined);
  if (current.model && family(current.provider) === family(p)) return current.model;
  if (p === 'anthropic') return defaults().agent.model.replace(/^anthropic\//, '');
  return undefined; // no sensible default for OpenAI or a local server: asked, or --model
}

// ---- answers from flags ----

export interface OnboardFlags {
  provider?: string;
  apiKey?: string;
  apiKeyEnv?: string;
  model?: string;
  baseUrl?: string;
  telegramToken?: string;
  telegramAllow?: string;
  board?: string;
  service?: string;
  timezone?: string;
  dashboardLan?: string;
  ownerChat?: string;
}

/** Checks every flag given, naming the flag in the error (exit 2), before anything else happens. */
export function checkFlags(f: OnboardFlags, env: NodeJS.ProcessEnv, registry: () => BoardRegistry): void {
  const flag = (name: string, problem: string | undefined) => {
    if (problem) throw new UsageError(`${name}: ${problem}`);
  };
  if (f.provider !== undefined) flag('--provider', checkProvider(f.provider));
  if (f.apiKey !== undefined && f.apiKeyEnv !== undefined) throw new UsageError('--api-key and --api-key-env: give one of them');
  if (f.apiKey !== undefined) flag('--api-key', f.apiKey.trim() ? undefined : 'the key is empty');
  if (f.apiKeyEnv !== undefined) flag('--api-key-env', env[f.apiKeyEnv] ? undefined : `the environment variable ${f.apiKeyEnv} is not set or empty`);
  if (f.model !== undefined) flag('--model', checkModel(f.model));
  if (f.baseUrl !== undefined) flag('--base-url', checkUrl(f.baseUrl));
  if (f.telegramToken !== undefined) flag('--telegram-token', checkTelegramToken(f.telegramToken));
  if (f.telegramAllow !== undefined) {
    const r = parseAllowList(f.telegramAllow);
    if ('error' in r) throw new UsageError(`--telegram-allow: ${r.error}`);
  }
  if (f.board !== undefined) flag('--board', checkBoard(f.board, registry));
  if (f.service !== undefined) flag('--service', checkService(f.service));
  if (f.timezone !== undefined) flag('--timezone', checkTimezone(f.timezone));
  if (f.dashboardLan !== undefined) flag('--dashboard-lan', parseYesNo(f.dashboardLan) === undefined ? `expected yes or no, got '${f.dashboardLan}'` : undefined);
  if (f.ownerChat !== undefined) flag('--owner-chat', parseOwnerChat(f.ownerChat) === undefined ? `expected your Telegram chat id (digits, as telegram:12345 or 12345), got '${f.ownerChat}'; without it, run pinclaw onboard on a terminal and message the bot to have it learned` : undefined);
}

/** --non-interactive: the flags are the answers; what no flag mentions stays as it is. */
export function answersFromFlags(f: OnboardFlags, env: NodeJS.ProcessEnv, current: CurrentSetup, registry: () => BoardRegistry): OnboardAnswers {
  checkFlags(f, env, registry);
  const a: OnboardAnswers = { service: (f.service as ServiceChoice | undefined) ?? 'none' };
  const apiKey = f.apiKey ?? (f.apiKeyEnv !== undefined ? env[f.apiKeyEnv] : undefined);
  const touchesProvider = f.provider !== undefined || apiKey !== undefined || f.model !== undefined || f.baseUrl !== undefined;
  if (touchesProvider) {
    const provider = (f.provider as ProviderChoice | undefined) ?? current.provider ?? 'anthropic';
    const model = f.model ?? defaultModel(provider, current);
    if (!model) throw new UsageError(`--model: needed with --provider ${provider} (the model as the server names it, e.g. llama3.2 for Ollama)`);
    const baseUrl = f.baseUrl ?? (provider === 'openai-compatible' ? (current.provider === 'openai-compatible' ? current.baseUrl : undefined) : undefined);
    if (provider === 'openai-compatible' && !baseUrl) throw new UsageError('--base-url: needed with --provider openai-compatible (the server, e.g. http://127.0.0.1:11434/v1)');
    const stored = provider === 'anthropic' ? current.anthropicKey : current.openaiKey;
    if (provider !== 'openai-compatible' && apiKey === undefined && !stored && !env[keyVariable(provider)]) {
      throw new UsageError(`--api-key: --provider ${provider} needs an API key: --api-key KEY, or --api-key-env VAR to read it from the environment`);
    }
    Object.assign(a, { provider, model, ...(baseUrl !== undefined ? { baseUrl } : {}), ...(apiKey !== undefined ? { apiKey } : {}) });
  }
  if (f.telegramToken !== undefined) a.telegramToken = f.telegramToken;
  if (f.telegramAllow !== undefined) a.telegramAllow = (parseAllowList(f.telegramAllow) as { list: string[] }).list;
  if (f.board !== undefined) a.board = f.board;
  if (f.timezone !== undefined) a.timezone = f.timezone;
  if (f.dashboardLan !== undefined) a.dashboardLan = parseYesNo(f.dashboardLan);
  if (f.ownerChat !== undefined) {
    if (f.telegramToken === undefined && !current.telegramToken) throw new UsageError('--owner-chat: owner.notify telegram:… needs the Telegram bot: give --telegram-token too');
    a.ownerChat = { chatId: parseOwnerChat(f.ownerChat)! };
  }
  return a;
}

// ---- answers asked ----

export interface AskContext {
  current: CurrentSetup;
  env: NodeJS.ProcessEnv;
  registry: () => BoardRegistry;
  /** flags given along with an interactive run: they become the defaults */
  flags: OnboardFlags;
  /** the board detection found, for the board question's hint */
  detectedBoard?: string;
  /** the default of the service question (what this machine can run) */
  serviceDefault: ServiceChoice;
  configFile: string;
  /**
   * Waits for the owner's message to the bot (src/ops/owner-chat.ts); `token`: the bot token just
   * typed, else the stored one is used. Absent: the chat id can only be typed.
   */
  waitForOwner?: (token: string | undefined, say: (line: string) => void, signal: AbortSignal) => Promise<WaitResult>;
}

/** Asks until `check` accepts the answer; an empty answer takes `def` when there is one. */
async function askValid(p: Prompter, question: string, def: string | undefined, check: (v: string) => string | undefined): Promise<string> {
  for (;;) {
    const typed = (await p.ask(`${question}${def !== undefined && def !== '' ? ` [${def}]` : ''}: `)).trim();
    const value = typed === '' ? def ?? '' : typed;
    const problem = check(value);
    if (!problem) return value;
    p.say(`  ${problem}`);
  }
}

/** The questions of an interactive onboarding, in order. */
export async function askAnswers(p: Prompter, c: AskContext): Promise<OnboardAnswers> {
  const { current, env, flags } = c;
  p.say(`pinclaw onboard: sets up ${c.configFile}. Enter takes the value in [brackets]; Ctrl-C or Ctrl-D stops without writing anything.`);
  p.say('It asks, in order: the model provider, its key and model; the Telegram bot and who may use it; your own chat (you message the bot, it learns where to tell you things); the time zone; the dashboard on your LAN; the board; the service. Nothing is written until you say yes at the end.');
  const provider = (await askValid(p, `Model provider (${PROVIDER_CHOICES.join(', ')})`, flags.provider ?? current.provider ?? 'anthropic', checkProvider)) as ProviderChoice;

  let baseUrl: string | undefined;
  if (provider === 'openai-compatible') {
    const def = flags.baseUrl ?? (current.provider === 'openai-compatible' ? current.baseUrl : undefined) ?? 'http://127.0.0.1:11434/v1';
    baseUrl = await askValid(p, 'Server URL, with /v1 (Ollama, llama.cpp, vLLM, OpenRouter)', def, checkUrl);
  } else if (flags.baseUrl !== undefined) baseUrl = flags.baseUrl;

  const variable = keyVariable(provider);
  const stored = provider === 'anthropic' ? current.anthropicKey : current.openaiKey;
  const fromFlags = flags.apiKey ?? (flags.apiKeyEnv !== undefined ? env[flags.apiKeyEnv] : undefined);
  const fromEnv = env[variable];
  const enter = fromFlags !== undefined ? 'the key given by flag' : stored ? 'keep the stored key' : fromEnv ? `store the key in ${variable}` : provider === 'openai-compatible' ? 'none (a local server needs none)' : undefined;
  let apiKey: string | undefined;
  for (;;) {
    const typed = (await p.ask(`API key for ${provider}, stored encrypted${enter ? ` (Enter: ${enter})` : ''}: `, { secret: true })).trim();
    if (typed) apiKey = typed;
    else if (fromFlags !== undefined) apiKey = fromFlags;
    else if (!stored && fromEnv) apiKey = fromEnv;
    if (apiKey !== undefined || enter) break;
    p.say(`  ${provider} needs an API key`);
  }

  const model = await askValid(p, `Model${provider === 'anthropic' ? '' : ' (as the server names it)'}`, flags.model ?? defaultModel(provider, current), checkModel);

  const telegramEnter = flags.telegramToken !== undefined ? 'the token given by flag' : current.telegramToken ? 'keep the stored token' : 'no Telegram';
  let telegramToken: string | undefined;
  for (;;) {
    const typed = (await p.ask(`Telegram bot token from @BotFather, stored encrypted (Enter: ${telegramEnter}): `, { secret: true })).trim();
    if (!typed) {
      telegramToken = flags.telegramToken;
      break;
    }
    const problem = checkTelegramToken(typed);
    if (!problem) {
      telegramToken = typed;
      break;
    }
    p.say(`  ${problem}`);
  }
  let telegramAllow: string[] | undefined;
  if (telegramToken !== undefined || current.telegramToken) {
    let list: string[] = [];
    await askValid(p, 'Telegram users who may talk to the bot: ids or @usernames, comma-separated (others get a pairing code)', flags.telegramAllow ?? current.telegramAllow.join(','), (v) => {
      const r = parseAllowList(v);
      if ('error' in r) return r.error;
      list = r.list;
      return undefined;
    });
    telegramAllow = list;
  }

  let ownerChat: OnboardAnswers['ownerChat'];
  if (telegramToken !== undefined || current.telegramToken) {
    ownerChat = await askOwnerChat(p, c, telegramToken);
    // The owner's own account may talk to the bot without a pairing code.
    if (ownerChat?.userId && telegramAllow && !telegramAllow.includes(ownerChat.userId)) telegramAllow = [...telegramAllow, ownerChat.userId];
  }
  const timezone = await askValid(p, 'Time zone (for the clock in the prompt, cron jobs and {time} in notify texts)', flags.timezone ?? current.timezone ?? systemZone(), checkTimezone);
  const lanDef = flags.dashboardLan ?? (current.lan ? 'yes' : 'no');
  const lan = await askValid(p, `Open the dashboard to your LAN, e.g. from your phone? It gets a login token${current.gatewayToken ? ' (the stored one)' : ', made now and stored encrypted'} (yes, no)`, lanDef, (v) => (parseYesNo(v) === undefined ? `expected yes or no, got '${v}'` : undefined));

  if (c.detectedBoard) p.say(`This machine looks like the board ${c.detectedBoard}.`);
  const board = await askValid(p, 'Board profile (see pinclaw board list; auto: detect at every start)', flags.board ?? current.board ?? 'auto', (v) => checkBoard(v, c.registry));
  const service = (await askValid(p, `Run pinclaw as a systemd service (${SERVICE_CHOICES.join(', ')})`, flags.service ?? c.serviceDefault, checkService)) as ServiceChoice;

  return {
    provider,
    model,
    service,
    board,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(telegramToken !== undefined ? { telegramToken } : {}),
    ...(telegramAllow !== undefined ? { telegramAllow } : {}),
    ...(ownerChat !== undefined ? { ownerChat } : {}),
    timezone,
    dashboardLan: parseYesNo(lan),
  };
}

/**
 * The owner's chat: learned from a message to the bot (Enter, or "wait"), typed as an id, kept, or
 * skipped. A wait that fails or times out says why and asks again, so the owner can type the id.
 */
async function askOwnerChat(p: Prompter, c: AskContext, token: string | undefined): Promise<OnboardAnswers['ownerChat']> {
  const given = c.flags.ownerChat !== undefined ? parseOwnerChat(c.flags.ownerChat) : undefined;
  if (given) return { chatId: given };
  const keep = c.current.ownerNotify;
  for (;;) {
    const typed = (await p.ask(`Your Telegram chat, where door alerts, cron jobs and the heartbeat tell you things (Enter: ${keep ? `keep ${keep}; wait: message the bot to learn it again` : 'message the bot now to have it learned'}; or a chat id; skip): `)).trim().toLowerCase();
    if (typed === 'skip' || (typed === '' && keep)) return undefined;
    if (typed !== '' && typed !== 'wait') {
      const id = parseOwnerChat(typed);
      if (id) return { chatId: id };
      p.say(`  expected Enter, wait, skip or a chat id (digits), got '${typed}'`);
      continue;
    }
    if (!c.waitForOwner) {
      p.say('  the bot cannot be asked from here; type the chat id, or skip');
      continue;
    }
    // The wait and a line typed race: Enter skips the wait, a message ends the question.
    const skip = new AbortController();
    const answered = new AbortController();
    const typing = p.ask('', { signal: answered.signal }).then(() => skip.abort());
    const result = await c.waitForOwner(token, (l) => p.say(l), skip.signal);
    answered.abort();
    await typing.catch(() => undefined);
    if ('found' in result) {
      p.say(`  got a message from ${result.found.name} in chat ${result.found.chatId}: owner.notify will be telegram:${result.found.chatId} (the bot answered there)`);
      return { chatId: result.found.chatId, userId: result.found.userId };
    }
    p.say('skipped' in result ? '  skipped the wait' : `  ${result.failed}`);
  }
}

// ---- the plan and the write ----

export interface Change {
  key: string;
  /** for people; secrets shown as "(stored encrypted)" */
  from: string;
  to: string;
}

export interface OnboardPlan {
  /** the file's content after the change, secrets still to be encrypted */
  next: Raw;
  /** secret keys to encrypt into `next` when it is written */
  secrets: { key: string; plain: string }[];
  changes: Change[];
  /** things to say (an environment variable that overrides a key, a key left to the environment) */
  notes: string[];
  /** a gateway token made for the LAN dashboard: shown once after the write, for the login */
  newGatewayToken?: string;
}

const show = (v: unknown) => (v === undefined ? '(unset)' : typeof v === 'string' ? v : JSON.stringify(v));

function setAt(raw: Raw, key: string, value: unknown): void {
  const segs = key.split('.');
  let cur = raw;
  for (const seg of segs.slice(0, -1)) {
    const next = cur[seg];
    if (next === undefined) cur[seg] = {};
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) throw new ConfigError(`cannot set ${key}: ${seg} is not an object in the config file`);
    cur = cur[seg] as Raw;
  }
  const last = segs.at(-1)!;
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}

function nonEmptyAt(raw: Raw, key: string): boolean {
  const v = getAt(raw, key);
  return typeof v === 'string' && v !== '';
}

/** What the answers change in the file's content `raw`; `keyFile` decrypts what it holds for comparison. */
export function planOnboard(raw: Raw, answers: OnboardAnswers, keyFile: string, env: NodeJS.ProcessEnv): OnboardPlan {
  const next = structuredClone(raw);
  const plan: OnboardPlan = { next, secrets: [], changes: [], notes: [] };
  const set = (key: string, value: unknown) => {
    const before = getAt(raw, key);
    if (JSON.stringify(before) === JSON.stringify(value)) return;
    setAt(next, key, value);
    plan.changes.push({ key, from: show(before), to: show(value) });
  };
  let key: Buffer | undefined;
  const setSecret = (k: string, plain: string) => {
    const before = getAt(raw, k);
    if (isEncrypted(before)) {
      try {
        key ??= secretKey(keyFile, false);
        if (decryptSecret(before, key, k) === plain) return; // the same secret: the file keeps its bytes
      } catch {
        // not readable with this home's key: replaced
      }
    }
    plan.secrets.push({ key: k, plain });
    plan.changes.push({ key: k, from: before === undefined || before === '' ? '(unset)' : '(a stored secret)', to: '(new, stored encrypted)' });
  };

  if (answers.provider) {
    const family = answers.provider === 'anthropic' ? 'anthropic' : 'openai';
    if (answers.model) set('agent.model', `${family}/${answers.model}`);
    if (answers.baseUrl !== undefined) set(`providers.${family}.baseUrl`, answers.baseUrl);
    if (answers.apiKey !== undefined && answers.apiKey !== '') setSecret(`providers.${family}.apiKey`, answers.apiKey);
    const hasKey = answers.apiKey !== undefined || typeof getAt(raw, `providers.${family}.apiKey`) === 'string';
    const variable = keyVariable(answers.provider);
    if (!hasKey && env[variable] && answers.provider !== 'openai-compatible') {
      plan.notes.push(`no key is stored: ${variable} from the environment is used when pinclaw runs (a service needs it in its own environment too)`);
    }
  }
  if (answers.telegramToken !== undefined) setSecret('channels.telegram.token', answers.telegramToken);
  if (answers.telegramAllow !== undefined) set('channels.telegram.allowFrom', answers.telegramAllow);
  if (answers.ownerChat) set('owner.notify', `telegram:${answers.ownerChat.chatId}`);
  if (answers.timezone !== undefined) set('agent.timezone', answers.timezone);
  if (answers.dashboardLan === true) {
    // The gateway refuses an address beyond loopback without a token: one is made if none is stored.
    if (!nonEmptyAt(raw, 'gateway.token')) {
      plan.newGatewayToken = randomBytes(24).toString('base64url');
      setSecret('gateway.token', plan.newGatewayToken);
    }
    if (isLoopback(String(getAt(raw, 'gateway.host') ?? defaults().gateway.host))) set('gateway.host', '0.0.0.0');
  } else if (answers.dashboardLan === false && !isLoopback(String(getAt(raw, 'gateway.host') ?? defaults().gateway.host))) {
    set('gateway.host', '127.0.0.1');
  }
  if (answers.board !== undefined) set('board.profile', answers.board === 'auto' ? undefined : answers.board);

  for (const c of plan.changes) {
    const v = envVarFor(c.key);
    if (env[v]) plan.notes.push(`${v} is set in the environment and overrides ${c.key}`);
  }
  // The result must be a config pinclaw accepts (the rest of the file included) before anything is
  // written. The secrets are encrypted only when written, so the check sees a value of their stored
  // shape in their place.
  const probe = structuredClone(next);
  for (const s of plan.secrets) setAt(probe, s.key, ENCRYPTED_SHAPE);
  const { errors } = validateConfig(probe);
  if (errors.length) throw new ConfigError(`${formatIssues(errors)}\nnothing was written`);
  return plan;
}

/**
 * The one write of onboarding: the secrets encrypted (secret.key created if needed), the whole file
 * written atomically. Returns false when the plan changes nothing (then nothing is touched).
 */
export function applyOnboard(paths: Paths, plan: OnboardPlan): boolean {
  if (plan.changes.length === 0) return false;
  const next = structuredClone(plan.next);
  for (const s of plan.secrets) setAt(next, s.key, s.plain);
  // Encrypted when written, with any secret the file held in clear (src/config/write.ts).
  writeConfigFile(paths, next);
  return true;
}
