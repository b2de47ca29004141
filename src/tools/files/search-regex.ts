// The regular expression grep runs for the model, in bounded time. A pattern V8's linear-time engine
// accepts runs here, on the event loop, with the excessive-backtracking fallback on, so it cannot
// backtrack without bound. Any other pattern (backreferences, lookaround, case-insensitive or unicode
// mode on this V8) runs in a worker thread with a deadline: a runaway match is stopped by terminating
// the worker, and the call is refused with the reason, while the gateway keeps serving.
import { Worker } from 'node:worker_threads';
import { enableRegexFallback, isLinear } from '../../regex-engine.js';

/** Thrown when the worker's deadline passes; grep turns it into a refusal naming the pattern. */
export class RegexTimeout extends Error {
  constructor(readonly ms: number) {
    super(`matching took longer than ${ms} ms`);
  }
}

export interface SearchRegex {
  /** 'linear': on the event loop; 'contained': in a worker with a deadline */
  readonly mode: 'linear' | 'contained';
  /** Indexes of the lines of `text` (split at '\n') that match, at most `max` of them. */
  matchingLines(text: string, max: number): Promise<number[]>;
  close(): Promise<void>;
}

/** The whole of a grep call's matching in contained mode shares this budget. */
export const CONTAINED_BUDGET_MS = 5000;

function linesMatching(re: RegExp, text: string, max: number): number[] {
  const out: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < max; i++) if (re.test(lines[i]!)) out.push(i);
  return out;
}

// The worker gets the same function as source text, so both modes split and match identically.
const workerSource = `
const { parentPort } = require('node:worker_threads');
const linesMatching = ${linesMatching.toString()};
parentPort.on('message', (m) => parentPort.postMessage(linesMatching(new RegExp(m.source, m.flags), m.text, m.max)));
`;

/** Throws SyntaxError for an invalid pattern (grep reports it with V8's message). */
export function compileSearchRegex(source: string, flags: string, budgetMs = CONTAINED_BUDGET_MS): SearchRegex {
  enableRegexFallback();
  const re = new RegExp(source, flags);
  if (isLinear(source, flags)) {
    return { mode: 'linear', matchingLines: async (text, max) => linesMatching(re, text, max), close: async () => {} };
  }
  let worker: Worker | undefined;
  let left = budgetMs;
  return {
    mode: 'contained',
    matchingLines(text, max) {
      worker ??= new Worker(workerSource, { eval: true });
      const w = worker;
      const started = Date.now();
      return new Promise<number[]>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          w.off('message', onMessage);
          w.off('error', onError);
          left -= Date.now() - started;
        };
        const onMessage = (found: number[]) => {
          done();
          resolve(found);
        };
        const onError = (err: Error) => {
          done();
          reject(err);
        };
        const timer = setTimeout(() => {
          done();
          worker = undefined;
          void w.terminate();
          reject(new RegexTimeout(budgetMs));
        }, Math.max(left, 0));
        w.on('message', onMessage);
        w.on('error', onError);
        w.postMessage({ source, flags, text, max });
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
