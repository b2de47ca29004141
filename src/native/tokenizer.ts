// The tokenizer façade: exact o200k_base / cl100k_base token ids and counts, from the addon when it
// loads (native/tokenizer*.cc) and from the TypeScript reference otherwise. Both equal tiktoken's
// encode_ordinary: special-token text such as <|endoftext|> is counted as plain text.
// Rank data is read on first use of an encoding, never at start-up, and dropped when the gateway
// has been quiet for a while (src/release.ts): 8.7 MiB for o200k_base, ~60 ms to load again.
import { log } from '../log.js';
import { onRelease } from '../release.js';
import { addonStatus, tryAddon } from './loader.js';
import { loadEncodingData } from './tokenizer-data.js';
import { DEFAULT_ENCODING, isEncodingName, UnknownEncodingError, type EncodingName } from './tokenizer-encodings.js';
import { ReferenceTokenizer, type TokenizerInput } from './tokenizer-reference.js';

export type { EncodingName } from './tokenizer-encodings.js';
export type { TokenizerInput } from './tokenizer-reference.js';

/** Inputs above this (UTF-16 units of a string, bytes of a Uint8Array) are counted off the main thread. */
export const ASYNC_THRESHOLD = 64 * 1024;

export interface Tokenizer {
  readonly encoding: EncodingName;
  readonly implementation: 'native' | 'reference';
  /** Synchronous: meant for message-sized text. Use countAsync for anything that may be large. */
  count(text: TokenizerInput): number;
  encode(text: TokenizerInput): Uint32Array;
  /** Above ASYNC_THRESHOLD the addon counts on the libuv thread pool (the reference yields between slices). */
  countAsync(text: TokenizerInput): Promise<number>;
}

/** What native/tokenizer.cc exports. */
export interface TokenizerAddon {
  tokenizerLoad(encoding: string, ranks: string): void;
  /** Absent from addons built before it; returns whether the encoding was loaded. */
  tokenizerUnload?(encoding: string): boolean;
  /** encodeThreads: the threads a text of 64 KiB or more is encoded on (absent from older addons). */
  tokenizerInfo(): { unicodeVersion: string; loaded: string[]; encodeThreads?: number };
  /** For tests: UTF-8 offsets where a large text is cut into `parts` segments for those threads. */
  tokenizerSplitPoints?(text: TokenizerInput, parts: number): number[];
  tokenCount(encoding: string, text: TokenizerInput): number;
  tokenEncode(encoding: string, text: TokenizerInput): Uint32Array;
  tokenCountAsync(encoding: string, text: TokenizerInput): Promise<number>;
}

function size(text: TokenizerInput): number {
  return typeof text === 'string' ? text.length : text.byteLength;
}

/** A tokenizer and how to drop its rank table; the tokenizer loads the table again when next used. */
interface Held {
  tokenizer: Tokenizer;
  release(): void;
}

function nativeTokenizer(a: TokenizerAddon, encoding: EncodingName): Held {
  let loaded = false;
  const ready = (): void => {
    if (loaded) return;
    a.tokenizerLoad(encoding, loadEncodingData(encoding).ranks);
    loaded = true;
  };
  ready();
  return {
    tokenizer: {
      encoding,
      implementation: 'native',
      count: (text) => {
        ready();
        return a.tokenCount(encoding, text);
      },
      encode: (text) => {
        ready();
        return a.tokenEncode(encoding, text);
      },
      countAsync: (text) => {
        if (size(text) <= ASYNC_THRESHOLD) {
          return Promise.resolve().then(() => {
            ready();
            return a.tokenCount(encoding, text);
          });
        }
        ready();
        return a.tokenCountAsync(encoding, text);
      },
    },
    release: () => {
      // An addon built before tokenizerUnload keeps its table.
      if (loaded && a.tokenizerUnload) {
        a.tokenizerUnload(encoding);
        loaded = false;
      }
    },
  };
}

function referenceTokenizer(encoding: EncodingName): Held {
  let ref: ReferenceTokenizer | null = null;
  const ready = (): ReferenceTokenizer => (ref ??= new ReferenceTokenizer(loadEncodingData(encoding)));
  ready();
  return {
    tokenizer: {
      encoding,
      implementation: 'reference',
      count: (text) => ready().count(text),
      encode: (text) => Uint32Array.from(ready().encode(text)),
      countAsync: (text) => (size(text) > ASYNC_THRESHOLD ? ready().countAsync(text) : Promise.resolve().then(() => ready().count(text))),
    },
    release: () => {
      ref = null;
    },
  };
}

export function tokenizerAddon(): TokenizerAddon | null {
  const a = tryAddon<Partial<TokenizerAddon>>('pinclaw');
  // An addon built before the tokenizer existed lacks these functions: treat it as absent.
  if (a && typeof a.tokenCount === 'function' && typeof a.tokenizerLoad === 'function') return a as TokenizerAddon;
  return null;
}

const cache = new Map<EncodingName, Held>();

/**
 * Frees every loaded rank table. A Tokenizer obtained before keeps working: its next call loads
 * the table again.
 */
export function releaseTokenizers(): void {
  for (const held of cache.values()) held.release();
}
onRelease('tokenizer', releaseTokenizers);

/** The tokenizer of an encoding (default o200k_base); throws UnknownEncodingError for other names. */
export function getTokenizer(encoding: string = DEFAULT_ENCODING): Tokenizer {
  if (!isEncodingName(encoding)) throw new UnknownEncodingError(encoding);
  let t = cache.get(encoding);
  if (!t) {
    const a = tokenizerAddon();
    if (!a) {
      const why = addonStatus('pinclaw').error ?? 'the addon has no tokenizer';
      log.once('tokenizer-reference', 'warn', `native tokenizer unavailable (${why}); counting tokens with the TypeScript reference`);
    }
    t = a ? nativeTokenizer(a, encoding) : referenceTokenizer(encoding);
    cache.set(encoding, t);
  }
  return t.tokenizer;
}
