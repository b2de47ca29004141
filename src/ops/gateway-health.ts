// What a gateway says about itself, read from outside it (`pinclaw service status`): its /healthz on
// the configured port, and what it last wrote to the state table (the watchdog's alive mark, its
// starts). Read-only: the store is opened read-only, so a running gateway is not disturbed.
import { existsSync } from 'node:fs';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { configureNative } from '../native/loader.js';
import type { ProcessContext } from '../setup/context.js';
import { openDatabase } from '../store/db.js';
import { getState } from '../store/state.js';
import { httpFetch } from '../net/fetch.js';

export interface GatewayHealth {
  url?: string;
  healthz: { ok: boolean; detail: string };
  aliveAt?: string;
  starts?: number;
  startedAt?: string;
  store?: string;
}

/** What the gateway says about itself: /healthz on its port, and what it last wrote to the state table. */
export async function gatewayHealth(config: PinclawConfig, ctx: ProcessContext): Promise<GatewayHealth> {
  const out: GatewayHealth = { healthz: { ok: false, detail: '' } };
  const { host, port } = config.gateway;
  if (port === 0) {
    out.healthz.detail = 'gateway.port is 0 (chosen at start): not checked';
  } else {
    const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
    out.url = `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
    try {
      const res = await httpFetch(`${out.url}/healthz`, { signal: AbortSignal.timeout(3000) });
      out.healthz = { ok: res.status === 200, detail: `HTTP ${res.status}` };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      out.healthz.detail = cause === 'ECONNREFUSED' ? 'nothing listens there' : errorMessage(err);
    }
  }
  if (existsSync(ctx.paths.database)) {
    try {
      configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
      const db = openDatabase(ctx.paths.database, { readonly: true });
      try {
        out.aliveAt = getState(db, 'gateway.alive_at');
        out.startedAt = getState(db, 'gateway.started_at');
        const starts = getState(db, 'gateway.starts');
        if (starts !== undefined) out.starts = Number(starts);
      } finally {
        db.close();
      }
    } catch (err) {
      out.store = errorMessage(err);
    }
  }
  return out;
}
