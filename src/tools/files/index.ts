// The workspace file tools, sharing one confinement (the workspace plus files.roots and
// files.readOnlyRoots) and the files.* caps.
import type { Tool } from '../types.js';
import type { FilesSettings } from './common.js';
import { createConfinement, type LockedFile } from './confine.js';
import { editFileTool } from './edit_file.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { listDirTool } from './list_dir.js';
import { readFileTool } from './read_file.js';
import { writeFileTool } from './write_file.js';

export type { FilesSettings } from './common.js';
export type { LockedFile } from './confine.js';

/**
 * Throws a ConfigError (exit 78) when a configured root is relative or '/'. `locked`: files this
 * process holds a POSIX lock on, which the tools must never open (confine.ts, LockedFile).
 */
export function fileTools(opts: { workspace: string; settings: FilesSettings; locked?: readonly LockedFile[] }): Tool[] {
  const d = { confinement: createConfinement(opts.workspace, opts.settings, opts.locked), settings: opts.settings };
  return [readFileTool(d), writeFileTool(d), editFileTool(d), listDirTool(d), globTool(d), grepTool(d)];
}
