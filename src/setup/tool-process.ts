// What a command that calls tools outside a conductor needs (`pinclaw tool`, the hidden test and
// bench commands): the config, the store, this machine's hardware and the governed registry, set
// up the same way each time so a tool run by hand is judged exactly like one the model calls.
import { execSandbox } from '../sandbox/detect.js';
import type { PinclawConfig } from '../config/schema.js';
import { setLogRedactor } from '../log.js';
import type { Db } from '../store/db.js';
import type { Registry } from '../tools/registry.js';
import type { ToolSource } from '../tools/types.js';
import { configuredRegistry } from './registry.js';
import type { ProcessContext } from './context.js';
import { startHardware, type HardwareRuntime } from './hardware.js';
import { openProcess } from './process.js';

export interface ToolProcess {
  config: PinclawConfig;
  db: Db;
  hardware: HardwareRuntime;
  registry: Registry;
  /** scrubs every secret the config holds from a text (what the registry applies to its audit rows) */
  redact: (text: string) => string;
  /** Releases the hardware and closes the store. */
  close(): void;
}

export async function openToolProcess(ctx: ProcessContext, o: { toolSources?: (config: PinclawConfig) => readonly ToolSource[] } = {}): Promise<ToolProcess> {
  const { config, db } = await openProcess(ctx, { logLevel: true });
  let hardware: HardwareRuntime;
  try {
    hardware = await startHardware(config, ctx);
  } catch (err) {
    db.close();
    throw err;
  }
  const { registry, redact } = configuredRegistry({ config, paths: ctx.paths, env: ctx.env, db, extraTools: hardware.tools, ...(o.toolSources ? { toolSources: o.toolSources(config) } : {}), execSandbox: await execSandbox(config.sandbox.backend) });
  setLogRedactor(redact);
  return {
    config,
    db,
    hardware,
    registry,
    redact,
    close() {
      hardware.close();
      db.close();
    },
  };
}
