// What the model provider last did, kept in the state table so `pinclaw status` (another process)
// can say whether the provider answers without making a paid call itself: the last answer and the
// last failure, each with its time. An answer is written at most once a minute (a busy gateway
// would otherwise write a row per model call); a failure is written each time.
import { errorMessage } from '../errors.js';
import type { Db } from '../store/db.js';
import { getState, setState } from '../store/state.js';

export const PROVIDER_OK_KEY = 'provider.last_ok';
export const PROVIDER_ERROR_KEY = 'provider.last_error';
const OK_EVERY_MS = 60_000;

export interface ProviderOutcome {
  /** ISO time */
  at: string;
  /** the chain, or the provider/model that answered */
  provider: string;
  error?: string;
}

export function providerOutcomeRecorder(db: Db, now = () => Date.now()): { ok(provider: string): void; failed(provider: string, err: unknown): void } {
  let okWrittenAt = -Infinity;
  const write = (key: string, o: ProviderOutcome) => {
    try {
      setState(db, key, JSON.stringify(o));
    } catch {
      // Only a report for `pinclaw status`: a full disk must not fail the turn for it.
    }
  };
  return {
    ok(provider) {
      const t = now();
      if (t - okWrittenAt < OK_EVERY_MS) return;
      okWrittenAt = t;
      write(PROVIDER_OK_KEY, { at: new Date(t).toISOString(), provider });
    },
    failed(provider, err) {
      write(PROVIDER_ERROR_KEY, { at: new Date(now()).toISOString(), provider, error: errorMessage(err) });
    },
  };
}

/** The last answer and the last failure the gateway (or pinclaw agent) recorded. */
export function lastProviderOutcomes(db: Db): { ok?: ProviderOutcome; error?: ProviderOutcome } {
  const read = (key: string): ProviderOutcome | undefined => {
    const text = getState(db, key);
    if (!text) return undefined;
    try {
      return JSON.parse(text) as ProviderOutcome;
    } catch {
      return undefined;
    }
  };
  return { ok: read(PROVIDER_OK_KEY), error: read(PROVIDER_ERROR_KEY) };
}
