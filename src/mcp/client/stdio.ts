// The stdio transport: the server is a child process (in its own process group, usually inside
// bubblewrap, see launch.ts) speaking newline-delimited JSON on stdin/stdout; its stderr is kept
// as the last lines, so that a failure can say what the server said before it died. Closing sends
// SIGTERM to the whole group, SIGKILL 2 s later, and resolves only once the leader is reaped.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { log } from '../../log.js';
import type { JsonObject } from '../types.js';
import type { Transport } from './jsonrpc.js';

export interface StdioLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

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
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly stderrLines: string[] = [];
  private stderrPartial = '';
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private exited: Promise<void>;
  private exitedNow = false;
  private closing = false;
  /** Lines of stdout that were not JSON: counted, the first few logged. */
  badLines = 0;

  constructor(private readonly server: string, launch: StdioLaunch) {
    // detached: a process group of its own, so that close reaches what the server started too.
    this.child = spawn(launch.file, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.exited = new Promise<void>((resolve) => {
      this.child.once('close', (code, signal) => {
        this.exitedNow = true;
        // Whatever the leader left running in its group goes with it.
        this.killGroup('SIGKILL');
        resolve();
        if (!this.closing) this.onClose?.(`MCP server ${this.server} exited (${signal ? `signal ${signal}` : `code ${code}`})${this.lastStderr()}`);
      });
    });
    this.child.once('error', (err) => {
      this.exitedNow = true;
      this.onClose?.(`MCP server ${this.server} cannot start: ${err.message}`);
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (text: string) => this.readStderr(text));
    // A server that stops reading (or died) must not crash the gateway with EPIPE.
    this.child.stdin.on('error', () => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last lines the server wrote to stderr, as a suffix for an error message ('' when none). */
  lastStderr(): string {
    const lines = [...this.stderrLines, ...(this.stderrPartial ? [this.stderrPartial.slice(0, STDERR_LINE_CHARS)] : [])].slice(-5);
    return lines.length ? `; its last stderr lines: ${lines.join(' | ')}` : '';
  }

  send(message: JsonObject): Promise<void> {
    if (this.exitedNow || this.closing) return Promise.reject(new Error(`MCP server ${this.server} is not running${this.lastStderr()}`));
    return new Promise((resolve, reject) => {
      this.child.stdin.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(new Error(`MCP server ${this.server}: cannot write to it: ${err.message}${this.lastStderr()}`)) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (!this.exitedNow) {
      this.child.stdin.end();
      this.killGroup('SIGTERM');
      const kill = setTimeout(() => this.killGroup('SIGKILL'), KILL_GRACE_MS);
      await this.exited;
      clearTimeout(kill);
    }
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // the group is gone already
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
