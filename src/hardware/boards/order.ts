// Orderings without Intl: localeCompare loads ICU's collation data, measured at about 3 MiB of RSS
// that a long-running gateway then keeps, to sort a dozen ASCII names.

/** Code-unit order (ids, line-name prefixes: ASCII). */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Digit runs compared as numbers: "gpiochip2" before "gpiochip10", "ttyUSB9" before "ttyUSB10". */
export function natural(a: string, b: string): number {
  const ta = a.match(/\d+|\D+/g) ?? [];
  const tb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === y) continue;
    const nx = /^\d/.test(x);
    const ny = /^\d/.test(y);
    if (nx && ny) return Number(x) - Number(y) || byText(x, y);
    return byText(x, y);
  }
  return ta.length - tb.length;
}
