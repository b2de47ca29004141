// The version is baked into the bundle at build time; a dev tree reads package.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './native/root.js';

declare const __PINCLAW_VERSION__: string | undefined;

export function pinclawVersion(): string {
  if (typeof __PINCLAW_VERSION__ === 'string') return __PINCLAW_VERSION__;
  const root = projectRoot();
  if (!root) return 'unknown';
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
