// Every write pinclaw makes to config.json goes through here, so that a secret field is never left
// in clear by one of them: values of fields the schema marks secret are encrypted (secret.key
// created on first need) before the file is written, whichever key the write was about. That is
// also how a config from before this rule (or edited by hand) gets its secrets encrypted: on its
// first write. The one exception is the key the owner explicitly sets with `config set --plain`.
import { dirname } from 'node:path';
import { PinclawError } from '../errors.js';
import { ensureWritableDir, writeFailure, writeFileAtomic } from '../fsutil.js';
import { secretSlots } from './schema.js';
import { encryptSecret, isEncrypted, secretKey } from './secrets.js';

/** Where a config and its key live (a Paths has both). */
export interface ConfigFiles {
  config: string;
  secretKey: string;
}

/** The secret fields of a raw config that hold a value in clear (a non-empty string not `enc:`). */
export function clearSecrets(raw: unknown): string[] {
  return secretSlots(raw)
    .filter(({ parent, key }) => typeof parent[key] === 'string' && parent[key] !== '' && !isEncrypted(parent[key]))
    .map((s) => s.path);
}

/**
 * Encrypts, in place, every secret field of `raw` held in clear except the path `keepPlain`;
 * returns the paths it encrypted. The key is read (or created, 0600) only when there is one to encrypt.
 */
export function encryptClearSecrets(raw: Record<string, unknown>, keyFile: string, keepPlain?: string): string[] {
  let key: Buffer | undefined;
  const done: string[] = [];
  for (const { path, parent, key: name } of secretSlots(raw)) {
    const value = parent[name];
    if (path === keepPlain || typeof value !== 'string' || value === '' || isEncrypted(value)) continue;
    key ??= secretKey(keyFile, true);
    parent[name] = encryptSecret(value, key);
    done.push(path);
  }
  return done;
}

/**
 * Writes a whole raw config (atomically; a new file 0600, an existing one keeps its mode) with its
 * clear secrets encrypted first. Returns the paths encrypted, for the caller to tell the owner. A
 * failed write (a full disk, a read-only file system) is a message naming the file and the way out,
 * and the old file is left as it was.
 */
export function writeConfigFile(files: ConfigFiles, raw: Record<string, unknown>, opts: { keepPlain?: string } = {}): string[] {
  const encrypted = encryptClearSecrets(raw, files.secretKey, opts.keepPlain);
  ensureWritableDir(dirname(files.config), 'config directory');
  try {
    writeFileAtomic(files.config, JSON.stringify(raw, null, 2) + '\n', 0o600);
  } catch (err) {
    throw new PinclawError(`cannot write ${files.config}: ${writeFailure(err, dirname(files.config))}; ${files.config} was not changed`);
  }
  return encrypted;
}
