// Where the built-in profiles come from: boards/*.json in a dev tree, or the one asset
// `boards/boards.json` of the single executable (scripts/boards-assets.mjs writes it from the same
// files). Read only when a board command or check runs: the profiles stay out of the JS bundle,
// so an idle gateway never holds them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { isObject } from '../../is-object.js';
import { projectRoot } from '../../native/root.js';
import { isSea, seaTextAsset } from '../../native/sea.js';

export const BOARDS_ASSET = 'boards/boards.json';

/** One built-in profile file: its display name (boards/<id>.json) and its text. */
export interface ProfileFile {
  source: string;
  /** the id the file name promises */
  id: string;
  text: string;
  /** the profile's identify section, when it came without parsing the text (the executable's asset; null: none) */
  identify?: unknown;
}

export interface BuiltinFiles {
  files: ProfileFile[];
  /** a problem with the whole set (no project tree, damaged asset); the files may then be empty */
  error?: string;
}

/** Reads `boards/*.json` of a directory, sorted by name. */
export function readProfileDir(dir: string, display: (name: string) => string): ProfileFile[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((name) => ({ source: display(name), id: name.slice(0, -'.json'.length), text: readFileSync(join(dir, name), 'utf8') }));
}

/**
 * The asset's layout: { "identify": { "<id>.json": <its identify section> }, "profiles": { "<id>.json":
 * "<the file's text>" } }. Each profile keeps its file name so errors name the file it came from, as
 * in a dev tree. A start reads the identify sections of all (detection) and parses the text of the
 * one it validates: a first parse of the twelve whole took 1.4-5.1 ms (all their object shapes
 * new), of the identify sections and the texts 0.2-0.3 ms.
 */
export function filesFromAsset(text: string): ProfileFile[] {
  const asset = JSON.parse(text) as { identify?: unknown; profiles?: unknown };
  if (!isObject(asset.profiles)) throw new Error('no "profiles" object');
  if (!isObject(asset.identify)) throw new Error('no "identify" object');
  const identify = asset.identify;
  return Object.entries(asset.profiles).map(([name, value]) => {
    if (typeof value !== 'string') throw new Error(`profiles["${name}"] is not the text of a file`);
    return { source: `boards/${name}`, id: name.replace(/\.json$/, ''), text: value, identify: identify[name] ?? null };
  });
}

export function builtinFiles(): BuiltinFiles {
  if (isSea()) {
    try {
      return { files: filesFromAsset(seaTextAsset(BOARDS_ASSET)) };
    } catch (err) {
      return { files: [], error: `the built-in board profiles (asset ${BOARDS_ASSET}) cannot be read: ${errorMessage(err)}` };
    }
  }
  const root = projectRoot();
  if (!root) return { files: [], error: 'the built-in board profiles: no project tree found next to this script' };
  try {
    return { files: readProfileDir(join(root, 'boards'), (n) => `boards/${n}`) };
  } catch (err) {
    return { files: [], error: `the built-in board profiles in ${join(root, 'boards')} cannot be read: ${errorMessage(err)}` };
  }
}
