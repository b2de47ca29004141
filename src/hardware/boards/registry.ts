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
import { byText } from './order.js';

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
  /**
   * The valid profiles that could match a device-tree model or one of these USB ids, validating
   * only those: what detection needs in a long-running process.
   */
  candidates(model: string | null, usb: readonly { vid: string; pid: string }[]): LoadedProfile[];
}

export function userBoardsDir(paths: Pick<Paths, 'home'>): string {
  return join(paths.home, 'boards');
}

export interface RegistryOptions {
  /** the user's profile directory ($PINCLAW_HOME/boards); omitted: built-ins only */
  userDir?: string;
  /** the built-in files (tests); omitted: the dev tree's boards/ or the executable's asset */
  builtins?: BuiltinFiles;
}

/**
 * One file, validated on first use: checking all twelve profiles costs a long-running process
 * several MiB (measured: about 6.6 MiB of RSS for the twelve, 0.8 MiB for one), and a gateway needs
 * only the one that describes its board. The raw JSON (the executable's asset: only its identify
 * section) is kept so detection can find candidates without validating the rest.
 */
interface Entry {
  file: ProfileFile;
  source: LoadedProfile['source'];
  raw: unknown;
  result?: { loaded?: LoadedProfile; skipped?: SkippedProfile };
}

function entryOf(file: ProfileFile, source: LoadedProfile['source']): Entry {
  if (file.identify !== undefined) return { file, source, raw: { identify: file.identify } };
  let raw: unknown;
  try {
    raw = JSON.parse(file.text) as unknown;
  } catch {
    raw = undefined; // parseProfile reports the syntax error with its line and column
  }
  return { file, source, raw };
}

function validate(e: Entry, overrides?: string): { loaded?: LoadedProfile; skipped?: SkippedProfile } {
  if (!e.result) {
    const r = parseProfile(e.file.text, e.file.source, e.file.id);
    e.result = r.profile
      ? { loaded: { profile: r.profile, source: e.source, file: e.file.source, ...(overrides ? { overrides } : {}) } }
      : { skipped: { file: e.file.source, errors: r.errors } };
  }
  return e.result;
}

/** What a raw profile says it is identified by, read without trusting its shape. */
function rawIdentify(raw: unknown): { models: string[]; usb: { vid: string; pid: string }[] } {
  const id = (raw as { identify?: { deviceTreeModel?: unknown; usb?: unknown } } | undefined)?.identify;
  const models = Array.isArray(id?.deviceTreeModel) ? id.deviceTreeModel.filter((m): m is string => typeof m === 'string') : [];
  const usb = Array.isArray(id?.usb) ? id.usb.filter((u): u is { vid: string; pid: string } => typeof u === 'object' && u !== null && typeof (u as { vid?: unknown }).vid === 'string' && typeof (u as { pid?: unknown }).pid === 'string') : [];
  return { models, usb };
}

// The built-in files cannot change while the process runs: read once.
let builtinCache: BuiltinFiles | undefined;
let builtinEntries: Entry[] | undefined;

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

export function loadBoardRegistry(opts: RegistryOptions = {}): BoardRegistry {
  const b = opts.builtins ?? (builtinCache ??= builtinFiles());
  const problems = b.error ? [b.error] : [];
  const unreadable: SkippedProfile[] = [];
  // The built-in entries (parsed, and checked when first asked) are shared by every registry of the
  // process: a gateway's start builds three (config checks, hardware, the prompt's board).
  const builtin = opts.builtins ? b.files.map((f) => entryOf(f, 'built-in')) : (builtinEntries ??= b.files.map((f) => entryOf(f, 'built-in')));
  const user = opts.userDir ? readUserFiles(opts.userDir, problems, unreadable).map((f) => entryOf(f, 'user')) : [];
  // A valid user profile with a built-in's id replaces it; an invalid one is skipped and the
  // built-in stays. The id is the file name's (the schema requires them to agree).
  const builtinById = new Map(builtin.map((e) => [e.file.id, e]));
  const loadedOf = (e: Entry) => validate(e, e.source === 'user' ? builtinById.get(e.file.id)?.file.source : undefined).loaded;
  const byId = (id: string): LoadedProfile | undefined => {
    const mine = user.find((e) => e.file.id === id);
    const own = mine ? loadedOf(mine) : undefined;
    if (own) return own;
    const base = builtinById.get(id);
    return base ? loadedOf(base) : undefined;
  };
  const ids = () => [...new Set([...builtin, ...user].map((e) => e.file.id))].sort();
  let all: LoadedProfile[] | undefined;
  const everything = () => (all ??= ids().flatMap((id) => byId(id) ?? []).sort((a, c) => byText(a.profile.id, c.profile.id)));
  return {
    get profiles() {
      return everything();
    },
    get skipped() {
      everything();
      return [...unreadable, ...[...builtin, ...user].flatMap((e) => (e.result?.skipped ? [e.result.skipped] : []))];
    },
    problems,
    get: byId,
    candidates(model, usb) {
      const wanted = ids().filter((id) => {
        const entries = [...user, ...builtin].filter((e) => e.file.id === id);
        return entries.some((e) => {
          const r = rawIdentify(e.raw);
          return (model !== null && r.models.some((m) => model.startsWith(m))) || r.usb.some((u) => usb.some((x) => x.vid === u.vid && x.pid === u.pid));
        });
      });
      return wanted.flatMap((id) => byId(id) ?? []);
    },
  };
}

/** "unknown board profile 'rpi4' (did you mean 'rpi-4b'?)", with the known ids when none is near. */
export function unknownProfileMessage(id: string, registry: BoardRegistry): string {
  const ids = registry.profiles.map((p) => p.profile.id);
  const near = closest(id, ids);
  return `unknown board profile '${id}' (${near ? `did you mean '${near}'?` : `known: ${ids.join(', ') || 'none'}`})`;
}
