// Access to the assets of a single executable application. In a dev tree `isSea()` is false and
// nothing here is used; node:sea exists on every Node this project runs on (>= 20).
import { createRequire } from 'node:module';

interface SeaModule {
  isSea(): boolean;
  getRawAsset(key: string): ArrayBuffer;
  getAsset(key: string, encoding: string): string;
}

let sea: SeaModule | null | undefined;

function seaModule(): SeaModule | null {
  if (sea === undefined) {
    try {
      sea = createRequire(import.meta.url)('node:sea') as SeaModule;
    } catch {
      sea = null;
    }
  }
  return sea;
}

export function isSea(): boolean {
  return seaModule()?.isSea() ?? false;
}

/** Bytes of an embedded asset, without a copy. */
export function seaAsset(key: string): Uint8Array {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  return new Uint8Array(m.getRawAsset(key));
}

export function seaTextAsset(key: string): string {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  return m.getAsset(key, 'utf8');
}
