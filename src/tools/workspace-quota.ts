// files.workspaceQuotaMb: how much the workspace may hold, so a tool cannot fill the disk that also
// holds the database (a full one leaves every turn unsaved). write_file and edit_file know their
// size before they write and are refused past it. exec cannot be asked in advance, and RLIMIT_FSIZE
// bounds one file only (a loop of files is not bounded), and an unprivileged pinclaw cannot mount a
// size-limited file system for it; so a watcher reads the free space of the workspace's file system
// (statfs, one cheap call) every 100 ms while the command runs and kills its process group once the
// space it took passes what is left of the quota. What a command can write beyond that is what it
// writes in one interval: measured in test/workspace-quota.test.ts and stated in docs/tools.md.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { diskSpace, humanBytes } from '../store/disk.js';

export const MIB = 1024 * 1024;
/** How often exec's watcher looks. */
export const WATCH_MS = 100;
/** What a command may always take: an `rm` or a small log must run in a workspace at its quota. */
export const SLACK_BYTES = MIB;
/** Left free on the disk whatever the quota: room for the database to save the turn. */
export const RESERVE_BYTES = 16 * MIB;
/** A bound on the walk of one measure. */
const MAX_ENTRIES = 200_000;

/**
 * Bytes the workspace takes on disk (allocated blocks, as du counts them: a sparse file is what it
 * uses), links not followed. Unreadable parts count as nothing.
 */
export async function workspaceBytes(dir: string): Promise<number> {
  let total = 0;
  let seen = 0;
  const visit = async (path: string): Promise<void> => {
    if (++seen > MAX_ENTRIES) return;
    let st;
    try {
      st = await lstat(path);
    } catch {
      return;
    }
    total += st.blocks * 512;
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = await readdir(path);
    } catch {
      return;
    }
    for (const n of names) await visit(join(path, n));
  };
  await visit(dir);
  return total;
}

/** The refusal text for a write past the quota, or undefined when it fits. */
export function overQuota(usedBytes: number, growBytes: number, quotaMb: number): string | undefined {
  if (growBytes <= 0 || usedBytes + growBytes <= quotaMb * MIB) return undefined;
  return `the workspace holds ${humanBytes(usedBytes)}; ${humanBytes(growBytes)} more would take it past files.workspaceQuotaMb (${quotaMb} MiB); remove files from it (exec rm) or raise the quota`;
}

export interface GrowthWatch {
  /** true once the command was stopped for taking too much */
  readonly over: boolean;
  /** the most space the command took at any look, in bytes */
  readonly peakBytes: number;
  /** what was left of the quota when it started */
  readonly budgetBytes: number;
  stop(): void;
}

/**
 * Watches the free space of the workspace's file system while a command runs and calls `kill` once
 * it has taken more than what is left of the quota (and of the disk, less RESERVE_BYTES), never less
 * than SLACK_BYTES. Other writers on the same disk count against it too: it errs towards stopping.
 */
export function watchGrowth(workspace: string, usedBytes: number, quotaMb: number, kill: () => void): GrowthWatch {
  const start = diskSpace(workspace);
  const quotaLeft = quotaMb * MIB - usedBytes;
  const diskLeft = start ? start.freeBytes - RESERVE_BYTES : Infinity;
  const budget = Math.max(SLACK_BYTES, Math.min(quotaLeft, diskLeft));
  const state = { over: false, peakBytes: 0 };
  /** `final`: the command has ended; its figure is recorded, but nothing is killed or said killed. */
  const look = (final = false) => {
    const now = diskSpace(workspace);
    if (!start || !now) return;
    const taken = start.freeBytes - now.freeBytes;
    state.peakBytes = Math.max(state.peakBytes, taken);
    if (taken > budget && !state.over && !final) {
      state.over = true;
      kill();
    }
  };
  const timer = setInterval(() => look(), WATCH_MS);
  return {
    get over() {
      return state.over;
    },
    get peakBytes() {
      return state.peakBytes;
    },
    budgetBytes: budget,
    stop() {
      clearInterval(timer);
      look(true);
    },
  };
}
