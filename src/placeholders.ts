// "{name}" placeholders in text the owner wrote: a trigger's notify text ({line}, {edge}, {value},
// {time}...), a voice command's argv ({wav}, {text}). Each known name is replaced wherever it
// occurs; other braces stay as written, so a text that means them literally keeps them. A leaf
// module without state (the voice chunk holds its own copy).

export function fillPlaceholders(text: string, values: Readonly<Record<string, string | number>>): string {
  return text.replace(/\{(\w+)\}/g, (whole, k: string) => (Object.hasOwn(values, k) ? String(values[k]) : whole));
}
