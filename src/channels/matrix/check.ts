// doctor's look at the homeserver the Matrix channel talks to: GET /_matrix/client/versions (is it
// a homeserver, does it answer) and GET /account/whoami (is the access token taken, and whose is
// it). In the Matrix chunk, so a doctor without channels.matrix never loads it.
import { errorMessage } from '../../errors.js';
import { isRefusedToken, matrixApi, refusedTokenText } from './api.js';
import { httpFetch } from '../../net/fetch.js';

export async function matrixHomeserverCheck(homeserver: string, token: string): Promise<{ state: 'ok' | 'fail'; detail: string }> {
  const base = homeserver.replace(/\/+$/, '');
  try {
    const res = await httpFetch(`${base}/_matrix/client/versions`, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json().catch(() => undefined)) as { versions?: unknown } | undefined;
    if (!res.ok || !Array.isArray(body?.versions)) return { state: 'fail', detail: `${base}/_matrix/client/versions answered HTTP ${res.status} without versions: is channels.matrix.homeserver the client-server URL?` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { state: 'fail', detail: `no homeserver answers at ${base} (${cause ?? errorMessage(err)}); the other channels are not affected` };
  }
  try {
    const me = await matrixApi(base, token).call<{ user_id: string }>('GET', '/account/whoami', undefined, { timeoutMs: 5000 });
    return { state: 'ok', detail: `${base} answers; the token is ${me.user_id}'s` };
  } catch (err) {
    return { state: 'fail', detail: isRefusedToken(err) ? refusedTokenText(base) : `${base}: ${errorMessage(err)}` };
  }
}
