// The Home view: the named lines with their state and a switch for outputs, the sensors with their
// last reading and 24 hours of them, the board's facts. A switch is a gpio_write through the tool
// registry (policy, the owner's confirmation, the physical audit row), never a write of the line
// from here: the dashboard gets no way around what governs the model's calls.
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../../../errors.js';
import type { Db } from '../../../store/db.js';
import { lastReading, readingsOf } from '../../../store/readings-query.js';
import { Refusal } from './refusal.js';
import { boardFacts } from './board-facts.js';
import type { AdminSources } from './sources.js';

const DAY_MS = 24 * 3600_000;
/**
 * The chat (and session) a switch runs in: its own, so the page tells its questions from those of a
 * chat in the dashboard (whose default session is 'dashboard'), and the audit log says where it came from.
 */
export const HOME_CHAT = 'dashboard-home';

/** A hardware.lines entry; the start checks make its name required, the schema's type cannot say so. */
type NamedLine = AdminSources['config']['hardware']['lines'][number] & { name: string };
const namedLines = (s: AdminSources) => s.config.hardware.lines.filter((l): l is NamedLine => typeof l.name === 'string');

function lineState(s: AdminSources, l: NamedLine): { value: number | null; error?: string } {
  if (!s.gpio) return { value: null, error: 'no GPIO on this machine' };
  try {
    return { value: s.gpio.read(l.name).value };
  } catch (err) {
    return { value: null, error: errorMessage(err) };
  }
}

export async function home(db: Db, s: AdminSources) {
  const hw = s.config.hardware;
  return {
    lines: namedLines(s).map((l) => ({
      name: l.name,
      line: l.line,
      direction: l.direction ?? 'input',
      confirm: hw.confirm.includes(l.name),
      ...lineState(s, l),
    })),
    sensors: hw.sensors.filter((x) => x.name).map((x) => ({ name: x.name!, unit: x.unit ?? null, last: lastReading(db, 'sensor', x.name!) ?? null })),
    board: await boardFacts(s.paths.home),
  };
}

/** The names a request may ask about, for the "did you mean" of a 404. */
const names = (list: readonly { name?: string }[]) => list.flatMap((x) => (x.name ? [x.name] : [])).join(', ') || 'none';

/** ?sensor=NAME or ?line=NAME: the last 24 hours of that ring. */
export function readings(db: Db, s: AdminSources, url: URL) {
  const sensor = url.searchParams.get('sensor');
  const line = url.searchParams.get('line');
  let kind: 'sensor' | 'line';
  let name: string;
  if (sensor !== null) {
    if (!s.config.hardware.sensors.some((x) => x.name === sensor)) throw new Refusal(404, `no sensor '${sensor}' in hardware.sensors (sensors: ${names(s.config.hardware.sensors)})`);
    [kind, name] = ['sensor', sensor];
  } else if (line !== null) {
    if (!s.config.hardware.lines.some((x) => x.name === line)) throw new Refusal(404, `no line '${line}' in hardware.lines (lines: ${names(s.config.hardware.lines)})`);
    [kind, name] = ['line', line];
  } else throw new Refusal(400, 'name a sensor (?sensor=NAME) or a line (?line=NAME)');
  const since = Date.now() - DAY_MS;
  return { kind, name, since: new Date(since).toISOString(), readings: readingsOf(db, kind, name, since) };
}

/** POST /api/home/lines/NAME {"value":0|1}: a gpio_write through the registry, answered when it ends. */
export async function switchLine(s: AdminSources, name: string, body: unknown) {
  const l = namedLines(s).find((x) => x.name === name);
  if (!l) throw new Refusal(404, `no line '${name}' in hardware.lines (lines: ${names(s.config.hardware.lines)}); nothing was written`);
  if ((l.direction ?? 'input') !== 'output') throw new Refusal(400, `${name} is an input line (${l.line}): it can be read, not switched; nothing was written. To drive it, declare it with "direction":"output" in hardware.lines`);
  const value = (body as { value?: unknown } | null)?.value;
  if (value !== 0 && value !== 1) throw new Refusal(400, `value: expected 0 or 1, got ${JSON.stringify(value) ?? 'nothing'}; nothing was written`);
  const report = await s.callTool(
    { id: `dashboard-${randomUUID()}`, name: 'gpio_write', input: { line: name, value } },
    { sessionKey: HOME_CHAT, channel: 'http', chatId: HOME_CHAT, caller: 'dashboard', confirm: (req) => s.confirm(HOME_CHAT, req) },
  );
  return { ok: report.outcome === 'ok' && !report.result.isError, outcome: report.outcome, rule: report.rule ?? null, text: report.result.content, auditId: report.auditId ?? null, ...lineState(s, l) };
}
