// The hardware's health as one list of what is failing now: a trigger that could not start or lost
// its watch, a sensor trigger whose reads fail, a sensor whose last read failed, a board on a serial
// port that is gone. Empty means healthy. The runtime asks the parts (pull, not push: a part that
// recovers needs no code path of its own to say so), and a watcher turns changes into one callback,
// which the gateway makes the 'hardware' channel's status (dashboard, /api/status, doctor) and
// /metrics shows per component.
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { SensorReader, SensorReading } from './sensors/reader.js';

export interface HardwareProblem {
  /** what failed, named as the config names it: "trigger 'door'", "sensor 'temp'", "device 'bench'" */
  component: string;
  /** why, with the device's own words */
  reason: string;
}

/** The problems in one line, for a channel status detail and doctor. */
export function problemsText(problems: readonly HardwareProblem[]): string {
  return problems.map((p) => `${p.component}: ${p.reason}`).join('; ');
}

/** How often the parts are asked; a trigger or device that fails shows within this. */
export const HEALTH_INTERVAL_MS = 2000;

/**
 * Calls onChange with the problems whenever they differ from the last ones (starting from none, so
 * a healthy start says nothing). Returns the stop.
 */
export function watchHealth(read: () => HardwareProblem[], onChange: (problems: HardwareProblem[]) => void, intervalMs = HEALTH_INTERVAL_MS): () => void {
  let last = '[]';
  const check = () => {
    // In a timer: a throw here would be an uncaught exception that ends the gateway.
    try {
      const now = read();
      const key = JSON.stringify(now);
      if (key === last) return;
      last = key;
      onChange(now);
    } catch (err) {
      log.once('hardware-health', 'warn', `hardware health: cannot read the state of the parts: ${errorMessage(err)}`);
    }
  };
  check();
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The reader, remembering which sensors' last read failed and why (health()); a good read forgets it,
 * and is passed to onGood (the readings ring).
 */
export function trackSensors(reader: SensorReader, failures: Map<string, string>, onGood?: (r: SensorReading) => void): SensorReader {
  return {
    ...reader,
    async read(name) {
      try {
        const r = await reader.read(name);
        failures.delete(name);
        try {
          onGood?.(r);
        } catch (err) {
          log.once('readings-sensor', 'warn', `readings: cannot record a sensor reading: ${errorMessage(err)}`);
        }
        return r;
      } catch (err) {
        if (reader.get(name)) failures.set(name, errorMessage(err));
        throw err;
      }
    },
  };
}
