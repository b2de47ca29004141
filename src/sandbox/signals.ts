// Signal numbers to names, for exits reported as numbers (the addon, bwrap's 128+N).
import { constants } from 'node:os';

const names = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

export function signalName(n: number | null): NodeJS.Signals | null {
  return n === null ? null : names.get(n) ?? null;
}

/**
 * The signal that ended the command: the leader's own, or the one /bin/sh and bwrap report as exit
 * status 128+N (a killed last command, a killed sandbox). A command that itself exits with such a
 * status reads the same way; that is the shell's convention, and bwrap leaves no other.
 */
export function endingSignal(exitCode: number | null, signal: NodeJS.Signals | null): NodeJS.Signals | null {
  if (signal) return signal;
  return exitCode !== null && exitCode > 128 ? signalName(exitCode - 128) : null;
}
