// Typed façade over pinclaw's own addon. Each function has a pure-TypeScript path that is used when
// the addon is missing; `reference.ts` holds those, and tests hold the addon to them.
import { log } from '../log.js';
import { addonStatus, tryAddon } from './loader.js';
import * as reference from './reference.js';

export interface NativeInfo {
  version: string;
  napiVersion: number;
  arch: string;
  compiler: string;
  features: string[];
}

export interface PinclawAddon {
  info(): NativeInfo;
  notify(socketPath: string, state: string): boolean;
  trimMemory(): boolean;
  trimFilePages(dryRun?: boolean): FilePagesTrim;
  limitMallocArenas(count: number): boolean;
  fixMallocThresholds(bytes: number): boolean;
  reduceHeap(): void;
  /** byHand: the openat walk of kernels without openat2, for the tests */
  openBeneath(dirFd: number, path: string, byHand?: boolean): number;
  hmacSha256(key: string, text: string): string;
}

/** What trimFilePages found in the read-only private file mappings (bytes are multiples of a page). */
export interface FilePagesTrim {
  /** Mappings looked at. */
  mappings: number;
  /** Their mapped pages that were still the file's: dropped (or, in a dry run, droppable). */
  fileBytes: number;
  /** Their pages the process had written, which a drop would lose: kept. */
  keptBytes: number;
  /** madvise calls made (or that would be). */
  ranges: number;
}

export function addon(): PinclawAddon | null {
  const a = tryAddon<PinclawAddon>('pinclaw');
  if (!a) log.once('native-missing', 'warn', `${addonStatus('pinclaw').error}; running on the TypeScript fallbacks`);
  return a;
}

/**
 * HMAC-SHA256 of text's UTF-8 under key's UTF-8, base64url without padding: the fleet's signatures.
 * The addon's is several times cheaper in a running round trip than node:crypto's (native/hmac.cc).
 */
export function hmacSha256(key: string, text: string): string {
  const a = addon();
  return a ? a.hmacSha256(key, text) : reference.hmacSha256(key, text);
}

/** What the addon offers, or null when pinclaw runs on the fallbacks. */
export function nativeInfo(): NativeInfo | null {
  return addon()?.info() ?? null;
}

/**
 * sd_notify: tells systemd about readiness and shutdown. Returns false when not run under a
 * notify-type unit. The fallback needs `NotifyAccess=all`, because systemd-notify is a child process.
 */
export function sdNotify(state: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const socket = env.NOTIFY_SOCKET ?? '';
  if (!socket) return false;
  const a = addon();
  return a ? a.notify(socket, state) : reference.notify(socket, state);
}

/** Gives freed heap memory back to the OS (glibc's malloc_trim); false when nothing could be done. */
export function trimMemory(): boolean {
  const a = addon();
  return a ? a.trimMemory() : reference.trimMemory();
}

/**
 * At most `count` glibc malloc arenas from now on (native/memory.cc says why a gateway wants one);
 * false without the addon or glibc.
 */
export function limitMallocArenas(count: number): boolean {
  const a = addon();
  return a && typeof a.limitMallocArenas === 'function' ? a.limitMallocArenas(count) : reference.limitMallocArenas();
}

/**
 * Fixes glibc's mmap and trim thresholds at `bytes`, so that freeing one large block does not raise
 * them for good (native/memory.cc says what that costs); false without the addon or glibc.
 */
export function fixMallocThresholds(bytes: number): boolean {
  const a = addon();
  return a && typeof a.fixMallocThresholds === 'function' ? a.fixMallocThresholds(bytes) : reference.fixMallocThresholds();
}

/**
 * Drops the pages of the executable, the addons and the libraries that this process has mapped
 * but not written from its page tables (native/memory.cc says why that is safe); what it runs next
 * faults back in from the page cache. Null without the addon: JavaScript cannot call madvise.
 */
export function trimFilePages(dryRun = false): FilePagesTrim | null {
  const a = addon();
  // An addon from before this function (a stale dev build) lacks it: nothing is trimmed.
  return a && typeof a.trimFilePages === 'function' ? a.trimFilePages(dryRun) : reference.trimFilePages();
}

/**
 * Has V8 give back what it holds beyond the live objects (native/memory.cc: LowMemoryNotification —
 * full collections, compaction, the young generation and V8's page pool shrunk). Without the addon,
 * a full collection. Several full collections: once per idle period, not per turn.
 */
export function reduceHeap(): void {
  const a = addon();
  // An addon from before this function (a stale dev build) lacks it: the fallback's collection.
  if (a && typeof a.reduceHeap === 'function') a.reduceHeap();
  else reference.reduceHeap();
}

export { O_PATH } from './reference.js';

/**
 * An O_PATH descriptor of `path` (relative, no '..') below the directory `dirFd`, no symlink followed
 * at any component (native/beneath.cc: openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk
 * by hand), or -errno: ELOOP for a link in the middle, EXDEV for '..' or an absolute path. A link as
 * the last component gives a descriptor of the link itself, which fstat shows.
 */
export function openBeneath(dirFd: number, path: string): number {
  const a = addon();
  // An addon from before this function (a stale dev build) lacks it: the reference walks the same way.
  return a && typeof a.openBeneath === 'function' ? a.openBeneath(dirFd, path) : reference.openBeneath(dirFd, path);
}
