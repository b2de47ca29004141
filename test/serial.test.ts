// The serial layer against real parts: socat pty pairs stand for USB serial ports (the real
// serialport package and addon on both ends), a TCP server on 127.0.0.1 stands for ser2net or QEMU
// (socket://), a child process holds a port the way a second pinclaw or minicom would, and a child
// running as nobody meets a device file it may not open. Pulling the cable is killing socat; plugging
// it back in is starting socat again with the same link names.
import t from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, tempDir } from './support/proc.js';
import { describePorts, listSerialPorts } from '../src/hardware/serial/list.js';
import { openSerialLink } from '../src/hardware/serial/link.js';
import { openSerialDevice, type SerialDevice } from '../src/hardware/serial/device.js';
import { SerialError } from '../src/hardware/serial/errors.js';
import { portOwner } from '../src/hardware/serial/owners.js';
import type { SerialLink, SerialStateChange } from '../src/hardware/serial/types.js';

const haveSocat = spawnSync('socat', ['-V']).status === 0;
const WAIT_MS = 20_000;

// ---- helpers -------------------------------------------------------------------------------

interface Pty {
  a: string;
  b: string;
  /** SIGTERM, so socat removes its links as a USB device's node disappears. */
  stop(): Promise<void>;
}

/** A pty pair whose ends are the links dir/a and dir/b, ready once socat says so. */
function startPty(dir: string): Promise<Pty> {
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`socat did not start: ${err}`)), WAIT_MS);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('starting data transfer loop')) {
        clearTimeout(timer);
        resolve({
          a,
          b,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`socat exited (${code}): ${err}`));
    });
  });
}

/** Waits until `check` holds, polling; fails with `what` after WAIT_MS. */
async function until(what: string, check: () => boolean): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > WAIT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Bytes received, as text, and a way to wait for some. */
function collector() {
  let text = '';
  return {
    onData: (b: Buffer) => {
      text += b.toString('latin1');
    },
    get text() {
      return text;
    },
    clear() {
      text = '';
    },
    has: (s: string) => until(`"${s}" to arrive (got ${JSON.stringify(text)})`, () => text.includes(s)),
  };
}

/** State events, and a wait for the first one of a state after a mark. */
function states() {
  const seen: SerialStateChange[] = [];
  return {
    seen,
    onState: (c: SerialStateChange) => void seen.push(c),
    mark: () => seen.length,
    async next(state: SerialStateChange['state'], from: number): Promise<SerialStateChange> {
      await until(`state ${state}`, () => seen.slice(from).some((c) => c.state === state));
      return seen.slice(from).find((c) => c.state === state)!;
    },
  };
}

async function rejection(p: Promise<unknown>): Promise<SerialError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SerialError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

const text = (s: string) => Buffer.from(s, 'latin1');

// ---- device paths ------------------------------------------------------------------------

t.test('pty pair: bytes both ways through the serialport package, then close', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const pty = await startPty(tempDir('pinclaw-serial-'));
  t.teardown(() => pty.stop());
  const a = await openSerialLink(pty.a, { baud: 115200 });
  const b = await openSerialLink(pty.b, { baud: 115200 });
  t.equal(a.opened, realpathSync(pty.a), 'the link names the device file behind the symlink');
  const atA = collector();
  const atB = collector();
  a.onData(atA.onData);
  b.onData(atB.onData);
  await a.write(text('ping\x00\xff'));
  await atB.has('ping\x00\xff');
  await b.write(text('pong'));
  await atA.has('pong');
  const big = Buffer.alloc(20_000, 0x55);
  await a.write(big);
  await until('20000 bytes', () => atB.text.length >= 6 + 20_000);
  t.pass('binary bytes and a 20 kB write arrive whole');
  const endedA = new Promise<Error | null>((r) => a.onClose(r));
  await a.close();
  t.equal(await endedA, null, 'our close() ends the link with no error');
  t.equal(a.isOpen, false);
  t.equal((await rejection(a.write(text('x')))).kind, 'closed', 'a write after close is refused at once');
  await b.close();
});

