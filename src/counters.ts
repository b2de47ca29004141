// The process's event counters for /metrics (Prometheus counters: they start at 0 with the process).
// A leaf module like log.ts, so the conductor, the tool registry, the providers' wrapper, delivery
// and the triggers can count without depending on ops/ (which reads them).
//
// Label values are bounded by the caller: tool names of registered tools, channel names, outcomes.

export type CounterName =
  | 'turns'
  | 'provider_calls'
  | 'provider_errors'
  | 'tool_calls'
  | 'deliveries'
  | 'triggers'
  | 'messages_received'
  | 'fleet_refused'
  | 'maixcam_refused';

const counters = new Map<CounterName, Map<string, { labels: Record<string, string>; value: number }>>();

export function count(name: CounterName, labels: Record<string, string> = {}, by = 1): void {
  let series = counters.get(name);
  if (!series) counters.set(name, (series = new Map()));
  const key = JSON.stringify(labels);
  const s = series.get(key);
  if (s) s.value += by;
  else series.set(key, { labels: { ...labels }, value: by });
}

/** Every series of a counter, in the order first counted. */
export function counterSeries(name: CounterName): { labels: Record<string, string>; value: number }[] {
  return [...(counters.get(name)?.values() ?? [])].map((s) => ({ labels: { ...s.labels }, value: s.value }));
}

/** Tests only: a fresh start. */
export function resetCounters(): void {
  counters.clear();
}
