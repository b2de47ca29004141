// The Config view: the keys an owner changes in the first hour, shown as the file and the defaults
// make them, and set exactly as `pinclaw config set` sets them: the same checks (the value's type,
// then everything the gateway checks before it starts), the same write (secrets encrypted, only the
// file's own content written). A refused value writes nothing; a set one applies at the next start.
import { ConfigError, errorMessage } from '../../../errors.js';
import { getConfigValue, loadConfig, lookupKey, readConfigFile, setConfigValue } from '../../../config/index.js';
import { Refusal } from './refusal.js';
import type { AdminSources } from './sources.js';

/** The keys of the form, in the order shown; anything else is `pinclaw config set`'s. */
export const FORM_KEYS = [
  'agent.model',
  'agent.fallbacks',
  'agent.timezone',
  'heartbeat.every',
  'heartbeat.session',
  'channels.telegram.token',
  'channels.telegram.allowFrom',
  'tools.profile',
  'log.level',
] as const;

/** Whether the file itself holds the key (not a default). */
function inFile(raw: Record<string, unknown>, key: string): boolean {
  let cur: unknown = raw;
  for (const seg of key.split('.')) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, seg)) return false;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return true;
}

/** The value as `config set` takes it on the command line: strings as they are, the rest as JSON. */
const asText = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

export function configView(s: AdminSources) {
  const file = s.paths.config;
  let raw: Record<string, unknown> = {};
  let values: ReturnType<typeof loadConfig> | undefined;
  let problem: string | undefined;
  try {
    raw = readConfigFile(file);
    values = loadConfig(s.paths, s.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problem = err.message;
  }
  return {
    file,
    ...(problem ? { problem } : {}),
    keys: FORM_KEYS.map((key) => {
      const field = lookupKey(key);
      const secret = field.secret === true;
      const value = values ? getConfigValue(values, key) : undefined;
      return {
        key,
        kind: field.kind,
        ...(field.kind === 'enum' ? { values: field.values } : {}),
        description: field.description,
        secret,
        // A secret is never sent back, only whether it is set.
        value: secret ? '' : asText(value),
        isSet: value !== undefined && value !== '',
        inFile: inFile(raw, key),
      };
    }),
  };
}

/** POST /api/config {"key":"agent.model","value":"TEXT"}: `pinclaw config set KEY TEXT`. */
export async function configSet(s: AdminSources, body: unknown) {
  const b = (body ?? {}) as Record<string, unknown>;
  const key = b.key;
  const value = b.value;
  if (typeof key !== 'string' || !(FORM_KEYS as readonly string[]).includes(key)) {
    throw new Refusal(400, `key: expected one of ${FORM_KEYS.join(', ')}, got ${JSON.stringify(key) ?? 'nothing'}; other keys are set with pinclaw config set KEY VALUE`);
  }
  if (typeof value !== 'string') throw new Refusal(400, `${key}: expected the value as text (as pinclaw config set takes it), got ${JSON.stringify(value) ?? 'nothing'}; nothing was written`);
  let remaining: string[];
  let encrypted: string[];
  try {
    remaining = await s.checkConfigSet(key, value);
    encrypted = setConfigValue(s.paths.config, key, value, { keyFile: s.paths.secretKey });
  } catch (err) {
    if (err instanceof ConfigError) throw new Refusal(400, errorMessage(err));
    throw err;
  }
  return { set: key, encrypted: encrypted.includes(key), stillToFix: remaining, note: 'saved; the gateway uses it after its next start (pinclaw service restart, or restart the gateway)' };
}
