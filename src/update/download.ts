// Fetching a release's files from update.url. Small files into memory (with a cap), the executable
// straight to a file next to the one it replaces (the same file system, so the swap is a rename),
// fsynced before anything reads it back.
import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { errorMessage } from '../errors.js';
import { httpFetch } from '../net/fetch.js';

/** The URL of a file in the release location; update.url may end with a slash or not. */
export function releaseFileUrl(base: string, name: string): string {
  return `${base.replace(/\/+$/, '')}/${name}`;
}

/** Checks update.url: an absolute http(s) URL. Returns a problem in words, or undefined. */
export function releaseUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `update.url ${JSON.stringify(url)} is not a URL; set it to the release location, e.g. https://example.org/pinclaw/releases/latest`;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `update.url ${JSON.stringify(url)} must be http:// or https:// (the files are checked by their signature either way)`;
  return undefined;
}

const TIMEOUT_MS = 60_000;

async function get(url: string, signal?: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await httpFetch(url, { redirect: 'follow', signal: signal ?? AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    throw new Error(`cannot fetch ${url}: ${errorMessage(cause ?? err)}`);
  }
  if (!res.ok) throw new Error(`cannot fetch ${url}: the server answered ${res.status} ${res.statusText}`.trimEnd());
  return res;
}

/** A small file of the release (the checksums, the signature), refused past maxBytes. */
export async function fetchSmall(url: string, maxBytes = 64 * 1024): Promise<Buffer> {
  const res = await get(url);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`${url} is larger than ${maxBytes} bytes: not a release's ${url.slice(url.lastIndexOf('/') + 1)}`);
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

/**
 * Downloads url into `file` (created, mode 0700 until it is checked), fsynced. A failure removes
 * the partial file. Returns the byte count.
 */
export async function downloadTo(url: string, file: string): Promise<number> {
  // No overall timeout for a large file on a slow link: a stalled one is caught by the idle timer.
  const ac = new AbortController();
  let idle = setTimeout(() => ac.abort(new Error(`no data for ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
  const fd = openSync(file, 'wx', 0o700);
  let size = 0;
  try {
    const res = await get(url, ac.signal);
    const expected = Number(res.headers.get('content-length') ?? NaN);
    const body = res.body ?? [];
    const chunks = async function* () {
      try {
        yield* body;
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        throw new Error(`the download of ${url} broke off after ${size} bytes: ${errorMessage(cause ?? err)}`);
      }
    };
    for await (const chunk of chunks()) {
      clearTimeout(idle);
      idle = setTimeout(() => ac.abort(new Error(`no data for ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
      const buf = Buffer.from(chunk);
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      size += buf.length;
    }
    if (Number.isFinite(expected) && size !== expected) throw new Error(`the download of ${url} ended after ${size} of ${expected} bytes`);
    fsyncSync(fd);
    return size;
  } catch (err) {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
    throw err;
  } finally {
    clearTimeout(idle);
    closeSync(fd);
  }
}
