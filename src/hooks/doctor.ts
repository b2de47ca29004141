// doctor's look at config.hooks: for each configured hook (event, index, matcher), whether the
// program its command runs is there and inside the sandbox's reach (the system, the workspace,
// sandbox.allowedRoots: a script in $PINCLAW_HOME or /opt is invisible to it), whether the sandbox
// itself works here, and what a failure does (onFailure, timeout). Nothing is run: a hook may act.
// Part of the hooks chunk (scripts/build.mjs), loaded by doctor only.
import { accessSync, constants, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { failureMode, HOOK_EVENTS } from '../config/hooks.js';
import type { PinclawConfig } from '../config/schema.js';
import { chooseBackend, detectSandbox, findExecutable } from '../sandbox/detect.js';
import { pathRules } from '../sandbox/policy.js';

export interface HooksCheck {
  name: 'hooks';
  state: 'ok' | 'warn' | 'fail';
  detail: string;
}

/** Words the shell runs itself: nothing to find on disk. */
const BUILTINS = new Set(['exit', 'echo', 'printf', 'cd', 'test', '[', 'true', 'false', ':', 'read', 'exec', 'if', 'for', 'while', 'case', '{', '(', 'set', 'export', 'trap']);
/** Interpreters whose first argument is the script they run: that file must be reachable too. */
const INTERPRETERS = /^(sh|bash|dash|python3?|node|perl|ruby|lua)$/;

/** The words of a command's first simple command, with quotes taken off (not a shell parser: enough to find a program). */
export function commandWords(command: string): string[] {
  const first = command.trim().split(/\s*(?:&&|\|\||;|\||\n)\s*/)[0] ?? '';
  // A word is quoted and unquoted parts run together (BAR='a b'); the quotes then go.
  const words = [...first.matchAll(/(?:'[^']*'|"[^"]*"|[^\s'"]+)+/g)].map((m) => m[0].replace(/'([^']*)'|"([^"]*)"/g, '$1$2'));
  // Leading VAR=value assignments are the command's environment, not its program.
  while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
  return words;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether the sandbox's path rules let a command read `path`. */
function inReach(path: string, roots: readonly string[]): boolean {
  const p = real(path);
  return roots.some((root) => {
    const rel = relative(root, p);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  });
}

/** What is wrong with one hook's program (and script), or '' with what was found. */
function programOf(command: string, workspace: string, roots: readonly string[] | null): { problem?: string; found: string } {
  const words = commandWords(command);
  const program = words[0];
  if (!program) return { problem: 'the command is empty', found: '' };
  if (BUILTINS.has(program)) return { found: `${program} (a shell builtin)` };
  // Hooks run with the workspace as their working directory.
  const file = program.includes('/') ? resolve(workspace, program) : findExecutable(program, { PATH: '/usr/local/bin:/usr/bin:/bin' });
  if (!file) return { problem: `its program ${program} is not installed (not in /usr/local/bin:/usr/bin:/bin, the sandbox's PATH)`, found: '' };
  if (!executable(file)) return { problem: `its program ${file} ${readable(file) ? 'is not executable (chmod +x)' : 'does not exist'}`, found: '' };
  if (roots && !inReach(file, roots)) return { problem: `its program ${file} is outside the sandbox's reach (add its directory to sandbox.allowedRoots)`, found: '' };
  const script = INTERPRETERS.test(program.split('/').pop()!) ? words.slice(1).find((w) => !w.startsWith('-')) : undefined;
  if (script && (script.includes('/') || /\.\w+$/.test(script))) {
    const path = resolve(workspace, script);
    if (!readable(path)) return { problem: `its script ${path} does not exist or cannot be read`, found: '' };
    if (roots && !inReach(path, roots)) return { problem: `its script ${path} is outside the sandbox's reach (move it into the workspace, or add its directory to sandbox.allowedRoots)`, found: '' };
    return { found: `${file} ${path}` };
  }
  return { found: file };
}

export async function hooksCheck(config: PinclawConfig, workspace: string): Promise<HooksCheck> {
  const choice = chooseBackend(config.sandbox.backend, await detectSandbox());
  const sandbox = 'error' in choice ? null : choice.backend;
  // Where a confined hook can read: the same rules exec gets (the scratch $TMPDIR left out).
  const roots = sandbox && sandbox !== 'none' ? pathRules({ workspace: real(workspace), tmp: real(workspace), allowedRoots: config.sandbox.allowedRoots }).map((r) => r.path) : null;
  const lines: string[] = [];
  let state: HooksCheck['state'] = 'ok';
  const worse = (s: HooksCheck['state']) => {
    if (s === 'fail' || (s === 'warn' && state === 'ok')) state = s;
  };
  for (const event of HOOK_EVENTS) {
    (config.hooks[event] ?? []).forEach((spec, i) => {
      const mode = failureMode(event, spec);
      const where = `hooks.${event}[${i}]${spec.matcher ? ` (matcher ${spec.matcher})` : ''}`;
      const tail = `onFailure ${mode}${spec.onFailure ? '' : ' (default)'}, timeout ${spec.timeoutMs} ms`;
      const box = sandbox === null ? `no sandbox: ${'error' in choice ? choice.error : ''}` : sandbox === 'none' ? 'unconfined (sandbox.backend none)' : `sandbox ${sandbox}`;
      const p = programOf(spec.command ?? '', workspace, roots);
      // A hook that cannot run fails every time: its onFailure then decides, on every event it matches.
      const broken = p.problem ?? (sandbox === null ? 'it cannot run: the sandbox does not work here' : undefined);
      if (broken) worse(mode === 'block' ? 'fail' : 'warn');
      lines.push(`${where}: ${spec.command}: ${broken ? `${broken}${mode === 'block' ? ', so every event it matches is blocked' : ''}` : p.found}; ${box}; ${tail}`);
    });
  }
  return { name: 'hooks', state, detail: lines.join('; ') || 'none configured' };
}
