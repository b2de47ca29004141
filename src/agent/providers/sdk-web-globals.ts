// Injected into the Anthropic SDK's lazy chunk (scripts/build.mjs, `inject`): esbuild replaces the
// SDK's references to the globals `Headers` and `FormData` with these exports. A message's request
// does `new Headers()` (buildHeaders) and asks `body instanceof FormData`; Node's classes for both are
// undici's, whose first use loads undici's whole bundle (src/net/fetch-headers.ts says what that
// costs). Under tsx and tap there is no chunk and the SDK uses Node's classes, which behave the same.
import { FetchHeaders } from '../../net/fetch-headers.js';

export { FetchHeaders as Headers };

/**
 * Node's FormData, loaded only when one is made (the SDK's file uploads, which pinclaw does not use).
 * `instanceof` asks what the object says it is, as undici's FormData says "FormData", so that asking
 * of a JSON body loads nothing.
 */
export class FormData {
  constructor() {
    return new globalThis.FormData();
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && Object.prototype.toString.call(value) === '[object FormData]';
  }
}
