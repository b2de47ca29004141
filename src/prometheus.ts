// Prometheus' text exposition format: a label set and a metric's lines. A leaf: /metrics
// (src/ops/metrics.ts) and the features that add lines to it (src/mcp/client/metrics.ts) both use it.

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * A label set in the text exposition format: values escape `\`, `"` and newline, so a value from
 * the database (an outbound kind, later a channel or board name) cannot break the line or forge a
 * sample.
 */
export function labels(set: Record<string, string>): string {
  const parts = Object.entries(set).map(([k, v]) => {
    if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new Error(`invalid Prometheus label name '${k}'`);
    return `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
  });
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** HELP text escapes `\` and newline only. */
const helpText = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

export function line(name: string, help: string, type: 'gauge' | 'counter', samples: [labels: string, value: number][]): string {
  return [`# HELP ${name} ${helpText(help)}`, `# TYPE ${name} ${type}`, ...samples.map(([l, v]) => `${name}${l} ${v}`)].join('\n');
}
