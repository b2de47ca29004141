// A JSON object (not an array, not null), as readers of untrusted JSON ask before reading its fields.
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
