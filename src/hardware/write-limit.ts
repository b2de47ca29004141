// hardware.writeRateLimit: at most perLine writes to one line (or one I2C device) within perSeconds,
// so a model stuck in a loop cannot wear out a relay, a motor driver or an EEPROM. One sliding
// window per key; GPIO keys lines by chip and offset, I2C by bus and address.
export interface WriteLimitOptions {
  perLine: number;
  perSeconds: number;
  /** "line" or "device", as the refusal names what is limited */
  noun: string;
  now?: () => number;
}

/** Returns the refusal (without the subject) when a write to `key` is over the limit, and counts it otherwise. */
export function createWriteLimiter(o: WriteLimitOptions): (key: string) => string | undefined {
  const now = o.now ?? Date.now;
  const writes = new Map<string, number[]>();
  return (key) => {
    const t = now();
    const windowMs = o.perSeconds * 1000;
    const recent = (writes.get(key) ?? []).filter((x) => x > t - windowMs);
    if (recent.length >= o.perLine) {
      writes.set(key, recent);
      const wait = Math.ceil((recent[0]! + windowMs - t) / 1000);
      return `${o.perLine} writes within ${o.perSeconds} s is the limit for one ${o.noun} (hardware.writeRateLimit); try again in ${wait} s`;
    }
    recent.push(t);
    writes.set(key, recent);
    return undefined;
  };
}
