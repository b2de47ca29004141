// The Discord gateway (v10) connection: GET /gateway/bot for the address and the identify budget,
// Hello then Identify (or Resume with the session id and the last sequence number against the
// session's resume_gateway_url), heartbeats with a jittered first beat, and a new connection when a
// beat's ack did not come before the next beat (a zombied connection). Op 7 reconnects and resumes;
// op 9 resumes or identifies anew as Discord says. Close codes that no retry can fix (a bad token,
// intents the app may not use) stop this channel with an error naming the cause; the others
// reconnect with a backoff. The session (id, sequence, resume address) is saved, so a gateway
// restarted after a crash resumes and Discord replays what came meanwhile.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { DiscordApiError, type DiscordRest } from './rest.js';
import { openSocket, type Socket } from './socket.js';

/** GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT */
export const INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

export interface GatewaySession {
  id: string;
  seq: number;
  resumeUrl: string;
}

export interface Dispatch {
  t: string;
  s: number;
  d: unknown;
}

export interface GatewayOptions {
  token: string;
  rest: DiscordRest;
  signal: AbortSignal;
  /** the saved session, if any (a restart resumes it) */
  loadSession(): GatewaySession | undefined;
  saveSession(s: GatewaySession | undefined): void;
  /** one event; awaited before the next is handled (the sequence is saved by it with its commit) */
  dispatch(ev: Dispatch, session: GatewaySession): Promise<void>;
  onStatus(state: 'up' | 'down', detail: string): void;
}

/** A close that no reconnect can fix: the channel stays down with this message. */
export class FatalGatewayError extends Error {}

/** Close codes after which Discord refuses the same identify again. */
const FATAL: Record<number, string> = {
  4004: 'Discord refused the bot token (close 4004 "authentication failed"): check channels.discord.token (Developer Portal → your application → Bot → Reset Token)',
  4010: 'Discord refused the shard settings (close 4010)',
  4011: 'the bot is in too many guilds for one connection (close 4011 "sharding required"); pinclaw does not shard',
  4012: 'Discord refused the gateway version (close 4012)',
  4013: 'Discord refused the intents value (close 4013 "invalid intents")',
  4014: 'Discord refused the intents (close 4014 "disallowed intents"): enable MESSAGE_CONTENT ("Message Content Intent") under Privileged Gateway Intents in the Developer Portal (your application → Bot), then restart the gateway',
};
/** Close codes after which the session is gone: identify anew. */
const NEW_SESSION = new Set([4007, 4009]);

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => (clearTimeout(timer), signal.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });

interface GatewayBot {
  url: string;
  session_start_limit?: { total: number; remaining: number; reset_after: number; max_concurrency?: number };
}

