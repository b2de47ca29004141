// A plain leveled logger on stderr: one line per event, `level: message`, where messages start with
// the part of pinclaw speaking (telegram:, session web:, delivery of …), secrets scrubbed. Under
// systemd, journald adds the timestamps, so there are none here; and when stderr is the journal (its
// JOURNAL_STREAM names stderr's device and inode, as sd-daemon(3) says to check) each line starts
// with its syslog priority `<N>`, which journald strips and records as PRIORITY, so
// `journalctl -u pinclaw -p warning` shows warnings and errors only.
import { fstatSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const priority: Record<LogLevel, number> = { debug: 7, info: 6, warn: 4, error: 3 };

/** Whether fd 2 is the stream journald gave this process (JOURNAL_STREAM is "device:inode"). */
export function stderrIsJournal(env: NodeJS.ProcessEnv = process.env, fd = 2): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? '');
  if (!m) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.dev === BigInt(m[1]!) && st.ino === BigInt(m[2]!);
  } catch {
    return false;
  }
}

let journal: boolean | undefined;

let threshold: LogLevel = (process.env.PINCLAW_LOG_LEVEL as LogLevel | undefined) ?? 'info';
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n');
const said = new Set<string>();

/**
 * Set by the CLI for a one-shot command (agent, tool, memory, cron run...): its own output is what the
 * owner asked for, so the runtime's info lines (channel up, memory opened...) stay out of it unless
 * --verbose; warnings and errors are always shown. The gateway never sets it.
 */
let oneShot: { verbose: boolean } | undefined;

export function setLogLevel(level: LogLevel): void {
  threshold = oneShot === undefined ? level : oneShotLevel(level, oneShot.verbose);
}

/** The level a one-shot command logs at: at least warn, or with --verbose at least info. */
function oneShotLevel(configured: LogLevel, verbose: boolean): LogLevel {
  const n = order[configured] ?? order.info; // PINCLAW_LOG_LEVEL is not checked: a bad name counts as info
  if (verbose) return n > order.info ? 'info' : configured;
  return n < order.warn ? 'warn' : configured;
}

/** Marks this process as a one-shot command (see oneShot); applies to the level now and later. */
export function setOneShotLogging(verbose: boolean): void {
  oneShot = { verbose };
  setLogLevel(threshold);
}

let scrub: (text: string) => string = (text) => text;

/** Secrets are scrubbed from every line; the runtime installs the redactor once the config is loaded. */
export function setLogRedactor(fn: (text: string) => string): void {
  scrub = fn;
}

const extraSinks: ((line: string) => void)[] = [];

/** Another place every line goes to, besides the sink (the gateway's log file, src/log-file.ts). */
export function addLogSink(fn: (line: string) => void): void {
  extraSinks.push(fn);
}

/** Tests capture log lines by swapping the sink. */
export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

/** The dashboard's Logs view reads the last lines from here: bounded, so a chatty gateway holds no more. */
export const RECENT_LINES = 200;
const RECENT_CHARS = 1000;
export interface RecentLine {
  /** increasing per process: a reader asks for the lines after the last one it saw */
  seq: number;
  at: number;
  level: LogLevel;
  text: string;
}
/** The lines logged (at the level threshold or above, secrets scrubbed), oldest first. */
export const recentLog: readonly RecentLine[] = [];
const recent = recentLog as RecentLine[];
let seq = 0;

function emit(level: LogLevel, msg: string): void {
  if (order[level] < (order[threshold] ?? 20)) return;
  journal ??= stderrIsJournal();
  // One event, one line: a message with newlines (a stack, a server's error page) would otherwise
  // become several journal entries, the later ones without level or component.
  const text = scrub(msg).replace(/\r?\n/g, ' ⏎ ');
  recent.push({ seq: ++seq, at: Date.now(), level, text: text.length > RECENT_CHARS ? `${text.slice(0, RECENT_CHARS)}…` : text });
  if (recent.length > RECENT_LINES) recent.shift();
  sink(`${journal ? `<${priority[level]}>` : ''}${level}: ${text}`);
  for (const extra of extraSinks) extra(`${level}: ${text}`);
}

export const log = {
  debug: (msg: string) => emit('debug', msg),
  info: (msg: string) => emit('info', msg),
  warn: (msg: string) => emit('warn', msg),
  error: (msg: string) => emit('error', msg),
  /** Logs a message the first time its key is seen in this process, for conditions that do not change. */
  once(key: string, level: LogLevel, msg: string): void {
    if (said.has(key)) return;
    said.add(key);
    emit(level, msg);
  },
};

/**
 * The logger a module is handed (tests pass a quiet or recording one; `log` itself fits): one type
 * for every `log?:` option, so no module borrows another's alias of it.
 */
export type Logger = Pick<typeof log, 'debug' | 'info' | 'warn' | 'error'>;
