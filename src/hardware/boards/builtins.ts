// Where the built-in profiles come from: boards/*.json in a dev tree, or the one asset
// `boards/boards.json` of the single executable (scripts/boards-assets.mjs writes it from the same
// files). Read only when a board command or check runs: the profiles stay out of the JS bundle,
// so an idle gateway never holds them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { projectRoot } from '../../native/root.js';
import { isSea, seaTextAsset } from '../../native/sea.js';

export const BOARDS_ASSET = 'boards/boards.json';

/** One built-in profile file: its display name (boards/<id>.json) and its text. */
export interface ProfileFile {
  source: string;
  /** the id the file name promises */
  id: string;
  text: string;
  /** the profile's JSON already parsed, when it came parsed (the executable's asset) */
  parsed?: unknown;
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
 * The asset's layout: { "profiles": { "<id>.json": <profile JSON> } }. Each profile keeps its file
 * name so errors name the file it came from, as in a dev tree.
 */
export function filesFromAsset(text: string): ProfileFile[] {
  const parsed = JSON.parse(text) as { profiles?: unknown };
  if (typeof parsed.profiles !== 'object' || parsed.profiles === null || Array.isArray(parsed.profiles)) throw new Error('no "profiles" object');
  // The text is made only for the profile that is validated (the one a board uses): written back and
  // parsed again, the twelve took about 1 ms of every gateway start.
  return Object.entries(parsed.profiles as Record<string, unknown>).map(([name, value]) => {
    let text: string | undefined;
    return {
      source: `boards/${name}`,
      id: name.replace(/\.json$/, ''),
      parsed: value,
      get text() {
        return (text ??= JSON.stringify(value));
      },
    };
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
