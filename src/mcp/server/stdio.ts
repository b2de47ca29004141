// The stdio transport of the MCP server: newline-delimited JSON-RPC messages on stdin and stdout
// (spec: transports, stdio). stdout carries nothing but answers, one per line; logs go to stderr.
// The end of stdin (or a closed stdout) is the client going away: calls in flight are aborted, and
// the promise resolves once they ended and every answer was written.
import type { Readable, Writable } from 'node:stream';
import type { McpServer } from './server.js';

/** The longest line read (UTF-16 units); a client sending more without a newline gets a parse error, not our memory. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

export interface StdioStreams {
  input: Readable;
  output: Writable;
}

export function serveStdio(server: McpServer, io: StdioStreams): Promise<void> {
  return new Promise((resolve) => {
    let buffered = '';
    /** Skipping the rest of a line that was too long. */
    let skipping = false;
    let ended = false;
    /** Set by the first of 'end', 'close' and an output error: the shutdown runs once. */
    let finishing = false;
    const pending = new Set<Promise<void>>();

    const write = (text: string) => {
      if (!ended && io.output.writable) io.output.write(text + '\n');
    };
    const handle = (line: string) => {
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (!line.trim()) return;
      const p = server.handleLine(line).then((answer) => {
        if (answer !== undefined) write(answer);
      }).finally(() => pending.delete(p));
      pending.add(p);
    };
    const tooLong = () => write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: a line longer than ${MAX_LINE_CHARS} characters; it was skipped` } }));

    const onData = (chunk: string) => {
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
        const piece = chunk.slice(start, nl);
        start = nl + 1;
        if (skipping) {
          skipping = false;
          continue;
        }
        handle(buffered + piece);
        buffered = '';
      }
      if (skipping) return;
      buffered += chunk.slice(start);
      if (buffered.length > MAX_LINE_CHARS) {
        buffered = '';
        skipping = true;
        tooLong();
      }
    };

    const finish = async () => {
      if (finishing) return;
      finishing = true;
      // A last message without its newline still counts.
      if (buffered && !skipping) handle(buffered);
      buffered = '';
      io.input.off('data', onData);
      // The answers of the calls in flight are written if the client still reads them.
      await server.shutdown();
      await Promise.all(pending);
      ended = true;
      io.input.off('end', finish);
      io.input.off('close', finish);
      io.output.off('error', onOutputError);
      // stdin is not read again: pause it, so the process holds no handle for it.
      io.input.pause();
      resolve();
    };
    // EPIPE: the client closed its end of our stdout; nothing more can be answered.
    const onOutputError = () => void finish();

    io.input.setEncoding('utf8');
    io.input.on('data', onData);
    io.input.on('end', finish);
    io.input.on('close', finish);
    io.output.on('error', onOutputError);
    // Closed before we listened (a signal during start): its 'close' was emitted already.
    if (io.input.destroyed || io.input.readableEnded) void finish();
  });
}
