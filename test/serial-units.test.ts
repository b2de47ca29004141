// The serial layer's pure parts: parsing port addresses, the reconnect backoff, the port list over
// fake /dev and /sys trees, reading the addon's error texts and /proc/locks, and the wording of
// errors that a root test process cannot provoke for real (busy with no visible holder).
import t from 'tap';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './support/proc.js';
import type { HostRoots } from '../src/hardware/boards/host-roots.js';
import { ACCEPTED_FORMS, parseSerialAddress } from '../src/hardware/serial/address.js';
import { backoffDelay } from '../src/hardware/serial/backoff.js';
import { busyError, errnoOf, isRetryable, permissionError, SerialError, socketOpenError } from '../src/hardware/serial/errors.js';
import { findHolders, lockHolders } from '../src/hardware/serial/holders.js';
import { describePorts, listSerialPorts } from '../src/hardware/serial/list.js';
import type { SocketAddress } from '../src/hardware/serial/types.js';
import { link, write } from './support/fs-tree.js';


t.test('addresses: device paths and socket:// URLs are accepted as given', async (t) => {
  t.same(parseSerialAddress('/dev/ttyACM0'), { kind: 'device', path: '/dev/ttyACM0', text: '/dev/ttyACM0' });
  t.same(parseSerialAddress('  /dev/ttyUSB0 '), { kind: 'device', path: '/dev/ttyUSB0', text: '/dev/ttyUSB0' }, 'surrounding blanks are dropped');
  const byId = '/dev/serial/by-id/usb-Arduino__www.arduino.cc__0043_85734323430351D0E1F1-if00';
  t.same(parseSerialAddress(byId), { kind: 'device', path: byId, text: byId });
  t.same(parseSerialAddress('/tmp/x//a'), { kind: 'device', path: '/tmp/x/a', text: '/tmp/x//a' }, 'any absolute path, normalized for opening');
  t.same(parseSerialAddress('socket://localhost:2000'), { kind: 'socket', host: 'localhost', port: 2000, text: 'socket://localhost:2000' });
  t.same(parseSerialAddress('SOCKET://192.168.1.20:4001/'), { kind: 'socket', host: '192.168.1.20', port: 4001, text: 'socket://192.168.1.20:4001' }, 'scheme case and a trailing slash');
  t.same(parseSerialAddress('socket://[::1]:7000'), { kind: 'socket', host: '::1', port: 7000, text: 'socket://[::1]:7000' }, 'IPv6 in brackets');
});

t.test('addresses: anything else is refused, naming what was wrong and the two accepted forms', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /it is empty/],
    ['ttyACM0', /needs its directory: \/dev\/ttyACM0/],
    ['COM3', /COM ports are Windows names/],
    ['dev/ttyUSB0', /must be absolute/],
    ['/dev/', /names a directory/],
    ['tcp://host:2000', /socket:\/\/host:2000/],
    ['tcp:localhost:4000,server', /QEMU's -serial syntax; the client side is socket:\/\/localhost:4000/],
    ['rfc2217://host:2000', /rfc2217:\/\/ ports are not supported/],
    ['file:///dev/ttyS0', /give the path itself \(\/dev\/ttyS0\)/],
    ['localhost:2000', /needs the socket:\/\/ scheme: socket:\/\/localhost:2000/],
    ['socket://host', /the TCP port is missing/],
    ['socket://:2000', /the host is missing/],
    ['socket://host:0', /outside 1-65535/],
    ['socket://host:70000', /outside 1-65535/],
    ['socket://host:http', /"http" is not a number/],
    ['socket://host:2000?logging=debug', /options after the port/],
    ['socket://host:2000/x', /no path after the port/],
    ['socket://user@host:2000', /no user name/],
    ['socket://[nope]:1', /not an IPv6 address/],
    ['socket://ho st:1', /not a host name/],
  ];
  for (const [input, why] of cases) {
    try {
      parseSerialAddress(input);
      t.fail(`${JSON.stringify(input)} was accepted`);
    } catch (err) {
      t.ok(err instanceof SerialError && err.kind === 'address', `${JSON.stringify(input)}: a SerialError of kind address`);
      const message = (err as Error).message;
      t.match(message, why, `${JSON.stringify(input)}: ${message}`);
      t.ok(message.includes(`serial port "${input.trim()}"`) && message.endsWith(`use ${ACCEPTED_FORMS}`), 'quotes the input and shows both forms');
    }
  }
});