t.test('managed device: the cable pulled and plugged back in, over a pty', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  let pty = await startPty(dir);
  t.teardown(() => pty.stop());
  const got = collector();
  const st = states();
  const dev = await openSerialDevice({ name: 'uno', port: pty.a, baud: 115200, onData: got.onData, onState: st.onState });
  t.teardown(() => dev.close());
  t.same(
    st.seen.map((c) => c.state),
    ['connecting', 'open'],
  );
  t.equal(dev.state, 'open');
  let peer: SerialLink = await openSerialLink(pty.b, { baud: 115200 });
  const atPeer = collector();
  peer.onData(atPeer.onData);
  await dev.write(text('hello'));
  await atPeer.has('hello');
  await peer.write(text('world'));
  await got.has('world');

  const beforePull = st.mark();
  await pty.stop();
  const lost = await st.next('lost', beforePull);
  t.equal(lost.device, 'uno');
  t.match(lost.error?.message, /^device uno: lost /, `lost: ${lost.error?.message}`);
  t.ok(typeof lost.retryInMs === 'number' && lost.retryInMs > 0, 'says when the next try is');
  const w = await rejection(dev.write(text('into the void')));
  t.equal(w.kind, 'not-connected');
  t.match(w.message, /^device uno is not connected \(reconnecting, next try in \d+ ms\)$/, w.message);
  t.equal(dev.status().state, 'lost');

  const beforePlug = st.mark();
  pty = await startPty(dir);
  const back = await st.next('open', beforePlug);
  t.equal(back.failures, 0, 'the failure count starts again once open');
  peer = await openSerialLink(pty.b, { baud: 115200 });
  const atPeer2 = collector();
  peer.onData(atPeer2.onData);
  await dev.write(text('again'));
  await atPeer2.has('again');
  await peer.write(text('back'));
  await got.has('back');
  t.pass('data flows again after the reconnect');
  const s = dev.status();
  t.equal(s.state, 'open');
  t.equal(s.opened, realpathSync(pty.a));
  t.ok(s.bytesIn >= 9 && s.bytesOut >= 10, 'bytes are counted');
  await peer.close();

  const beforeClose = st.mark();
  await dev.close();
  t.same(
    st.seen.slice(beforeClose).map((c) => c.state),
    ['closed'],
  );
  t.equal((await rejection(dev.write(text('x')))).message, 'device uno is closed');
  t.equal(portOwner({ kind: 'device', path: pty.a, text: pty.a }), null, 'the port is free again');
});

t.test('reconnect off: a lost device is closed for good; close() during reconnecting stops it', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  let pty = await startPty(dir);
  const st = states();
  const dev = await openSerialDevice({ name: 'once', port: pty.a, baud: 9600, reconnect: false, onState: st.onState });
  const mark = st.mark();
  await pty.stop();
  const closed = await st.next('closed', mark);
  t.match(closed.error?.message, /^device once: lost /);
  t.equal((await rejection(dev.write(text('x')))).kind, 'closed');

  pty = await startPty(dir);
  t.teardown(() => pty.stop());
  const st2 = states();
  const dev2 = await openSerialDevice({ name: 'retrier', port: pty.a, baud: 9600, onState: st2.onState, reconnect: { initialMs: 5000 } });
  const m2 = st2.mark();
  await pty.stop();
  await st2.next('lost', m2);
  await dev2.close();
  const after = st2.mark();
  pty = await startPty(dir);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(st2.seen.length, after, 'no attempt after close(), though the device came back');
  t.equal(dev2.state, 'closed');
});

t.test('waitForDevice: a board plugged in after the start is opened when it appears', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  const st = states();
  const dev = await openSerialDevice({ name: 'late', port: join(dir, 'a'), baud: 115200, waitForDevice: true, onState: st.onState });
  t.teardown(() => dev.close());
  t.equal(dev.state, 'lost');
  t.equal(st.seen[1]?.error && (st.seen[1].error as SerialError).kind, 'not-found', 'the first failure is reported');
  t.match((await rejection(dev.write(text('x')))).message, /^device late is not connected \(reconnecting, next try in \d+ ms\)$/);
  const pty = await startPty(dir);
  t.teardown(() => pty.stop());
  await st.next('open', 0);
  t.equal(dev.state, 'open');
});

t.test('a write the port cannot take is rejected after writeTimeoutMs, and close() still works', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const pty = await startPty(tempDir('pinclaw-serial-'));
  t.teardown(() => pty.stop());
  // Nobody reads the other end: socat stops reading once it cannot write, and the pty fills up.
  const dev = await openSerialDevice({ name: 'stuck', port: pty.a, baud: 115200, writeTimeoutMs: 300 });
  const err = await rejection(dev.write(Buffer.alloc(4 * 1024 * 1024, 0x41)));
  t.equal(err.kind, 'write');
  t.equal(err.message, `device stuck: write of ${4 * 1024 * 1024} bytes to ${pty.a} did not finish within 300 ms`);
  await dev.close();
  t.equal(dev.state, 'closed');
});

t.test('one owner per port: a second open names the first, also through another name for it', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  const pty = await startPty(dir);
  t.teardown(() => pty.stop());
  const first = await openSerialDevice({ name: 'first', port: pty.a, baud: 115200 });
  const again = await rejection(openSerialDevice({ name: 'second', port: pty.a, baud: 115200 }));
  t.equal(again.kind, 'owned');
  t.equal(again.message, `device second: ${pty.a} is already in use by device first in this process; a port has one owner`);
  const alias = join(dir, 'alias');
  symlinkSync(realpathSync(pty.a), alias);
  const viaAlias = await rejection(openSerialDevice({ name: 'third', port: alias, baud: 115200 }));
  t.equal(viaAlias.message, `device third: ${alias} is already in use by device first in this process (opened as ${pty.a}); a port has one owner`);
  t.equal(portOwner({ kind: 'device', path: alias, text: alias }), 'first');
  await first.close();
  const second = await openSerialDevice({ name: 'second', port: alias, baud: 115200 });
  t.equal(second.state, 'open', 'free once the owner closed');
  await second.close();
});

