// The condition of an MQTT trigger (mqtt.triggers[].when), judged on each message without the model:
// a message that does not match costs nothing but this function. A hand-written check of a few
// comparisons instead of an expression language: the owner's config names a field and a value, and
// there is nothing to parse or evaluate that a hostile payload could make slow.
import type { PinclawConfig } from '../config/schema.js';

export type TriggerCondition = NonNullable<PinclawConfig['mqtt']['triggers'][number]['when']>;

/** `shape`: the payload is not what when.path expects (not JSON, no such field): likely a wrong topic or path. */
export type Verdict = { match: true; value: unknown } | { match: false; why: string; shape?: true };

/** A payload as the condition sees it: the parsed JSON when it is JSON, else the text. */
export function payloadValue(text: string): { json: boolean; value: unknown } {
  const t = text.trim();
  if (t === '') return { json: false, value: text };
  try {
    return { json: true, value: JSON.parse(t) as unknown };
  } catch {
    return { json: false, value: text };
  }
}

/** A dotted path into parsed JSON ("state.temperature", "sensors.0.value"). */
export function valueAt(value: unknown, path: string): { found: true; value: unknown } | { found: false } {
  let v = value;
  for (const seg of path.split('.')) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, seg)) return { found: false };
    v = (v as Record<string, unknown>)[seg];
  }
  return { found: true, value: v };
}

/** A value as the text comparisons see it: strings as they are, the rest as JSON ("23", "true", "null"). */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
}

/** A number, or a string that is one ("21.5"); anything else is not. */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    if (Number.isFinite(n)) return n;
  }
  return undefined;
}

export function judge(when: TriggerCondition | undefined, text: string): Verdict {
  const payload = payloadValue(text);
  let value = payload.value;
  if (when?.path !== undefined) {
    if (!payload.json) return { match: false, why: `the payload is not JSON, and when.path (${when.path}) needs a JSON field`, shape: true };
    const at = valueAt(payload.value, when.path);
    if (!at.found) return { match: false, why: `the payload has no field ${when.path}`, shape: true };
    value = at.value;
  }
  if (!when) return { match: true, value };
  const s = asText(value);
  if (when.equals !== undefined && s !== when.equals) return { match: false, why: `${JSON.stringify(s)} is not ${JSON.stringify(when.equals)}` };
  if (when.notEquals !== undefined && s === when.notEquals) return { match: false, why: `the value is ${JSON.stringify(when.notEquals)}` };
  if (when.above !== undefined || when.below !== undefined) {
    const n = asNumber(value);
    if (n === undefined) return { match: false, why: `${JSON.stringify(s.slice(0, 40))} is not a number` };
    if (when.above !== undefined && !(n > when.above)) return { match: false, why: `${n} is not above ${when.above}` };
    if (when.below !== undefined && !(n < when.below)) return { match: false, why: `${n} is not below ${when.below}` };
  }
  if (when.contains !== undefined && !s.toLowerCase().includes(when.contains.toLowerCase())) return { match: false, why: `the value does not contain ${JSON.stringify(when.contains)}` };
  return { match: true, value };
}
