// The parts of command hooks that are about the config (docs/hooks.md): which events exist, which
// tool names a matcher selects, and the checks JSON types cannot express (a command is required,
// a matcher must compile). Pure, so validation and the hook runner agree on what a matcher means.
import type { PinclawConfig } from './schema.js';

/** The shape of validate.ts's ConfigIssue (not imported: validate.ts imports this module). */
interface ConfigIssue {
  path: string;
  expected: string;
  found: string;
  hint?: string;
}

export type HookEvent = keyof PinclawConfig['hooks'];
export type HookSpec = PinclawConfig['hooks'][HookEvent][number];

export const HOOK_EVENTS: readonly HookEvent[] = ['PreToolUse', 'PostToolUse', 'MessageReceived', 'MessageSending', 'TurnEnd', 'SessionStart', 'HardwareTrigger'];

/** Where a hook's failure (crash, timeout, unreadable output) is not said: a veto point fails closed. */
export function failureMode(event: HookEvent, spec: HookSpec): 'block' | 'continue' {
  return spec.onFailure ?? (event === 'PreToolUse' || event === 'HardwareTrigger' ? 'block' : 'continue');
}

/** Names only (letters, digits, _, -, |): Claude Code matches those exactly, one name or several. */
const PLAIN = /^[A-Za-z0-9_|-]+$/;

/**
 * Claude Code's rule: empty or `*` matches every tool; plain names (a|b) match exactly; anything else
 * is a regular expression tested against the name (unanchored, so `gpio_.*` and `^gpio_` both work).
 */
export function matcherFor(matcher: string): (tool: string) => boolean {
  const m = matcher.trim();
  if (m === '' || m === '*') return () => true;
  if (PLAIN.test(m)) {
    const names = new Set(m.split('|').filter(Boolean));
    return (tool) => names.has(tool);
  }
  const re = new RegExp(m);
  return (tool) => re.test(tool);
}

/** The problems of config.hooks that the schema cannot see, each naming its key. */
export function hookIssues(hooks: PinclawConfig['hooks']): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const event of HOOK_EVENTS) {
    (hooks[event] ?? []).forEach((h, i) => {
      const path = `hooks.${event}[${i}]`;
      if (h.command === undefined || h.command.trim() === '') issues.push({ path: `${path}.command`, expected: 'a shell command', found: h.command === undefined ? 'nothing' : 'a blank string', hint: 'each hook needs the command to run' });
      try {
        matcherFor(h.matcher);
      } catch (err) {
        issues.push({ path: `${path}.matcher`, expected: 'empty, *, tool names separated by |, or a regular expression', found: JSON.stringify(h.matcher), hint: err instanceof Error ? err.message : String(err) });
      }
    });
  }
  return issues;
}
