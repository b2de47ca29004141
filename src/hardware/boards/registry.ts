// The known board profiles: the built-in ones and the user's own in $PINCLAW_HOME/boards/*.json.
// A user profile with a built-in's id replaces it (and says so); a profile that fails the schema
// is skipped with its errors, never fatal: one bad file must not take the other boards down.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import type { Paths } from '../../paths.js';
import { closest } from '../../suggest.js';
import { builtinFiles, type BuiltinFiles, type ProfileFile } from './builtins.js';
import { parseProfile, type BoardProfile } from './schema.js';

export interface LoadedProfile {
  profile: BoardProfile;
  source: 'built-in' | 'user';
  /** boards/rpi-4b.json for a built-in, the absolute path of a user file */
  file: string;
  /** on a user profile that replaces a built-in: the built-in's file */
  overrides?: string;
}

export interface SkippedProfile {
  file: string;
  errors: string[];
}

export interface BoardRegistry {
  /** sorted by id */
  profiles: LoadedProfile[];
  /** files that failed the schema, with every error */
  skipped: SkippedProfile[];
  /** problems with a whole directory (unreadable) or the built-in set */
  problems: string[];
  get(id: string): LoadedProfile | undefined;
}

export function userBoardsDir(paths: Pick<Paths, 'home'>): string {
  return join(paths.home, 'boards');
}

interface Parsed {
  ok: LoadedProfile[];
  skipped: SkippedProfile[];
}

function parseFiles(files: readonly ProfileFile[], source: LoadedProfile['source']): Parsed {
  const out: Parsed = { ok: [], skipped: [] };
  for (const f of files) {
    const r = parseProfile(f.text, f.source, f.id);
    if (r.profile) out.ok.push({ profile: r.profile, source, file: f.source });
    else out.skipped.push({ file: f.source, errors: r.errors });
  }
  return out;
}

// The built-ins cannot change while the process runs: parsed and checked once.
let builtinCache: { parsed: Parsed; error?: string } | undefined;

function builtins(given?: BuiltinFiles): { parsed: Parsed; error?: string } {
  if (given) return { parsed: parseFiles(given.files, 'built-in'), error: given.error };
  if (!builtinCache) {
    const b = builtinFiles();
    builtinCache = { parsed: parseFiles(b.files, 'built-in'), error: b.error };
  }
  return builtinCache;
}

function readUserFiles(dir: string, problems: string[], skipped: SkippedProfile[]): ProfileFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') problems.push(`cannot read the board profile directory ${dir}: ${code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'not a directory' : errorMessage(err)}`);
    return [];
  }
  const files: ProfileFile[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      files.push({ source: file, id: name.slice(0, -'.json'.length), text: readFileSync(file, 'utf8') });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      skipped.push({ file, errors: [`${file}: cannot be read: ${code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : errorMessage(err)}`] });
    }
  }
  return files;
}

export interface RegistryOptions {
  /** the user's profile directory ($PINCLAW_HOME/boards); omitted: built-ins only */
  userDir?: string;
  /** the built-in files (tests); omitted: the dev tree's boards/ or the executable's asset */
  builtins?: BuiltinFiles;
}

export function loadBoardRegistry(opts: RegistryOptions = {}): BoardRegistry {
  const b = builtins(opts.builtins);
  const problems = b.error ? [b.error] : [];
  const skipped = [...b.parsed.skipped];
  const byId = new Map<string, LoadedProfile>(b.parsed.ok.map((p) => [p.profile.id, p]));
  if (opts.userDir) {
    const user = parseFiles(readUserFiles(opts.userDir, problems, skipped), 'user');
    skipped.push(...user.skipped);
    for (const p of user.ok) {
      const builtin = byId.get(p.profile.id);
      byId.set(p.profile.id, builtin ? { ...p, overrides: builtin.file } : p);
    }
  }
  const profiles = [...byId.values()].sort((a, b2) => a.profile.id.localeCompare(b2.profile.id));
  return { profiles, skipped, problems, get: (id) => byId.get(id) };
}

/** "unknown board profile 'rpi4' (did you mean 'rpi-4b'?)", with the known ids when none is near. */
export function unknownProfileMessage(id: string, registry: BoardRegistry): string {
  const ids = registry.profiles.map((p) => p.profile.id);
  const near = closest(id, ids);
  return `unknown board profile '${id}' (${near ? `did you mean '${near}'?` : `known: ${ids.join(', ') || 'none'}`})`;
}
