// The tokenizer façade: exact o200k_base / cl100k_base token ids and counts, from the addon when it
// loads (native/tokenizer*.cc) and from the TypeScript reference otherwise. Both equal tiktoken's
// encode_ordinary: special-token text such as <|endoftext|> is counted as plain text.
// Rank data is read on first use of an encoding, never at start-up.
import { log } from '../log.js';
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
  tokenizerInfo(): { unicodeVersion: string; loaded: string[] };
  tokenCount(encoding: string, text: TokenizerInput): number;
  tokenEncode(encoding: string, text: TokenizerInput): Uint32Array;
  tokenCountAsync(encoding: string, text: TokenizerInput): Promise<number>;
}

function size(text: TokenizerInput): number {
  return typeof text === 'string' ? text.length : text.byteLength;
}

function nativeTokenizer(a: TokenizerAddon, encoding: EncodingName): Tokenizer {
  a.tokenizerLoad(encoding, loadEncodingData(encoding).ranks);
  return {
    encoding,
    implementation: 'native',
    count: (text) => a.tokenCount(encoding, text),
    encode: (text) => a.tokenEncode(encoding, text),
    countAsync: (text) => (size(text) > ASYNC_THRESHOLD ? a.tokenCountAsync(encoding, text) : Promise.resolve().then(() => a.tokenCount(encoding, text))),
  };
}

function referenceTokenizer(encoding: EncodingName): Tokenizer {
  const ref = new ReferenceTokenizer(loadEncodingData(encoding));
  return {
    encoding,
    implementation: 'reference',
    count: (text) => ref.count(text),
    encode: (text) => Uint32Array.from(ref.encode(text)),
    countAsync: (text) => (size(text) > ASYNC_THRESHOLD ? ref.countAsync(text) : Promise.resolve().then(() => ref.count(text))),
  };
}

export function tokenizerAddon(): TokenizerAddon | null {
  const a = tryAddon<Partial<TokenizerAddon>>('pinclaw');
  // An addon built before the tokenizer existed lacks these functions: treat it as absent.
  if (a && typeof a.tokenCount === 'function' && typeof a.tokenizerLoad === 'function') return a as TokenizerAddon;
  return null;
}

const cache = new Map<EncodingName, Tokenizer>();

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
  return t;
}
