// memory.embedder = "none": no vectors at all. There is deliberately no Embedder for it (one that
// returned empty vectors would have to be special-cased everywhere vectors are compared); the
// caller sees this value and searches by keyword only.
export const KEYWORD_ONLY = 'none' as const;