t.test('backoff: 250 ms doubling to 10 s, and options', async (t) => {
  t.same([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => backoffDelay(n)), [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  t.same([1, 2, 3].map((n) => backoffDelay(n, { initialMs: 10, maxMs: 25 })), [10, 20, 25]);
  t.equal(backoffDelay(0), 250, 'no failure yet waits the first step');
  t.equal(backoffDelay(5000, { initialMs: 100, maxMs: 50 }), 100, 'a cap below the first step is raised to it');
});

function fakeMachine(): HostRoots {
  const dir = tempDir('pinclaw-serial-roots-');
  const r: HostRoots = { proc: join(dir, 'proc'), sys: join(dir, 'sys'), dev: join(dir, 'dev') };
  for (const d of [r.proc, r.sys, r.dev]) mkdirSync(d, { recursive: true });
  // An Uno on USB (cdc-acm: the tty hangs off the interface), with its by-id link.
  const usb = join(r.sys, 'devices', 'pci0000:00', '0000:00:14.0', 'usb1', '1-2');
  write(join(usb, 'idVendor'), '2341\n');
  write(join(usb, 'idProduct'), '0043\n');
  write(join(usb, 'product'), 'Arduino Uno\n');
  const iface = join(usb, '1-2:1.0');
  const acm = join(iface, 'tty', 'ttyACM0');
  mkdirSync(acm, { recursive: true });
  link(iface, join(acm, 'device'));
  link(acm, join(r.sys, 'class', 'tty', 'ttyACM0'));
  write(join(r.dev, 'ttyACM0'), '');
  link('../../ttyACM0', join(r.dev, 'serial', 'by-id', 'usb-Arduino_Uno_8573-if00'));
  // A Pi's PL011 with the firmware's serial0 alias, a real 16550 and a phantom one.
  write(join(r.dev, 'ttyAMA0'), '');
  link('ttyAMA0', join(r.dev, 'serial0'));
  for (const [tty, type] of [['ttyS0', '4'], ['ttyS1', '0'], ['ttyS10', '4']] as const) {
    write(join(r.sys, 'class', 'tty', tty, 'type'), `${type}\n`);
    write(join(r.dev, tty), '');
  }
  // Not serial ports.
  write(join(r.dev, 'tty1'), '');
  write(join(r.dev, 'ttyprintk'), '');
  return r;
}

t.test('listSerialPorts: USB ports with their USB id and by-id name, UARTs with serialN, no phantom ttyS', async (t) => {
  const r = fakeMachine();
  const ports = listSerialPorts(r);
  t.same(
    ports.map((p) => ({ tty: p.tty, kind: p.kind, aliases: p.aliases, usb: p.usb && `${p.usb.vid}:${p.usb.pid}` })),
    [
      { tty: 'ttyACM0', kind: 'usb', aliases: [join(r.dev, 'serial', 'by-id', 'usb-Arduino_Uno_8573-if00')], usb: '2341:0043' },
      { tty: 'ttyAMA0', kind: 'uart', aliases: [join(r.dev, 'serial0')], usb: null },
      { tty: 'ttyS0', kind: 'uart', aliases: [], usb: null },
      { tty: 'ttyS10', kind: 'uart', aliases: [], usb: null },
    ],
  );
  t.equal(ports[0]!.path, join(r.dev, 'ttyACM0'));
  t.equal(
    describePorts(ports),
    `${r.dev}/ttyACM0 (USB 2341:0043 Arduino Uno, ${r.dev}/serial/by-id/usb-Arduino_Uno_8573-if00), ${r.dev}/ttyAMA0 (${r.dev}/serial0), ${r.dev}/ttyS0, ${r.dev}/ttyS10`,
  );
  t.equal(describePorts([]), 'none');
  const empty = tempDir('pinclaw-serial-empty-');
  t.same(listSerialPorts({ proc: join(empty, 'proc'), sys: join(empty, 'sys'), dev: join(empty, 'dev') }), [], 'no /dev at all: no ports, no throw');
});

t.test("errnoOf reads the serialport addon's messages and Node's codes", async (t) => {
  t.equal(errnoOf(new Error('Error: No such file or directory, cannot open /dev/ttyACM0')), 'ENOENT');
  t.equal(errnoOf(new Error('Error: Permission denied, cannot open /dev/ttyACM0')), 'EACCES');
  t.equal(errnoOf(new Error('Error: Device or resource busy, cannot open /dev/ttyUSB0')), 'EBUSY');
  t.equal(errnoOf(new Error('Error Resource temporarily unavailable Cannot lock port')), 'EAGAIN');
  t.equal(errnoOf(new Error('Error: Inappropriate ioctl for device setting custom baud rate of 115200')), 'ENOTTY');
  t.equal(errnoOf(new Error('Error: Resource busy, cannot open /dev/ttyUSB0')), 'EBUSY', "musl's wording");
  t.equal(errnoOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })), 'ECONNREFUSED');
  t.equal(errnoOf(new Error('something else entirely')), null);
});

