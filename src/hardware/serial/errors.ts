// What a serial failure is called. Every message names the device (when it has a name) and the port,
// and says what to do: the ports that do exist, the process holding a busy one, the group to join,
// whether anything listens on a socket:// port. Classification reads errno names where Node gives
// them and the serialport addon's strerror() text where it does not.
import { readFileSync, statSync, type Stats } from 'node:fs';
import { HOST_ROOTS, type HostRoots } from '../boards/host-roots.js';
import { findHolders, type PortHolder } from './holders.js';
import { describePorts, listSerialPorts } from './list.js';
import type { SerialAddress, SocketAddress } from './types.js';

export type SerialErrorKind =
  | 'address' // the port text is neither a device path nor socket://host:port
  | 'options' // a missing or impossible baud rate, name or timeout
  | 'owned' // another device of this process has the port
  | 'not-found'
  | 'busy'
  | 'permission'
  | 'not-a-tty'
  | 'refused' // socket://: nothing listens
  | 'unreachable' // socket://: no route, unknown host
  | 'timeout' // socket://: no answer to the connect
  | 'unavailable' // the serialport addon cannot be loaded
  | 'not-connected' // a write while the device is reconnecting
  | 'closed' // a write after close()
  | 'lost' // an open link ended
  | 'write' // a write failed or timed out
  | 'failed'; // anything else

export class SerialError extends Error {
  readonly kind: SerialErrorKind;
  /** The port as given (a path or socket:// URL). */
  readonly port: string;
  readonly device: string | null;
  /** The errno name behind it, when there was one. */
  readonly code: string | null;
  /** For 'busy': the processes found holding the port. */
  readonly holders: readonly PortHolder[];
  constructor(
    kind: SerialErrorKind,
    message: string,
    fields: { port: string; device?: string | undefined; code?: string | null; holders?: readonly PortHolder[] },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SerialError';
    this.kind = kind;
    this.port = fields.port;
    this.device = fields.device ?? null;
    this.code = fields.code ?? null;
    this.holders = fields.holders ?? [];
  }
}

/** Failures a later attempt can cure (the board plugged back in, the holder gone, the server up). */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof SerialError)) return true;
  return err.kind !== 'address' && err.kind !== 'options' && err.kind !== 'unavailable';
}

/** Whose failure it is: a device's name, or the bare port when the caller gave no name. */
export interface FailureTarget {
  name?: string | undefined;
  address: SerialAddress;
}

/** "device arduino: " or "" (the message then starts with the port). */
export function lead(t: FailureTarget): string {
  return t.name ? `device ${t.name}: ` : '';
}

/**
 * strerror() texts the addon puts in its messages, glibc and musl wording, to errno names. Only the
 * errnos an open of a tty can give; anything else stays unclassified and is quoted as it came.
 */
const STRERROR: ReadonlyArray<[RegExp, string]> = [
  [/^No such file or directory$/i, 'ENOENT'],
  [/^Not a directory$/i, 'ENOTDIR'],
  [/^Permission denied$/i, 'EACCES'],
  [/^Operation not permitted$/i, 'EPERM'],
  [/^(Device or resource busy|Resource busy)$/i, 'EBUSY'],
  [/^(Resource temporarily unavailable|Operation would block)$/i, 'EAGAIN'],
  [/^No such device or address$/i, 'ENXIO'],
  [/^No such device$/i, 'ENODEV'],
  [/^(Inappropriate ioctl for device|Not a tty)$/i, 'ENOTTY'],
  [/^(Input\/output error|I\/O error)$/i, 'EIO'],
  [/^Is a directory$/i, 'EISDIR'],
];

/** The errno name of a Node error, or of the addon's "Error: <strerror>, cannot open <path>" text. */
export function errnoOf(err: unknown): string | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'string' && /^E[A-Z0-9]+$/.test(e.code)) return e.code;
  const msg = typeof e?.message === 'string' ? e.message : String(err);
  // "Error: Permission denied, cannot open /dev/ttyACM0", "Error Resource temporarily unavailable
  // Cannot lock port", "Error: Inappropriate ioctl for device setting custom baud rate of 9600"
  const m = /^Error:? (.+?)(?:,? cannot open |,? Cannot lock port| setting custom baud rate| \|\||, cannot )/.exec(msg);
  const text = m?.[1]?.trim();
  if (!text) return null;
  return STRERROR.find(([re]) => re.test(text))?.[1] ?? null;
}

function groupName(gid: number): string | null {
  try {
    for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && id !== undefined && Number(id) === gid) return name;
    }
  } catch {
    // no /etc/group (a minimal container): the number is all there is
  }
  return null;
}

function modeString(st: Stats): string {
  const type = st.isCharacterDevice() ? 'c' : st.isDirectory() ? 'd' : '-';
  const bits = 'rwxrwxrwx';
  let out = type;
  for (let i = 0; i < 9; i++) out += st.mode & (1 << (8 - i)) ? bits[i] : '-';
  return out;
}

/** "/dev/serial/by-id/usb-x (/dev/ttyACM0)" for a link, the path alone otherwise. */
export function pathWithTarget(given: string, opened: string | null): string {
  return opened && opened !== given ? `${given} (${opened})` : given;
}

