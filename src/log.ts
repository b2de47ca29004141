// A plain leveled logger on stderr. Under systemd, journald adds the timestamps, so there are none here.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let threshold: LogLevel = (process.env.PINCLAW_LOG_LEVEL as LogLevel | undefined) ?? 'info';
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n');
const said = new Set<string>();

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

let scrub: (text: string) => string = (text) => text;

/** Secrets are scrubbed from every line; the runtime installs the redactor once the config is loaded. */
export function setLogRedactor(fn: (text: string) => string): void {
  scrub = fn;
}

/** Tests capture log lines by swapping the sink. */
export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

function emit(level: LogLevel, msg: string): void {
  if (order[level] >= (order[threshold] ?? 20)) sink(`${level}: ${scrub(msg)}`);
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
