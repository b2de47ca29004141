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
}

export function addon(): PinclawAddon | null {
  const a = tryAddon<PinclawAddon>('pinclaw');
  if (!a) log.once('native-missing', 'warn', `${addonStatus('pinclaw').error}; running on the TypeScript fallbacks`);
  return a;
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
