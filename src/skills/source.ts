// Reads a skill's source (a directory, a .tar.gz or .zip file, or an https URL) into memory and
// checks every entry as it comes: its path (no `..`, no absolute path, no backslash or NUL), its
// type (files and directories only: a symlink, hard link or device is refused), and the running
// count of files and bytes, checked against each entry's declared size before its bytes are read.
// Nothing is written anywhere: install.ts writes only what this returns.
import { PinclawError } from '../errors.js';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { get } from 'node:https';
import { isAbsolute, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { ArchiveError, readTarGzFrom } from '../archive.js';
import { DISABLED_MARKER } from './state.js';
import { ZipError, zipEntries } from './zip.js';

/** A skill is instructions and a few scripts: these are far above any real one and far below harm. */
export const LIMITS = { files: 1000, bytes: 16 * 1024 * 1024 } as const;
const SCRIPT_EXT = /\.(sh|bash|zsh|py|js|mjs|cjs|ts|pl|rb|php|lua)$/i;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 5;

export interface SkillFile {
  /** relative to the skill's directory, '/'-separated */
  path: string;
  size: number;
  /** executable bit, a `#!` line or a script's extension */
  script: boolean;
  executable: boolean;
  data: Buffer;
}

export class SkillSourceError extends PinclawError {
  constructor(message: string) {
    super(message);
    this.name = 'SkillSourceError';
  }
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;

/** The entries as read; `label` names the source in errors. */
class Collector {
  files: SkillFile[] = [];
  dirs = new Set<string>();
  bytes = 0;
  constructor(readonly label: string) {}

  /** The entry's normalised path, or an error that names it. */
  path(raw: string): string {
    const fail = (why: string) => new SkillSourceError(`${this.label}: ${JSON.stringify(raw)} ${why}; refused before anything was written`);
    if (raw.includes('\0')) throw fail('holds a NUL character');
    if (raw.includes('\\')) throw fail("holds a backslash (paths in a skill use '/')");
    if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) throw fail('is an absolute path');
    const segs = raw.split('/').filter((s) => s !== '' && s !== '.');
    if (segs.includes('..')) throw fail("has a '..' component (it would land outside the skill's directory)");
    return segs.join('/');
  }

  /** Files and directories seen, each counted as it comes. */
  private entries = 0;

  private counted(): void {
    if (++this.entries > LIMITS.files) throw new SkillSourceError(`${this.label}: more than ${LIMITS.files} files and directories; refused before anything was written`);
  }

  /** Counted before the bytes are read: a declared size over the limit stops the read here. */
  count(path: string, size: number): void {
    this.counted();
    this.bytes += size;
    if (this.bytes > LIMITS.bytes) throw new SkillSourceError(`${this.label}: more than ${mib(LIMITS.bytes)} of files (at ${path}); a skill is instructions and a few scripts; refused before anything was written`);
  }

  grew(path: string, more: number): void {
    this.bytes += more;
    if (this.bytes > LIMITS.bytes) throw new SkillSourceError(`${this.label}: more than ${mib(LIMITS.bytes)} of files (at ${path}); refused before anything was written`);
  }

  add(path: string, mode: number, data: Buffer): void {
    if (!path) return;
    const executable = (mode & 0o111) !== 0;
    const script = executable || SCRIPT_EXT.test(path) || (data[0] === 0x23 && data[1] === 0x21);
    this.files.push({ path, size: data.length, script, executable, data });
  }

  dir(path: string): void {
    if (!path) return;
    this.counted();
    this.dirs.add(path);
  }
}

/** Files and directories only; a path that is both, or twice a file, is refused. */
function checkShape(c: Collector): void {
  const files = new Set<string>();
  for (const f of c.files) {
    if (files.has(f.path)) throw new SkillSourceError(`${c.label}: ${f.path} appears twice`);
    files.add(f.path);
  }
  for (const p of [...files, ...c.dirs]) {
    const segs = p.split('/');
    for (let i = 1; i < segs.length; i++) {
      const parent = segs.slice(0, i).join('/');
      if (files.has(parent)) throw new SkillSourceError(`${c.label}: ${parent} is both a file and a directory`);
    }
  }
  for (const d of c.dirs) if (files.has(d)) throw new SkillSourceError(`${c.label}: ${d} is both a file and a directory`);
}

function fromDirectory(dir: string, c: Collector): void {
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      // A clone's history is not part of the skill.
      if (name === '.git' && !rel) continue;
      const st = lstatSync(join(abs, name));
      if (st.isSymbolicLink()) throw new SkillSourceError(`${dir}: ${path} is a symbolic link; a skill holds files and directories only; refused before anything was written`);
      if (st.isDirectory()) {
        c.dir(path);
        walk(join(abs, name), path);
      } else if (st.isFile()) {
        c.count(path, st.size);
        const data = readFileSync(join(abs, name));
        // A file that grew since lstat is counted at what was read.
        if (data.length !== st.size) c.grew(path, data.length - st.size);
        c.add(path, st.mode, data);
      } else throw new SkillSourceError(`${dir}: ${path} is not a regular file (a device, FIFO or socket); refused before anything was written`);
    }
  };
  walk(dir, '');
}

async function fromTarGz(input: Readable, label: string, c: Collector): Promise<void> {
  try {
    await readTarGzFrom(input, label, (h) => {
      const path = c.path(h.path);
      if (h.type === 'dir') {
        c.dir(path);
        return undefined;
      }
      c.count(path, h.size);
      const parts: Buffer[] = [];
      return { data: (chunk) => void parts.push(Buffer.from(chunk)), end: () => c.add(path, h.mode, Buffer.concat(parts)) };
    });
  } catch (err) {
    if (err instanceof ArchiveError) throw new SkillSourceError(`${err.message}; refused before anything was written`);
    throw err;
  }
}

