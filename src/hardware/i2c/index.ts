// Which I2C backend pinclaw uses: the addon when it has I2C (async on the libuv pool, combined
// I2C_RDWR transactions, no extra native code to ship), else the i2c-bus package. PINCLAW_I2C_BACKEND
// (or the `backend` option) pins one, for tests and for a board where one misbehaves.
import { log } from '../../log.js';
import { addonStatus } from '../../native/loader.js';
import { i2cBusBackend } from './i2c-bus.js';
import { i2cAddon, nativeBackend, type I2cAddon } from './native.js';
import type { I2cBackend } from './types.js';

export type { I2cBackend, I2cBusInfo, I2cFuncs, I2cMode, I2cReadOptions, I2cScanResult, I2cWriteOptions } from './types.js';
export { I2cError } from './errors.js';
export { listBuses } from './buses.js';

export type I2cBackendChoice = 'auto' | 'native' | 'i2c-bus';
const CHOICES: readonly I2cBackendChoice[] = ['auto', 'native', 'i2c-bus'];

export interface I2cChooseOptions {
  /** Overrides PINCLAW_I2C_BACKEND. */
  backend?: I2cBackendChoice;
  env?: NodeJS.ProcessEnv;
  /** The addon to use; default: pinclaw's, if it has I2C. null: as if it had none. */
  addon?: I2cAddon | null;
}

export interface I2cChoice {
  backend: I2cBackend;
  /** Why this one, for doctor and logs. */
  reason: string;
}

export function chooseI2cBackend(options: I2cChooseOptions = {}): I2cChoice {
  const env = options.env ?? process.env;
  const raw = options.backend ?? (env.PINCLAW_I2C_BACKEND || 'auto');
  if (!(CHOICES as readonly string[]).includes(raw)) throw new Error(`PINCLAW_I2C_BACKEND must be one of ${CHOICES.join(', ')}, got '${raw}'`);
  const choice = raw as I2cBackendChoice;
  if (choice === 'i2c-bus') return { backend: i2cBusBackend(), reason: 'i2c-bus chosen by configuration' };
  const addon = options.addon === undefined ? i2cAddon() : options.addon;
  const missing = () => (options.addon === null ? 'no addon given' : (addonStatus('pinclaw').error ?? 'the addon was built without I2C'));
  if (choice === 'native') {
    if (!addon) throw new Error(`the native I2C backend was chosen by configuration, but it is unavailable: ${missing()}`);
    return { backend: nativeBackend({ addon }), reason: 'native chosen by configuration' };
  }
  if (addon) return { backend: nativeBackend({ addon }), reason: 'the addon has I2C' };
  const why = missing();
  log.once('i2c-backend-fallback', 'warn', `native I2C unavailable (${why}); using the i2c-bus package`);
  return { backend: i2cBusBackend(), reason: `native I2C unavailable (${why})` };
}

export function i2cBackend(options: I2cChooseOptions = {}): I2cBackend {
  return chooseI2cBackend(options).backend;
}
