// Progress lines for the slow parts (downloads, extraction, builds, boots): one line per step on
// stderr, so a test log shows where the minutes went without polluting the TAP stream on stdout.
export function say(message: string): void {
  process.stderr.write(`vm: ${message}\n`);
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

/** Runs `work`, then reports how long it took: "vm: <what>: done in 1.2 s". */
export async function timed<T>(what: string, work: () => T | Promise<T>): Promise<T> {
  say(what);
  const started = Date.now();
  const result = await work();
  say(`${what}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}
