// V8's answer to catastrophic backtracking: after a bounded number of backtracks a regular expression
// is re-run on the linear-time engine, so `(a+)+$` against a long line of `a` returns at once instead
// of freezing the event loop. Patterns the linear engine cannot run (backreferences, lookaround) are
// not covered; code that runs a model's pattern checks for those with `isLinear` and contains them.
import { setFlagsFromString } from 'node:v8';

let enabled = false;
const FLAGS = ['--enable-experimental-regexp-engine-on-excessive-backtracks', '--enable-experimental-regexp-engine'];

/** Idempotent; called at process start (main.ts) and by every module that compiles untrusted patterns. */
export function enableRegexFallback(): void {
  if (enabled) return;
  enabled = true;
  // A Node started with both needs no node:v8. The executable's loader (scripts/sea-main.cjs) has
  // set them before the bundle runs, with node:v8 already loaded: setting them again costs nothing.
  if (FLAGS.every((f) => process.execArgv.includes(f))) return;
  // The second flag only makes the 'l' flag available, which `isLinear` uses to ask V8 itself.
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
  setFlagsFromString('--enable-experimental-regexp-engine');
}

/** True when V8's linear-time engine accepts the pattern, i.e. it can never backtrack without bound. */
export function isLinear(source: string, flags: string): boolean {
  enableRegexFallback();
  try {
    new RegExp(source, `${flags}l`);
    return true;
  } catch {
    return false;
  }
}