/** Runs until the signal aborts or a fatal close (thrown as FatalGatewayError). */
export async function runGateway(o: GatewayOptions): Promise<void> {
  let failures = 0;
  let up = false;
  let session = o.loadSession();
  let info: GatewayBot | undefined;
  while (!o.signal.aborted) {
    let detail: string;
    let wait: number | undefined;
    try {
      if (!session) {
        // Identifying spends the daily budget: asked for each new session, and waited for when spent.
        info = await o.rest.call<GatewayBot>('GET', '/gateway/bot', undefined, { signal: o.signal });
        const limit = info.session_start_limit;
        if (limit && limit.remaining <= 0) {
          const ms = limit.reset_after;
          const why = `the daily identify budget is spent (${limit.total} sessions); waiting ${Math.round(ms / 1000)} s for Discord to reset it`;
          log.warn(`discord: ${why}`);
          o.onStatus('down', why);
          await sleepFor(ms, o.signal);
          continue;
        }
      }
      const result = await connectOnce(session, info?.url);
      session = result.session;
      detail = result.detail;
      if (result.up) failures = 0;
      up = result.up;
      wait = result.wait;
    } catch (err) {
      if (err instanceof FatalGatewayError) throw err;
      if (err instanceof DiscordApiError && err.status === 401) {
        throw new FatalGatewayError('Discord refused the bot token (HTTP 401 from GET /gateway/bot): check channels.discord.token (Developer Portal → your application → Bot → Reset Token)');
      }
      detail = errorMessage(err);
    }
    if (o.signal.aborted) break;
    failures++;
    wait ??= Math.min(60_000, 1000 * 2 ** Math.min(failures - 1, 6)) * (0.75 + Math.random() / 2);
    if (up || failures === 1) o.onStatus('down', detail);
    up = false;
    log.warn(`discord: ${detail}; reconnecting in ${(wait / 1000).toFixed(1)} s (the other channels go on)`);
    await sleepFor(wait, o.signal);
  }

  /** One connection, from open to close. */
  function connectOnce(prior: GatewaySession | undefined, identifyUrl: string | undefined): Promise<{ session: GatewaySession | undefined; detail: string; up: boolean; wait?: number }> {
    const base = prior ? prior.resumeUrl : identifyUrl!;
    const url = `${base.replace(/\/+$/, '')}/?v=10&encoding=json`;
    return new Promise((resolve, reject) => {
      let s = prior;
      let beat: NodeJS.Timeout | undefined;
      let acked = true;
      let ready = false;
      let wait: number | undefined;
      let why: string | undefined;
      let lastSeq: number | null = prior?.seq ?? null;
      // Not 1000: that ends the session on Discord's side. Closed with 4000 the session stays
      // resumable, so the next start resumes it and gets what was said while the gateway restarted.
      const stop = () => sock.close(4000, 'restarting');
      o.signal.addEventListener('abort', stop);
      // Events are handled one after the other, in the order Discord numbered them.
      let chain = Promise.resolve();
      const sock: Socket = openSocket(url, {
        message: (text) => {
          let p: { op: number; d: unknown; s: number | null; t: string | null };
          try {
            p = JSON.parse(text) as typeof p;
          } catch {
            log.warn(`discord: the gateway sent something that is not JSON: ${text.slice(0, 100)}`);
            return;
          }
          chain = chain.then(() => handle(p)).catch((err: unknown) => {
            why = `an event could not be handled: ${errorMessage(err)}`;
            log.error(`discord: ${why}`);
            sock.close(4000, 'handler failed');
          });
        },
        close: (code, reason) => {
          clearTimeout(beat);
          o.signal.removeEventListener('abort', stop);
          void chain.then(() => {
            if (FATAL[code]) return reject(new FatalGatewayError(FATAL[code]));
            if (NEW_SESSION.has(code)) s = undefined;
            o.saveSession(s);
            resolve({ session: s, up: ready, wait, detail: why ?? `the gateway closed the connection (${code}${reason ? ` ${reason}` : ''})` });
          });
        },
      });

      const beatNow = () => {
        if (!acked) {
          // The last beat got no ack: the connection is a zombie. Reconnect and resume.
          why = 'no heartbeat ack from the gateway';
          sock.close(4000, 'heartbeat ack missed');
          return;
        }
        acked = false;
        sock.send(JSON.stringify({ op: 1, d: lastSeq }));
      };

      async function handle(p: { op: number; d: unknown; s: number | null; t: string | null }): Promise<void> {
        if (p.s !== null && p.s !== undefined) lastSeq = p.s;
        switch (p.op) {
          case 10: {
            const interval = (p.d as { heartbeat_interval: number }).heartbeat_interval;
            // The first beat at a random point of the interval, so reconnecting clients do not beat in step.
            beat = setTimeout(function first() {
              beatNow();
              beat = setInterval(beatNow, interval);
            }, interval * Math.random());
            if (s) sock.send(JSON.stringify({ op: 6, d: { token: o.token, session_id: s.id, seq: s.seq } }));
            else sock.send(JSON.stringify({ op: 2, d: { token: o.token, intents: INTENTS, properties: { os: process.platform, browser: 'pinclaw', device: 'pinclaw' } } }));
            return;
          }
          case 11:
            acked = true;
            return;
          case 1:
            sock.send(JSON.stringify({ op: 1, d: lastSeq }));
            return;
          case 7:
            why = 'the gateway asked for a reconnect (op 7)';
            wait = 0;
            sock.close(4000, 'reconnect requested');
            return;
          case 9: {
            const resumable = p.d === true;
            if (!resumable) s = undefined;
            why = `the gateway invalidated the session (op 9, ${resumable ? 'resumable' : 'not resumable'})`;
            // Discord asks for a pause of 1-5 s before identifying again.
            wait = resumable ? 0 : 1000 + Math.random() * 4000;
            sock.close(4000, 'invalid session');
            return;
          }
          case 0: {
            if (p.t === 'READY') {
              const d = p.d as { session_id: string; resume_gateway_url: string };
              s = { id: d.session_id, resumeUrl: d.resume_gateway_url, seq: p.s ?? 0 };
            }
            if (p.t === 'READY' || p.t === 'RESUMED') {
              ready = true;
              o.onStatus('up', p.t === 'READY' ? 'connected' : 'resumed');
            }
            if (!s) return;
            s.seq = p.s ?? s.seq;
            await o.dispatch({ t: p.t ?? '', s: s.seq, d: p.d }, s);
            return;
          }
        }
      }
    });
  }
}