function fromZip(buf: Buffer, label: string, c: Collector): void {
  try {
    const entries = zipEntries(buf);
    // Every path, type and size is checked before the first entry is inflated.
    const paths = entries.map((e) => {
      const path = c.path(e.path);
      if (e.type === 'file') c.count(path, e.size);
      else c.dir(path);
      return path;
    });
    entries.forEach((e, i) => {
      if (e.type === 'file') c.add(paths[i]!, e.mode, e.read());
    });
  } catch (err) {
    if (err instanceof ZipError) throw new SkillSourceError(`${label}: ${err.message}; refused before anything was written`);
    throw err;
  }
}

/** GET over https, following redirects to https only, at most LIMITS.bytes. */
function download(url: string, redirects = 0): Promise<Buffer> {
  return new Promise((resolveBody, reject) => {
    const req = get(url, { timeout: DOWNLOAD_TIMEOUT_MS }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (redirects >= MAX_REDIRECTS) return reject(new SkillSourceError(`${url}: more than ${MAX_REDIRECTS} redirects`));
        const next = new URL(res.headers.location, url);
        if (next.protocol !== 'https:') return reject(new SkillSourceError(`${url}: redirects to ${next.href}, which is not https; refused`));
        return download(next.href, redirects + 1).then(resolveBody, reject);
      }
      if (status !== 200) {
        res.resume();
        return reject(new SkillSourceError(`${url}: the server answered ${status} ${res.statusMessage ?? ''}`.trimEnd()));
      }
      const declared = Number(res.headers['content-length']);
      if (declared > LIMITS.bytes) {
        res.destroy();
        return reject(new SkillSourceError(`${url}: ${declared} bytes, more than ${mib(LIMITS.bytes)}; not downloaded`));
      }
      const parts: Buffer[] = [];
      let got = 0;
      res.on('data', (chunk: Buffer) => {
        got += chunk.length;
        if (got > LIMITS.bytes) {
          res.destroy();
          reject(new SkillSourceError(`${url}: more than ${mib(LIMITS.bytes)}; download stopped`));
          return;
        }
        parts.push(chunk);
      });
      res.on('end', () => resolveBody(Buffer.concat(parts)));
      res.on('error', (err) => reject(new SkillSourceError(`${url}: ${err.message}`)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${DOWNLOAD_TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(new SkillSourceError(`${url}: ${err.message}`)));
  });
}

/** By the bytes, not the name: gzip (a .tar.gz) or zip. */
async function fromBytes(buf: Buffer, label: string, c: Collector): Promise<void> {
  if (buf[0] === 0x1f && buf[1] === 0x8b) return fromTarGz(Readable.from([buf]), label, c);
  if (buf.readUInt32LE(0) === 0x04034b50 || buf.readUInt32LE(0) === 0x06054b50) return fromZip(buf, label, c);
  throw new SkillSourceError(`${label}: neither a .tar.gz nor a .zip (it starts with ${JSON.stringify(buf.subarray(0, 8).toString('latin1'))})`);
}

export interface SkillSource {
  /** what the owner named, for messages */
  label: string;
  files: SkillFile[];
  dirs: string[];
}

/**
 * The skill's files, relative to its SKILL.md: a source whose entries all sit in one top directory
 * that holds SKILL.md (how archives are usually made: `weather/SKILL.md`) is read from inside it.
 */
export async function readSkillSource(src: string, cwd: string): Promise<SkillSource> {
  let c: Collector;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src)) {
    let url: URL;
    try {
      url = new URL(src);
    } catch {
      throw new SkillSourceError(`${src}: not a valid URL`);
    }
    if (url.protocol !== 'https:') throw new SkillSourceError(`${src}: only https URLs are fetched (a skill can run code: its origin must be authenticated); download it yourself and install the file`);
    c = new Collector(src);
    await fromBytes(await download(url.href), src, c);
  } else {
    const abs = isAbsolute(src) ? src : resolve(cwd, src);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new SkillSourceError(`${src}: no such file or directory`);
    }
    c = new Collector(src);
    if (st.isDirectory()) fromDirectory(abs, c);
    else if (st.isFile()) {
      if (st.size > LIMITS.bytes) throw new SkillSourceError(`${src}: ${st.size} bytes, more than ${mib(LIMITS.bytes)}; refused before anything was written`);
      await fromBytes(readFileSync(abs), src, c);
    } else throw new SkillSourceError(`${src}: not a directory or a file`);
  }
  checkShape(c);
  let files = c.files;
  let dirs = [...c.dirs];
  if (!files.some((f) => f.path === 'SKILL.md')) {
    const tops = new Set([...files.map((f) => f.path.split('/')[0]!), ...dirs.map((d) => d.split('/')[0]!)]);
    const [top] = tops;
    if (tops.size !== 1 || !files.some((f) => f.path === `${top}/SKILL.md`)) {
      throw new SkillSourceError(`${src}: no SKILL.md at its top (or in its one top directory); a skill is a directory with a SKILL.md`);
    }
    files = files.map((f) => ({ ...f, path: f.path.slice(top!.length + 1) }));
    dirs = dirs.filter((d) => d !== top).map((d) => d.slice(top!.length + 1));
  }
  if (files.some((f) => f.path === DISABLED_MARKER)) throw new SkillSourceError(`${src}: holds ${DISABLED_MARKER}, the name pinclaw uses to mark a skill disabled; remove it from the skill`);
  return { label: src, files, dirs };
}
