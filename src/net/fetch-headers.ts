// The Fetch standard's Headers (with the "none" guard: every field may be set), for the requests and
// answers of src/net/http-fetch.ts and for the Anthropic SDK, which builds its request's headers with
// `new Headers()`. Node's own Headers is undici's: the first use of any of undici's classes compiles
// and runs its whole bundle, measured on Node 24.21 at 24-40 ms and 2.8 MiB of V8 heap that stay for
// the life of the process, which a gateway paid at its first turn and `pinclaw agent` at every run
// (docs/performance.md, "Twelfth pass"). test/fetch-headers.test.ts compares this class with undici's
// on the same operations, names and values included that either refuses.
//
// Hand-written rather than a package: the standard's algorithm is this short, and no package on npm
// implements it without also being a fetch polyfill that the gateway would load whole.

/** A field name: an HTTP token (RFC 9110, section 5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** HTTP whitespace, which the standard strips from both ends of a value. */
const EDGES = /^[\t\n\r ]+|[\t\n\r ]+$/g;
/** What a value may not hold once stripped: NUL, CR, LF; and, being a ByteString, no unit above 0xFF. */
const BAD_VALUE = /[\0\r\n]|[^\0-\xff]/;

function checkedName(name: unknown, method: string): string {
  const s = String(name);
  if (!TOKEN.test(s)) throw new TypeError(`Headers.${method}: ${JSON.stringify(s)} is an invalid header name.`);
  return s.toLowerCase();
}

function checkedValue(value: unknown, method: string): string {
  const s = String(value).replace(EDGES, '');
  if (BAD_VALUE.test(s)) throw new TypeError(`Headers.${method}: ${JSON.stringify(s)} is an invalid header value.`);
  return s;
}

/** One field: the values given for it, in order (set-cookie's are never joined; the others are read joined). */
interface Field {
  values: string[];
}

export class FetchHeaders implements Headers {
  // Keyed by the lower-case name; read in the order of those names (the standard's "sort and combine").
  readonly #fields = new Map<string, Field>();

  constructor(init?: HeadersInit | Iterable<readonly [string, string]> | Record<string, string>) {
    if (init == null) return;
    if (typeof init !== 'object') throw new TypeError("Headers constructor: the argument is neither a sequence nor a record.");
    const pairs = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator];
    if (pairs !== undefined) {
      if (typeof pairs !== 'function') throw new TypeError('Headers constructor: its iterator is not a function.');
      for (const pair of init as Iterable<unknown>) {
        if (pair == null || typeof pair !== 'object' || typeof (pair as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') throw new TypeError('Headers constructor: an entry is not a sequence.');
        const items = [...(pair as Iterable<unknown>)];
        if (items.length !== 2) throw new TypeError(`Headers constructor: expected name/value pair to be length 2, found ${items.length}.`);
        this.append(items[0] as string, items[1] as string);
      }
      return;
    }
    for (const name of Object.keys(init)) this.append(name, (init as Record<string, string>)[name]!);
  }

  append(name: string, value: string): void {
    const key = checkedName(name, 'append');
    const v = checkedValue(value, 'append');
    const field = this.#fields.get(key);
    if (field) field.values.push(v);
    else this.#fields.set(key, { values: [v] });
  }

  set(name: string, value: string): void {
    const key = checkedName(name, 'set');
    this.#fields.set(key, { values: [checkedValue(value, 'set')] });
  }

  delete(name: string): void {
    this.#fields.delete(checkedName(name, 'delete'));
  }

  get(name: string): string | null {
    const field = this.#fields.get(checkedName(name, 'get'));
    return field ? field.values.join(', ') : null;
  }

  has(name: string): boolean {
    return this.#fields.has(checkedName(name, 'has'));
  }

  getSetCookie(): string[] {
    return [...(this.#fields.get('set-cookie')?.values ?? [])];
  }

  /** The standard's "sort and combine": names in byte order, each once with its values joined, but set-cookie once per value. */
  #sorted(): [string, string][] {
    const out: [string, string][] = [];
    for (const key of [...this.#fields.keys()].sort()) {
      const values = this.#fields.get(key)!.values;
      if (key === 'set-cookie') for (const v of values) out.push([key, v]);
      else out.push([key, values.join(', ')]);
    }
    return out;
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    if (typeof callback !== 'function') throw new TypeError('Headers.forEach: the callback is not a function.');
    for (const [key, value] of this.#sorted()) callback.call(thisArg, value, key, this);
  }

  entries(): HeadersIterator<[string, string]> {
    return this.#sorted()[Symbol.iterator]() as HeadersIterator<[string, string]>;
  }

  keys(): HeadersIterator<string> {
    return this.#sorted().map(([key]) => key)[Symbol.iterator]() as HeadersIterator<string>;
  }

  values(): HeadersIterator<string> {
    return this.#sorted().map(([, value]) => value)[Symbol.iterator]() as HeadersIterator<string>;
  }

  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}
