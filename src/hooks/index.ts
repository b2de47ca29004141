// Command hooks as the rest of pinclaw gets them: nothing at all without config.hooks, and with it a
// facade whose first use loads the implementation (engine.ts and the runner: a lazy chunk, so an
// idle gateway without hooks does not hold their code).
import { failureMode, HOOK_EVENTS, type HookEvent } from '../config/hooks.js';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { HooksDeps } from './engine.js';
import type { Hooks } from './types.js';

export type { EventPayload, EventVerdict, HookPlace, Hooks, MessageEvent } from './types.js';

export function hooksConfigured(hooks: PinclawConfig['hooks']): boolean {
  return HOOK_EVENTS.some((e) => (hooks[e] ?? []).length > 0);
}

/** Hooks for the config, or undefined when it has none (callers then skip them entirely). */
export function loadHooks(deps: HooksDeps): Hooks | undefined {
  const hooks = deps.config.hooks;
  if (!hooksConfigured(hooks)) return undefined;
  let engine: Promise<Hooks> | undefined;
  const get = () => (engine ??= import('./engine.js').then((m) => m.createHooks(deps)));
  // A chunk that cannot be loaded is every hook failing: each event's default onFailure applies.
  const failed = (event: HookEvent, err: unknown) => {
    const mode = failureMode(event, { matcher: '', timeoutMs: 0 });
    return mode === 'block' ? { block: { reason: `the hooks could not be loaded: ${errorMessage(err)}`, rule: 'hooks' } } : {};
  };
  const has = (event: HookEvent) => (hooks[event] ?? []).length > 0;
  // An event without hooks answers at once: the chunk is loaded by the first hook that has to run.
  return {
    has,
    async before(tool, input, ctx) {
      if (!has('PreToolUse')) return {};
      try {
        return await (await get()).before(tool, input, ctx);
      } catch (err) {
        return { block: `the hooks could not be loaded: ${errorMessage(err)}`, rule: 'hooks' };
      }
    },
    async after(tool, input, result, ctx) {
      if (!has('PostToolUse')) return {};
      try {
        return await (await get()).after(tool, input, result, ctx);
      } catch (err) {
        return failed('PostToolUse', err);
      }
    },
    async fire(event, place, payload, signal) {
      if (!has(event)) return {};
      try {
        return await (await get()).fire(event, place, payload, signal);
      } catch (err) {
        return failed(event, err);
      }
    },
  };
}
