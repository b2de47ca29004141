// One problem found in a configuration, as every check reports it: the schema's validation, the
// environment overrides and the checks of a feature (channels, hooks, boards, cameras). A leaf, so
// the checks validate.ts calls can name the type without importing validate.ts back.
export interface ConfigIssue {
  /** Dot path ("gateway.port", "items[2]"), or "env NAME" for an environment override. */
  path: string;
  expected: string;
  found: string;
  hint?: string;
}
