// Secrets at rest: a config value "enc:v1:<base64 iv|tag|ciphertext>" is AES-256-GCM under the key in
// $PINCLAW_HOME/secret.key (32 random bytes, mode 0600, made on first need). The file on disk then
// holds no usable API key, and a tampered value fails authentication instead of decrypting to junk.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ConfigError, errorMessage } from '../errors.js';
import { ensureWritableDir } from '../fsutil.js';

const PREFIX = 'enc:v1:';
const KEY_BYTES = 32;

export function isEncrypted(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('enc:');
}

function readKey(file: string): Buffer | null {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`cannot read ${file}: ${errorMessage(err)}`);
  }
  // A key others can read protects nothing: refuse it rather than pretend.
  if (mode & 0o077) throw new ConfigError(`${file} has mode ${mode.toString(8).padStart(4, '0')}; it must be readable by its owner only (chmod 600 ${file})`);
  const key = readFileSync(file);
  if (key.length !== KEY_BYTES) throw new ConfigError(`${file} holds ${key.length} bytes, expected ${KEY_BYTES}`);
  return key;
}

/**
 * Writes a complete 0600 key under a temporary name and links it into place. Unlike a rename, the
 * link fails when the file exists, so two processes creating a key at once agree on the first one
 * instead of the second silently replacing a key the first already encrypted with.
 */
function createKey(file: string): Buffer {
  ensureWritableDir(dirname(file), 'PINCLAW_HOME');
  const key = randomBytes(KEY_BYTES);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigError(`cannot create ${file}: ${errorMessage(err)}`);
    return readKey(file)!;
  } finally {
    unlinkSync(tmp);
  }
}

/** The key, created (atomically, 0600) when there is none yet. */
export function secretKey(file: string, create: boolean): Buffer {
  const existing = readKey(file);
  if (existing) return existing;
  if (!create) throw new ConfigError(`the config holds encrypted values but ${file} is missing`);
  return createKey(file);
}

export function encryptSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** `where` names the key in errors (e.g. "providers.anthropic.apiKey"). */
export function decryptSecret(value: string, key: Buffer, where: string): string {
  if (!value.startsWith(PREFIX)) throw new ConfigError(`${where}: unknown encrypted format (expected ${PREFIX}…)`);
  const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
  if (raw.length < 28) throw new ConfigError(`${where}: encrypted value is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new ConfigError(`${where}: cannot decrypt (the value was altered, or secret.key is not the key it was written with)`);
  }
}