t.test('a port held by another process: busy, naming its pid and command', { skip: !haveSocat && 'socat is not installed' }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  const pty = await startPty(dir);
  t.teardown(() => pty.stop());
  // A second program with the port open and locked, as another pinclaw (serialport, lock: true) has it.
  const script = join(dir, 'holder.cjs');
  writeFileSync(
    script,
    `const { createRequire } = require('node:module');
const req = createRequire(${JSON.stringify(join(root, 'package.json'))});
const { SerialPortStream } = req('@serialport/stream');
const { LinuxBinding } = req('@serialport/bindings-cpp');
const port = new SerialPortStream({ binding: LinuxBinding, path: process.argv[2], baudRate: 9600, lock: true });
port.on('open', () => console.log('holding'));
port.on('error', (e) => { console.error(e.message); process.exit(1); });
setInterval(() => {}, 1000);
`,
  );
  const holder: ChildProcess = spawn(process.execPath, [script, pty.a], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void holder.kill('SIGKILL'));
  await new Promise<void>((res, rej) => {
    holder.stdout!.on('data', (d: Buffer) => d.toString().includes('holding') && res());
    holder.once('exit', (c) => rej(new Error(`holder exited ${c}`)));
  });
  const err = await rejection(openSerialDevice({ name: 'uno', port: pty.a, baud: 115200 }));
  t.equal(err.kind, 'busy');
  t.equal(err.message, `device uno: ${pty.a} (${realpathSync(pty.a)}) is busy: held by pid ${holder.pid} (node)`);
  t.same(err.holders, [{ pid: holder.pid, comm: 'node', via: 'lock' }]);
  t.equal(portOwner({ kind: 'device', path: pty.a, text: pty.a }), null, 'a failed first open leaves no owner behind');
  holder.kill('SIGKILL');
  await until('the holder to let go', () => holder.exitCode !== null || holder.signalCode !== null);
  // A link this process opened outside the device registry locks the port just the same.
  const own = await openSerialLink(pty.a, { baud: 115200 });
  const mine = await rejection(openSerialDevice({ name: 'uno', port: pty.a, baud: 115200 }));
  t.match(mine.message, `is busy: held by pid ${process.pid} (`);
  t.match(mine.message, /, this process\)$/);
  await own.close();
});

t.test('a missing port lists the ports that exist; files that are no tty are named as such', async (t) => {
  const missing = '/dev/ttyUSB-pinclaw-missing';
  const err = await rejection(openSerialDevice({ name: 'nano', port: missing, baud: 57600 }));
  t.equal(err.kind, 'not-found');
  t.equal(err.message, `device nano: ${missing} does not exist; serial ports here: ${describePorts(listSerialPorts())}`);
  const dir = tempDir('pinclaw-serial-');
  const file = join(dir, 'notatty');
  writeFileSync(file, '');
  t.equal((await rejection(openSerialLink(file, { baud: 9600 }))).message, `${file} is not a serial port (a regular file)`);
  t.equal((await rejection(openSerialLink('/dev/null', { baud: 9600, name: 'x' }))).message, 'device x: /dev/null is not a serial port (ENOTTY)', 'a character device that is no tty: the addon says ENOTTY');
  t.equal((await rejection(openSerialLink('/dev/null', {}))).kind, 'options', 'a device path needs a baud rate');
  t.match((await rejection(openSerialDevice({ name: 'bad', port: 'COM3', baud: 9600 }))).message, /^device bad: serial port "COM3": COM ports are Windows names/);
  t.equal((await rejection(openSerialDevice({ name: 'has space', port: '/dev/ttyS0', baud: 9600 }))).kind, 'options');
});

