// The MaixCam channel: cameras (Sipeed MaixCAM running a small script, or anything that speaks the
// format) connect to the gateway over TCP and speak JSON lines (format in docs/hardware.md#maixcam):
// a hello with the shared token first, then detections, and results of the commands pinclaw sends.
// Detections go to a listener (the triggers); commands come from the camera_command tool. A camera
// that does not authenticate within a few seconds, sends a line over 64 KiB or more than a few bad
// lines is disconnected; one camera's failure never touches another's.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { count } from '../../counters.js';
import { log as defaultLog, type Logger } from '../../log.js';
import { listenOn } from '../../net/listen-on.js';

export const MAX_LINE = 64 * 1024;
const HELLO_TIMEOUT_MS = 5000;
const MAX_BAD_LINES = 10;
const MAX_CAMERAS = 16;
/**
 * Sockets held at once, said hello or not. Each is a descriptor and buffers, and anyone who can
 * reach the port can open them (a connection without hello lives up to the hello timeout), so a
 * flood could otherwise take the descriptors the gateway needs (src/channels/http/connections.ts).
 */
export const MAX_CONNECTIONS = 2 * MAX_CAMERAS;
/** Refusals are logged at most this often (a flood must not flood the log too). */
const LOG_EVERY_MS = 60_000;

export interface Detection {
  camera: string;
  label: string;
  confidence: number;
  /** [x, y, w, h] in pixels, when the camera sends it */
  box?: number[];
  /** the camera's own time, ms since the epoch, when it sends it */
  ts?: number;
  /** when the gateway received it, ms since the epoch */
  receivedAt: number;
}

export interface CommandResult {
  ok: boolean;
  data?: unknown;
  error?: string;
}

export interface MaixcamServerOptions {
  host: string;
  port: number;
  token: string;
  onDetection(d: Detection): void;
  log?: Pick<Logger, 'info' | 'warn'>;
  now?: () => number;
  /** how long a connection may take to say hello; default 5 s */
  helloTimeoutMs?: number;
  /** sockets held at once; default MAX_CONNECTIONS */
  maxConnections?: number;
}

export interface MaixcamConnections {
  open: number;
  max: number;
  /** closed on arrival since start: the cap reached by cameras that said hello */
  refused: number;
  /** connections that had not said hello, closed to let a newer one in, since start */
  evicted: number;
}

export interface MaixcamServer {
  /** the port it listens on (useful with port 0) */
  readonly port: number;
  /** names of the connected, authenticated cameras */
  cameras(): string[];
  connections(): MaixcamConnections;
  /** Sends a command to a camera and waits for its result. */
  command(camera: string | undefined, command: string, args: unknown, timeoutMs: number): Promise<CommandResult>;
  close(): Promise<void>;
}

interface Camera {
  name: string;
  socket: Socket;
  pending: Map<number, (r: CommandResult) => void>;
}

