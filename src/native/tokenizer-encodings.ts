// The encodings pinclaw's tokenizer implements, with the pre-tokenizer pattern each one's scanner
// (native/tokenizer_split.cc, src/native/tokenizer-split.ts) reproduces. The rank data is
// checked against these patterns on load, so a tiktoken upgrade that changes a pattern fails
// loudly instead of counting differently.

export const ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type EncodingName = (typeof ENCODINGS)[number];
export const DEFAULT_ENCODING: EncodingName = 'o200k_base';

const contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";

export const PATTERNS: Readonly<Record<EncodingName, string>> = {
  o200k_base: [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${contractions}?`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${contractions}?`,
    `\\p{N}{1,3}`,
    ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*`,
    `\\s*[\\r\\n]+`,
    `\\s+(?!\\S)`,
    `\\s+`,
  ].join('|'),
  cl100k_base: [contractions, `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`, `\\p{N}{1,3}`, ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`, `\\s*[\\r\\n]+`, `\\s+(?!\\S)`, `\\s+`].join('|'),
};

export function isEncodingName(name: string): name is EncodingName {
  return (ENCODINGS as readonly string[]).includes(name);
}

export class UnknownEncodingError extends Error {
  constructor(readonly encoding: string) {
    super(`unknown encoding '${encoding}'; known: ${ENCODINGS.join(', ')}`);
    this.name = 'UnknownEncodingError';
  }
}

/** Key of an encoding's rank file among the single executable's assets (see scripts/tokenizer-assets.mjs). */
export function encodingAsset(name: EncodingName): string {
  return `tokenizer/${name}.json`;
}
