// The fetch() every request of pinclaw's goes through: src/net/http-fetch.ts, over node:http and
// node:https, instead of Node's global fetch, whose WebAssembly HTTP parser (undici's) stays in memory
// for the life of the process once a first request has loaded it (measured there). The implementation
// is a lazy chunk loaded by the first request, as a gateway with no channel that polls makes none until
// a turn; under tsx and tap the import() is an ordinary one. test/http-fetch.test.ts checks that no
// module of src/ calls the global fetch.
import type { FetchTransport, NodeAnswer } from './http-fetch.js';

export async function httpFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const { fetchOverNodeHttp } = await import('./http-fetch.js');
  return fetchOverNodeHttp(input, init);
}

/** The same request, its answer's body a Node stream (see requestOverNodeHttp). */
export async function httpRequest(input: string | URL, init?: RequestInit, transport?: FetchTransport): Promise<NodeAnswer> {
  const { requestOverNodeHttp } = await import('./http-fetch.js');
  return requestOverNodeHttp(input, init, transport);
}