export function notFoundError(t: FailureTarget, path: string, roots: HostRoots = HOST_ROOTS, cause?: unknown): SerialError {
  const ports = describePorts(listSerialPorts(roots));
  return new SerialError('not-found', `${lead(t)}${path} does not exist; serial ports here: ${ports}`, { port: t.address.text, device: t.name, code: 'ENOENT' }, { cause });
}

export function busyError(t: FailureTarget, shown: string, holders: readonly PortHolder[], code: string | null, cause?: unknown): SerialError {
  // This process may hold it too: through a link opened outside the device registry.
  const who = holders.map((h) => `pid ${h.pid} (${h.comm ?? 'name unknown'}${h.pid === process.pid ? ', this process' : ''})`).join(', ');
  const message = holders.length ? `${lead(t)}${shown} is busy: held by ${who}` : `${lead(t)}${shown} is busy (another process has it open or locked; could not tell which)`;
  return new SerialError('busy', message, { port: t.address.text, device: t.name, code, holders }, { cause });
}

export function permissionError(t: FailureTarget, path: string, file: string | null, code: string, cause?: unknown): SerialError {
  let st: Stats | null = null;
  try {
    st = statSync(file ?? path);
  } catch {
    st = null;
  }
  const group = st ? (groupName(st.gid) ?? String(st.gid)) : null;
  const facts = [file && file !== path ? file : null, st ? `${modeString(st)} group ${group}` : null].filter((x) => x !== null);
  const shown = facts.length ? `${path} (${facts.join(', ')})` : path;
  // Joining root's group is no fix anyone should be told to make; dialout is what distributions use.
  const join =
    group && group !== 'root' && group !== '0'
      ? `join the group that owns it: sudo usermod -aG ${group} $USER, then log in again`
      : `join the group serial ports usually belong to (dialout): sudo usermod -aG dialout $USER, then log in again (a udev rule may be needed to give the device to that group)`;
  return new SerialError('permission', `${lead(t)}permission denied on ${shown}: ${join}`, { port: t.address.text, device: t.name, code }, { cause });
}

/**
 * An open of a device path that failed in the addon or in the checks before it. `file` is the
 * resolved device file, when the path resolved.
 */
export function deviceOpenError(t: FailureTarget, path: string, file: string | null, err: unknown, roots: HostRoots = HOST_ROOTS): SerialError {
  if (err instanceof SerialError) return err;
  const code = errnoOf(err);
  const shown = pathWithTarget(path, file);
  const raw = err instanceof Error ? err.message : String(err);
  const port = t.address.text;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ENODEV':
    case 'ENXIO':
      // ENODEV/ENXIO: the node exists but no device is behind it (unplugged between stat and open).
      return code === 'ENOENT' || code === 'ENOTDIR'
        ? notFoundError(t, path, roots, err)
        : new SerialError('not-found', `${lead(t)}${shown} has no device behind it (${code}); serial ports here: ${describePorts(listSerialPorts(roots))}`, { port, device: t.name, code }, { cause: err });
    case 'EBUSY':
    case 'EAGAIN':
    case 'EWOULDBLOCK':
      return busyError(t, shown, findHolders(file ?? path, { proc: roots.proc }), code, err);
    case 'EACCES':
    case 'EPERM':
      return permissionError(t, path, file, code, err);
    case 'ENOTTY':
    case 'EISDIR':
      return new SerialError('not-a-tty', `${lead(t)}${shown} is not a serial port (${code})`, { port, device: t.name, code }, { cause: err });
    default:
      return new SerialError('failed', `${lead(t)}cannot open ${shown}: ${raw}`, { port, device: t.name, code }, { cause: err });
  }
}

const hostPort = (a: SocketAddress) => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

/** A socket:// connect that failed; `timeoutMs` when it was the connect timeout that ended it. */
export function socketOpenError(t: FailureTarget & { address: SocketAddress }, err: unknown, timeoutMs?: number): SerialError {
  const a = t.address;
  const where = hostPort(a);
  const port = a.text;
  if (timeoutMs !== undefined) {
    return new SerialError('timeout', `${lead(t)}no answer from ${where} within ${timeoutMs} ms (${port})`, { port, device: t.name, code: 'ETIMEDOUT' }, { cause: err });
  }
  const code = errnoOf(err);
  const raw = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'ECONNREFUSED':
      return new SerialError('refused', `${lead(t)}connection refused by ${where} (${port}): nothing listens there; is ser2net or the emulator running?`, { port, device: t.name, code }, { cause: err });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SerialError('unreachable', `${lead(t)}cannot resolve host ${a.host} (${port}, ${code})`, { port, device: t.name, code }, { cause: err });
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
      return new SerialError('unreachable', `${lead(t)}${where} is unreachable (${port}, ${code})`, { port, device: t.name, code }, { cause: err });
    case 'ETIMEDOUT':
      return new SerialError('timeout', `${lead(t)}no answer from ${where} (${port}, ETIMEDOUT)`, { port, device: t.name, code }, { cause: err });
    default:
      return new SerialError('failed', `${lead(t)}cannot connect to ${where} (${port}): ${raw}`, { port, device: t.name, code }, { cause: err });
  }
}