function tokenMatches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(socket: Socket, obj: unknown): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(obj)}\n`);
}

/** A detection line's fields, checked; undefined when it is not a detection pinclaw can use. */
function detectionOf(v: Record<string, unknown>, camera: string, now: number): Detection | string {
  if (typeof v.label !== 'string' || v.label === '' || v.label.length > 100) return 'label must be a non-empty string of at most 100 characters';
  if (typeof v.confidence !== 'number' || !(v.confidence >= 0 && v.confidence <= 1)) return 'confidence must be a number from 0 to 1';
  const box = Array.isArray(v.box) && v.box.length === 4 && v.box.every((n) => typeof n === 'number' && Number.isFinite(n)) ? (v.box as number[]) : undefined;
  const ts = typeof v.ts === 'number' && Number.isFinite(v.ts) ? v.ts : undefined;
  return { camera, label: v.label, confidence: v.confidence, ...(box ? { box } : {}), ...(ts !== undefined ? { ts } : {}), receivedAt: now };
}

export function startMaixcamServer(o: MaixcamServerOptions): Promise<MaixcamServer> {
  const log = o.log ?? defaultLog;
  const now = o.now ?? Date.now;
  const cameras = new Map<string, Camera>();
  let nextId = 1;
  const max = o.maxConnections ?? MAX_CONNECTIONS;
  /** every socket held, in the order they came; true once it said hello */
  const open = new Map<Socket, boolean>();
  const tally = { refused: 0, evicted: 0 };
  let loggedAt = -Infinity;
  let untold = 0;
  /** The first refusal is logged, then at most one line a minute with how many. */
  const noteRefused = (why: string) => {
    untold++;
    const t = now();
    if (t - loggedAt < LOG_EVERY_MS) return;
    log.warn(`maixcam: closed ${untold} new connection${untold === 1 ? '' : 's'}${loggedAt === -Infinity ? '' : ' in the last minute'}, the last because ${why}; /metrics counts them (pinclaw_maixcam_refused_total)`);
    loggedAt = t;
    untold = 0;
  };

  /**
   * Room for one more socket, or why not. When full, the oldest socket that has not said hello goes
   * (it holds a place a real camera needs, and lives for the hello timeout anyway); only cameras
   * that said hello fill the listener for good.
   */
  const admit = (): string | undefined => {
    if (open.size < max) return undefined;
    for (const [s, hello] of open) {
      if (hello) continue;
      open.delete(s);
      s.destroy();
      tally.evicted++;
      count('maixcam_refused', { reason: 'evicted' });
      noteRefused(`${max} connections were open (hardware.maixcam): the oldest without a hello made room`);
      return undefined;
    }
    tally.refused++;
    count('maixcam_refused', { reason: 'full' });
    const why = `${max} connections are open, all cameras that said hello`;
    noteRefused(why);
    return why;
  };

  const server: Server = createServer((socket) => {
    const full = admit();
    if (full) {
      socket.on('error', () => {});
      send(socket, { type: 'error', error: `too many connections (${full})` });
      socket.destroy();
      return;
    }
    if (cameras.size >= MAX_CAMERAS) {
      send(socket, { type: 'error', error: `too many cameras (${MAX_CAMERAS})` });
      socket.end();
      return;
    }
    open.set(socket, false);
    socket.setNoDelay(true);
    let camera: Camera | undefined;
    let buffered = '';
    let bad = 0;
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    const helloMs = o.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
    const helloTimer = setTimeout(() => {
      send(socket, { type: 'error', error: `no hello within ${helloMs} ms` });
      socket.destroy();
    }, helloMs);
    helloTimer.unref();

    const refuse = (why: string) => {
      bad++;
      send(socket, { type: 'error', error: why });
      if (bad > MAX_BAD_LINES || !camera) {
        log.warn(`maixcam ${camera?.name ?? peer}: disconnected: ${why}`);
        socket.destroy();
      }
    };

    const line = (text: string) => {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        return refuse('not JSON');
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return refuse('a line must be a JSON object');
      const m = v as Record<string, unknown>;
      if (!camera) {
        if (m.type !== 'hello') return refuse('the first line must be {"type":"hello","camera":NAME,"token":TOKEN}');
        if (!tokenMatches(m.token, o.token)) return refuse('bad token');
        const name = typeof m.camera === 'string' && /^[\w.-]{1,64}$/.test(m.camera) ? m.camera : undefined;
        if (!name) return refuse('camera must be a name of letters, digits, ".", "_" or "-" (at most 64)');
        clearTimeout(helloTimer);
        // A camera that reconnects replaces its old connection.
        cameras.get(name)?.socket.destroy();
        camera = { name, socket, pending: new Map() };
        cameras.set(name, camera);
        if (open.has(socket)) open.set(socket, true);
        log.info(`maixcam ${name} connected from ${peer}`);
        send(socket, { type: 'welcome' });
        return;
      }
      if (m.type === 'detection') {
        const d = detectionOf(m, camera.name, now());
        if (typeof d === 'string') return refuse(d);
        try {
          o.onDetection(d);
        } catch (err) {
          log.warn(`maixcam ${camera.name}: a detection listener failed: ${(err as Error).message}`);
        }
        return;
      }
      if (m.type === 'result' && typeof m.id === 'number') {
        const done = camera.pending.get(m.id);
        if (!done) return;
        camera.pending.delete(m.id);
        done({ ok: m.ok === true, ...(m.data !== undefined ? { data: m.data } : {}), ...(typeof m.error === 'string' ? { error: m.error } : {}) });
        return;
      }
      refuse(`unknown type ${JSON.stringify(m.type)}`);
    };

    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const text = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (text) line(text);
        if (socket.destroyed) return;
      }
      if (buffered.length > MAX_LINE) {
        refuse(`a line longer than ${MAX_LINE} bytes`);
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(helloTimer);
      open.delete(socket);
      if (!camera) return;
      for (const done of camera.pending.values()) done({ ok: false, error: 'the camera disconnected' });
      if (cameras.get(camera.name) === camera) cameras.delete(camera.name);
      log.info(`maixcam ${camera.name} disconnected`);
    });
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    listenOn(server, o.port, o.host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : o.port;
      resolve({
        port,
        cameras: () => [...cameras.keys()],
        connections: () => ({ open: open.size, max, ...tally }),
        command(name, command, args, timeoutMs) {
          const cam = name ? cameras.get(name) : cameras.size === 1 ? [...cameras.values()][0] : undefined;
          if (!cam) {
            const list = [...cameras.keys()];
            return Promise.resolve({ ok: false, error: name ? `camera '${name}' is not connected (connected: ${list.join(', ') || 'none'})` : list.length ? `name the camera: ${list.join(', ')}` : 'no camera is connected' });
          }
          const id = nextId++;
          return new Promise((done) => {
            const timer = setTimeout(() => {
              cam.pending.delete(id);
              done({ ok: false, error: `camera '${cam.name}' did not answer within ${timeoutMs} ms` });
            }, timeoutMs);
            cam.pending.set(id, (r) => {
              clearTimeout(timer);
              done(r);
            });
            send(cam.socket, { type: 'command', id, command, args: args ?? {} });
          });
        },
        close: () =>
          new Promise<void>((done) => {
            for (const s of open.keys()) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
