// The stdio transport: the server is a child process (in its own process group, usually inside
// bubblewrap or Landlock, see launch.ts and server-process.ts) speaking newline-delimited JSON on
// stdin/stdout; its stderr is kept
// as the last lines, so that a failure can say what the server said before it died. Closing sends
// SIGTERM to the whole group, SIGKILL 2 s later, and resolves only once the leader is reaped.
import { log } from '../../log.js';
import type { JsonObject } from '../types.js';
import type { Transport } from './jsonrpc.js';
import { startServerProcess, type ServerProcess, type StdioLaunch } from './server-process.js';

export type { StdioLaunch } from './server-process.js';

/** Lines of stderr kept, and the longest one. */
const STDERR_LINES = 20;
const STDERR_LINE_CHARS = 500;
/** The grace a server gets to exit on SIGTERM before its group is killed. */
export const KILL_GRACE_MS = 2000;
/** A line longer than this is not read into memory; the server is told off as broken. */
const MAX_LINE_BYTES = 32 * 1024 * 1024;

export class StdioTransport implements Transport {
  onMessage?: (message: unknown) => void;
  onClose?: (reason: string) => void;
  private readonly child: ServerProcess;
  private leader: number | undefined;
  private readonly stderrLines: string[] = [];
  private stderrPartial = '';
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private exited: Promise<void>;
  private exitedNow = false;
  private closing = false;
  /** Lines of stdout that were not JSON: counted, the first few logged. */
  badLines = 0;

  /**
   * @param onStarted told the leader's pid once it runs (the leftovers record, leftovers.ts)
   * @param onGone told once the leader is reaped and its group killed, or it never ran
   */
  constructor(private readonly server: string, launch: StdioLaunch, hooks: { onStarted?: (pid: number) => void; onGone?: () => void } = {}) {
    let resolveExit!: () => void;
    this.exited = new Promise<void>((resolve) => (resolveExit = resolve));
    this.child = startServerProcess(launch, {
      onStarted: (pid) => {
        this.leader = pid;
        hooks.onStarted?.(pid);
      },
      onStdout: (chunk) => this.read(chunk),
      onStderr: (text) => this.readStderr(text),
      onExit: (code, signal) => {
        this.exitedNow = true;
        hooks.onGone?.();
        resolveExit();
        if (!this.closing) this.onClose?.(`MCP server ${this.server} exited (${signal ? `signal ${signal}` : `code ${code}`})${this.lastStderr()}`);
      },
      onError: (message) => {
        this.exitedNow = true;
        hooks.onGone?.();
        resolveExit();
        this.onClose?.(`MCP server ${this.server} cannot start: ${message}`);
      },
    });
  }

  get pid(): number | undefined {
    return this.leader;
  }

  /** The last lines the server wrote to stderr, as a suffix for an error message ('' when none). */
  lastStderr(): string {
    const lines = [...this.stderrLines, ...(this.stderrPartial ? [this.stderrPartial.slice(0, STDERR_LINE_CHARS)] : [])].slice(-5);
    return lines.length ? `; its last stderr lines: ${lines.join(' | ')}` : '';
  }

  send(message: JsonObject): Promise<void> {
    if (this.exitedNow || this.closing) return Promise.reject(new Error(`MCP server ${this.server} is not running${this.lastStderr()}`));
    return new Promise((resolve, reject) => {
      this.child.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(new Error(`MCP server ${this.server}: cannot write to it: ${err.message}${this.lastStderr()}`)) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (!this.exitedNow) {
      this.child.endInput();
      this.child.signal('SIGTERM');
      const kill = setTimeout(() => this.child.signal('SIGKILL'), KILL_GRACE_MS);
      await this.exited;
      clearTimeout(kill);
    }
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const part = chunk.subarray(start, nl);
      const line = this.buffered.length ? Buffer.concat([...this.buffered, part]) : part;
      this.buffered = [];
      this.bufferedBytes = 0;
      start = nl + 1;
      this.line(line);
    }
    if (start < chunk.length) {
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > MAX_LINE_BYTES) {
        this.buffered = [];
        this.bufferedBytes = 0;
        this.onClose?.(`MCP server ${this.server} sent a message over ${MAX_LINE_BYTES} bytes`);
        void this.close();
        return;
      }
      this.buffered.push(chunk.subarray(start));
    }
  }

  private line(raw: Buffer): void {
    const text = raw.toString('utf8').trim();
    if (!text) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      // A server that logs to stdout: the line is skipped, not the connection.
      this.badLines++;
      if (this.badLines <= 3) log.warn(`MCP server ${this.server}: skipped a line of stdout that is not JSON: ${text.slice(0, 120)}`);
      return;
    }
    this.onMessage?.(message);
  }

  private readStderr(text: string): void {
    const parts = (this.stderrPartial + text).split('\n');
    this.stderrPartial = parts.pop()!.slice(-STDERR_LINE_CHARS * 4);
    for (const p of parts) {
      const line = p.trim();
      if (!line) continue;
      this.stderrLines.push(line.slice(0, STDERR_LINE_CHARS));
      if (this.stderrLines.length > STDERR_LINES) this.stderrLines.shift();
      log.debug(`MCP server ${this.server} stderr: ${line.slice(0, STDERR_LINE_CHARS)}`);
    }
  }
}
