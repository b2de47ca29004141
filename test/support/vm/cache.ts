// The VM cache: everything that does not depend on a test's own files (packages, extracted kernels,
// headers, base initramfs images, built modules and probes) lives under $PINCLAW_VM_CACHE, default
// <repo>/.cache/vm. Entries are written to a temporary name and renamed into place, so two test
// files building the same entry at once (tap runs two in parallel) never see a half-written one.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..', '..');

export function cacheRoot(): string {
  return resolve(process.env.PINCLAW_VM_CACHE || join(repoRoot, '.cache', 'vm'));
}

export function cachePath(...parts: string[]): string {
  return join(cacheRoot(), ...parts);
}

export function sha256(...inputs: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const input of inputs) {
    // Length-prefixed, so ("ab", "c") and ("a", "bc") hash differently.
    hash.update(`${Buffer.byteLength(input)}:`);
    hash.update(input);
  }
  return hash.digest('hex');
}

/** A fresh path next to `final`, on the same filesystem so the rename into place is atomic. */
export function stagingPath(final: string): string {
  mkdirSync(dirname(final), { recursive: true });
  return `${final}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * Moves a finished entry into place. If another process got there first, its copy is as good as
 * ours (same key, same inputs): keep it and drop ours.
 */
export function publish(staging: string, final: string): void {
  try {
    renameSync(staging, final);
  } catch (error) {
    if (!existsSync(final)) throw error;
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Returns the cached entry at `final`, building it through a staging path when it is missing. */
export async function cached(final: string, build: (staging: string) => void | Promise<void>): Promise<string> {
  if (existsSync(final)) return final;
  const staging = stagingPath(final);
  try {
    await build(staging);
    publish(staging, final);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return final;
}
