// doctor's look at the signal-cli daemon the Signal channel talks to (pinclaw does not start it):
// GET /api/v1/check, and how to start the daemon when nothing answers. In the Signal chunk, so a
// doctor without channels.signal.url never loads it.
import { signalRpc } from './rpc.js';

export async function signalDaemonCheck(url: string, account: string | undefined): Promise<{ state: 'ok' | 'fail'; detail: string }> {
  try {
    await signalRpc(url, account ?? '').check(5000);
    return { state: 'ok', detail: `signal-cli daemon at ${url} answers` };
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^signal-cli check: /, '') : String(err);
    return { state: 'fail', detail: `no signal-cli daemon answers at ${url}: ${why}; the other channels are not affected` };
  }
}