const dialoutGid = spawnSync('getent', ['group', 'dialout'], { encoding: 'utf8' }).stdout?.split(':')[2];
t.test('permission denied: the group that owns the device and how to join it', { skip: (!haveSocat && 'socat is not installed') || (!dialoutGid && 'no dialout group here') || (process.getuid?.() !== 0 && 'needs root to run a child as nobody') || (spawnSync('setpriv', ['--version']).status !== 0 && 'setpriv is not installed') }, async (t) => {
  const dir = tempDir('pinclaw-serial-');
  chmodSync(dir, 0o755);
  const pty = await startPty(dir);
  t.teardown(() => pty.stop());
  const gid = Number(dialoutGid);
  chownSync(realpathSync(pty.a), 0, gid);
  chmodSync(realpathSync(pty.a), 0o660);
  const script = join(dir, 'open.mjs');
  writeFileSync(
    script,
    `const { openSerialLink } = await import(${JSON.stringify(pathToFileURL(join(root, 'src', 'hardware', 'serial', 'link.js')).href)});
try { await openSerialLink(process.argv[2], { baud: 115200, name: 'uno' }); console.log('OPENED'); }
catch (err) { console.log(JSON.stringify({ kind: err.kind, message: err.message })); }
`,
  );
  chmodSync(script, 0o644);
  const loader = process.execArgv.filter((a) => a.startsWith('--import=') && a.includes('typescript'));
  const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...loader, script, pty.a], {
    encoding: 'utf8',
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    timeout: 60_000,
  });
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { kind?: string; message?: string };
  t.equal(out.kind, 'permission', r.stderr);
  t.equal(out.message, `device uno: permission denied on ${pty.a} (${realpathSync(pty.a)}, crw-rw---- group dialout): join the group that owns it: sudo usermod -aG dialout $USER, then log in again`);
});

// ---- socket:// ------------------------------------------------------------------------------

function echoServer(port = 0): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.on('data', (d) => s.write(Buffer.concat([text('echo:'), d])));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, port: typeof a === 'object' && a ? a.port : port, sockets });
    });
  });
}

async function stopServer(s: { server: Server; sockets: Set<Socket> }): Promise<void> {
  for (const sock of s.sockets) sock.destroy();
  await new Promise<void>((r) => s.server.close(() => r()));
}

t.test('socket://: data both ways; the server goes away and comes back on the same port', async (t) => {
  let srv = await echoServer();
  const port = srv.port;
  t.teardown(() => stopServer(srv));
  const got = collector();
  const st = states();
  const dev: SerialDevice = await openSerialDevice({ name: 'qemu', port: `socket://127.0.0.1:${port}`, onData: got.onData, onState: st.onState });
  t.teardown(() => dev.close());
  t.equal(dev.status().opened, `127.0.0.1:${port}`);
  await dev.write(text('one'));
  await got.has('echo:one');

  const mark = st.mark();
  await stopServer(srv);
  const lost = await st.next('lost', mark);
  t.match(lost.error?.message, new RegExp(`^device qemu: lost socket://127\\.0\\.0\\.1:${port}: `), String(lost.error?.message));
  const w = await rejection(dev.write(text('x')));
  t.match(w.message, /^device qemu is not connected \(reconnecting, next try in \d+ ms\)$/);
  // The next attempt is refused; its 'lost' says so.
  await until('a refused attempt', () => st.seen.slice(mark).some((c) => (c.error as SerialError | undefined)?.kind === 'refused'));
  const refused = st.seen.slice(mark).find((c) => (c.error as SerialError | undefined)?.kind === 'refused')!;
  t.match(refused.error?.message, `device qemu: connection refused by 127.0.0.1:${port} (socket://127.0.0.1:${port})`);

  const beforeBack = st.mark();
  srv = await echoServer(port);
  await st.next('open', beforeBack);
  got.clear();
  await dev.write(text('two'));
  await got.has('echo:two');
  t.pass('reconnected and echoing');
});

t.test('socket://: refused at the first open names host and port; one owner per host:port', async (t) => {
  const srv = await echoServer();
  const free = srv.port;
  await stopServer(srv);
  const err = await rejection(openSerialDevice({ name: 'esp', port: `socket://127.0.0.1:${free}` }));
  t.equal(err.kind, 'refused');
  t.equal(err.message, `device esp: connection refused by 127.0.0.1:${free} (socket://127.0.0.1:${free}): nothing listens there; is ser2net or the emulator running?`);

  const live = await echoServer();
  t.teardown(() => stopServer(live));
  const a = await openSerialDevice({ name: 'a', port: `socket://LOCALHOST:${live.port}`, connectTimeoutMs: 10_000 });
  t.teardown(() => a.close());
  const b = await rejection(openSerialDevice({ name: 'b', port: `socket://localhost:${live.port}` }));
  t.equal(b.message, `device b: socket://localhost:${live.port} is already in use by device a in this process (opened as socket://LOCALHOST:${live.port}); a port has one owner`);
});

t.test('link listeners: a close is reported to a listener added after it', async (t) => {
  const srv = await echoServer();
  const link = await openSerialLink(`socket://127.0.0.1:${srv.port}`);
  link.onData(() => {});
  await stopServer(srv);
  await until('the link to end', () => !link.isOpen);
  const reason = await new Promise<Error | null>((r) => link.onClose(r));
  t.match(reason?.message, /^lost socket:\/\/127\.0\.0\.1:\d+: /);
});