t.test('/proc/locks: the flock holders of one device and inode, not waiters or other files', async (t) => {
  // st_dev 0x19 is 0:25 (devpts on many systems); 136:3 would be a pty's own rdev, not its dev.
  const text = [
    '1: FLOCK  ADVISORY  WRITE 4242 00:19:3 0 EOF',
    '1: -> FLOCK  ADVISORY  WRITE 4343 00:19:3 0 EOF',
    '2: POSIX  ADVISORY  READ 29728 fe:00:2222431 128 128',
    '3: FLOCK  ADVISORY  WRITE 777 00:19:4 0 EOF',
    '4: OFDLCK ADVISORY  WRITE -1 00:19:3 0 EOF',
  ].join('\n');
  t.same(lockHolders(text, 0x19, 3), [4242]);
  t.same(lockHolders(text, 0x19, 5), []);
  t.same(lockHolders(text, (8 << 8) | 1, 3), [], 'another device with the same inode');
  // The gateway's home lock is SQLite's POSIX (fcntl) lock: the same lines, the other kind.
  t.same(lockHolders(text, 0xfe << 8, 2222431, 'POSIX'), [29728]);
  t.same(lockHolders(text, 0xfe << 8, 2222431), [], 'a POSIX lock is not a flock');
  t.same(lockHolders(text, 0x19, 3, 'POSIX'), [], 'nor the other way round');
});

t.test('holder names: comm, but not the "MainThread" Node >= 24 gives its main thread', async (t) => {
  const dir = tempDir('pinclaw-serial-proc-');
  const port = join(dir, 'ttyFAKE');
  write(port, '');
  const st = statSync(port, { bigint: true });
  const hex = (n: bigint) => n.toString(16).padStart(2, '0');
  const major = ((st.dev & 0xfff00n) >> 8n) | ((st.dev & 0xfffff00000000000n) >> 32n);
  const minor = (st.dev & 0xffn) | ((st.dev & 0xffffff00000n) >> 12n);
  const proc = join(dir, 'proc');
  write(join(proc, 'locks'), [101, 102, 103].map((pid, i) => `${i + 1}: FLOCK  ADVISORY  WRITE ${pid} ${hex(major)}:${hex(minor)}:${st.ino} 0 EOF`).join('\n'));
  write(join(proc, '101', 'comm'), 'minicom\n');
  write(join(proc, '102', 'comm'), 'MainThread\n');
  write(join(proc, '102', 'cmdline'), '/usr/local/bin/pinclaw\0gateway\0');
  write(join(proc, '103', 'comm'), 'MainThread\n');
  link('/opt/node-v24/bin/node', join(proc, '103', 'exe'));
  t.same(findHolders(port, { proc }).map((h) => h.comm), ['minicom', 'pinclaw', 'node'], 'comm; argv[0]; the executable');
});

t.test('error wording that needs no hardware', async (t) => {
  const address = { kind: 'device' as const, path: '/dev/ttyUSB0', text: '/dev/ttyUSB0' };
  const busy = busyError({ name: 'nano', address }, '/dev/ttyUSB0', [], 'EBUSY');
  t.equal(busy.message, 'device nano: /dev/ttyUSB0 is busy (another process has it open or locked; could not tell which)');
  const held = busyError({ address }, '/dev/ttyUSB0', [{ pid: 12, comm: 'minicom', via: 'open' }, { pid: 13, comm: null, via: 'open' }], 'EBUSY');
  t.equal(held.message, '/dev/ttyUSB0 is busy: held by pid 12 (minicom), pid 13 (name unknown)', 'no device name: the message starts with the port');
  const dir = tempDir('pinclaw-serial-perm-');
  const file = join(dir, 'ttyFAKE');
  write(file, '');
  const perm = permissionError({ name: 'nano', address: { kind: 'device', path: file, text: file } }, file, file, 'EACCES');
  t.match(perm.message, /^device nano: permission denied on .*ttyFAKE \(-rw-r--r-- group root\): join the group serial ports usually belong to \(dialout\): sudo usermod -aG dialout \$USER/, 'a root-owned file: dialout, not root');
  const sock: SocketAddress = { kind: 'socket', host: 'ser2net.lan', port: 3001, text: 'socket://ser2net.lan:3001' };
  t.equal(socketOpenError({ name: 'uno', address: sock }, Object.assign(new Error('x'), { code: 'ENOTFOUND' })).message, 'device uno: cannot resolve host ser2net.lan (socket://ser2net.lan:3001, ENOTFOUND)');
  t.equal(socketOpenError({ name: 'uno', address: sock }, new Error('t'), 5000).message, 'device uno: no answer from ser2net.lan:3001 within 5000 ms (socket://ser2net.lan:3001)');
  t.equal(isRetryable(busy), true);
  t.equal(isRetryable(new SerialError('address', 'x', { port: 'x' })), false);
});
