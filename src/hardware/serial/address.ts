// What a user may give as a serial port: an absolute device path, or pyserial's socket://host:port
// (ser2net's raw TCP ports and QEMU's `-serial tcp:host:port,server`). Anything else is refused
// with what was wrong and the two accepted forms, because a port is typed by hand into a config.
import { isAbsolute, normalize } from 'node:path';
import { SerialError } from './errors.js';
import type { SerialAddress } from './types.js';

export const ACCEPTED_FORMS = 'a device path such as /dev/ttyACM0 or /dev/serial/by-id/usb-..., or socket://HOST:PORT (ser2net, QEMU -serial tcp:)';

function refuse(text: string, why: string): SerialError {
  return new SerialError('address', `serial port "${text}": ${why}; use ${ACCEPTED_FORMS}`, { port: text });
}

function parseSocket(text: string, rest: string): SerialAddress {
  if (/[?#]/.test(rest)) throw refuse(text, 'options after the port (?logging=..., #...) are not supported');
  const body = rest.replace(/\/$/, '');
  if (body.includes('/')) throw refuse(text, 'a socket:// URL has no path after the port');
  if (body.includes('@')) throw refuse(text, 'a socket:// URL has no user name');
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(body);
  if (!m) throw refuse(text, 'an IPv6 host goes in brackets: socket://[::1]:PORT');
  const rawHost = m[1]!;
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  if (!host) throw refuse(text, 'the host is missing');
  if (rawHost.startsWith('[') && !/^[0-9a-f:.]+$/i.test(host)) throw refuse(text, `"${host}" is not an IPv6 address`);
  if (!rawHost.startsWith('[') && !/^[A-Za-z0-9._-]+$/.test(host)) throw refuse(text, `"${host}" is not a host name or address`);
  if (m[2] === undefined || m[2] === '') throw refuse(text, 'the TCP port is missing (socket://HOST:PORT)');
  if (!/^\d+$/.test(m[2])) throw refuse(text, `the TCP port "${m[2]}" is not a number`);
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw refuse(text, `the TCP port ${port} is outside 1-65535`);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { kind: 'socket', host, port, text: `socket://${shownHost}:${port}` };
}

/** Parses a port; throws a SerialError of kind 'address' naming what was wrong. */
export function parseSerialAddress(input: string): SerialAddress {
  const text = input.trim();
  if (!text) throw refuse(input, 'it is empty');
  if (text.includes('\0')) throw refuse(text, 'it contains a NUL character');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (name === 'socket') return parseSocket(text, text.slice(scheme[0].length));
    if (name === 'tcp') throw refuse(text, `pyserial and pinclaw call a TCP port socket://, not tcp:// (socket://${text.slice(scheme[0].length)})`);
    if (name === 'file') throw refuse(text, `give the path itself (${text.slice(scheme[0].length)}), not a file:// URL`);
    throw refuse(text, `${name}:// ports are not supported (rfc2217://, loop:// and the like are pyserial's own)`);
  }
  if (/^tcp:[^/]/i.test(text)) throw refuse(text, `that is QEMU's -serial syntax; the client side is socket://${text.slice(4).replace(/,.*$/, '')}`);
  if (/^COM\d+$/i.test(text)) throw refuse(text, 'COM ports are Windows names; on Linux a USB serial port is /dev/ttyACM0 or /dev/ttyUSB0');
  if (/^tty[A-Za-z]+\d*$/.test(text) || /^serial\d+$/.test(text)) throw refuse(text, `a device name needs its directory: /dev/${text}`);
  if (/^[A-Za-z0-9.-]+:\d+$/.test(text) || /^\[[0-9a-f:.]+\]:\d+$/i.test(text)) throw refuse(text, `a TCP port needs the socket:// scheme: socket://${text}`);
  if (!isAbsolute(text)) throw refuse(text, 'a device path must be absolute');
  if (text.endsWith('/')) throw refuse(text, 'it names a directory');
  return { kind: 'device', path: normalize(text), text };
}

/** The address itself, or parsed from text. */
export function toSerialAddress(port: string | SerialAddress): SerialAddress {
  return typeof port === 'string' ? parseSerialAddress(port) : port;
}
