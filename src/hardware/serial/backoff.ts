// How long to wait before reconnect attempt n: exponential from `initialMs`, capped at `maxMs`, so a
// board replugged within a second is back within a second, and one unplugged for the night costs a
// failed open every `maxMs`.

export interface BackoffOptions {
  /** The first wait; default 250 ms. */
  initialMs?: number;
  /** The longest wait; default 10 s. */
  maxMs?: number;
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { initialMs: 250, maxMs: 10_000 };

/** The wait after `failures` consecutive failures (1 → initialMs, 2 → 2×initialMs, ...). */
export function backoffDelay(failures: number, options: BackoffOptions = {}): number {
  const initial = options.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const max = Math.max(initial, options.maxMs ?? DEFAULT_BACKOFF.maxMs);
  const n = Math.max(1, Math.floor(failures));
  // 2^(n-1) overflows to Infinity long after the cap; min() keeps it finite.
  return Math.min(max, initial * 2 ** Math.min(n - 1, 40));
}
