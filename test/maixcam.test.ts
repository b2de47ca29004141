// The MaixCam channel over real TCP: the hello and its token, detections, bad and oversize lines,
// commands and their results, timeouts and disconnects; the detection triggers' filtering; and the
// whole way through a real gateway process: a camera's detection becomes a queued turn, the model
// (a local server speaking Anthropic's wire format) calls camera_command, the camera answers, and
// the reply goes to the hardware channel.
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_LINE, startMaixcamServer, type Detection } from '../src/hardware/maixcam/server.js';
import { counterSeries } from '../src/counters.js';
import { detectionTriggers } from '../src/hardware/maixcam/triggers.js';
import { cameraCommandTool } from '../src/hardware/maixcam/tool.js';
import type { NewInbound } from '../src/store/queue.js';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A camera: a TCP client that reads JSON lines. */
async function camera(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((r, j) => socket.once('connect', r).once('error', j));
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      buf = buf.slice(nl + 1);
    }
    waiters.splice(0).forEach((w) => w());
  });
  socket.on('close', () => {
    closed = true;
    waiters.splice(0).forEach((w) => w());
  });
  socket.on('error', () => {});
  const next = async (n = lines.length + 1): Promise<Record<string, unknown> | undefined> => {
    while (lines.length < n && !closed) await new Promise<void>((r) => waiters.push(r));
    return lines[n - 1];
  };
  return { socket, lines, next, send: (o: unknown) => socket.write(`${typeof o === 'string' ? o : JSON.stringify(o)}\n`), isClosed: () => closed, closedP: new Promise<void>((r) => socket.once('close', () => r())) };
}

t.test('hello: the token decides; detections arrive checked; bad lines answered, too many disconnect', async (t) => {
  const seen: Detection[] = [];
  const s = await startMaixcamServer({ host: '127.0.0.1', port: 0, token: 'tok', onDetection: (d) => seen.push(d), log: quiet, helloTimeoutMs: 300 });
  t.teardown(() => s.close());

  const intruder = await camera(s.port);
  intruder.send({ type: 'hello', camera: 'x', token: 'wrong' });
  t.same(await intruder.next(), { type: 'error', error: 'bad token' });
  await intruder.closedP;
  t.same(s.cameras(), []);

  const silent = await camera(s.port);
  t.match(await silent.next(), { type: 'error', error: 'no hello within 300 ms' });
  await silent.closedP;

  const cam = await camera(s.port);
  cam.send({ type: 'hello', camera: 'door', token: 'tok' });
  t.same(await cam.next(), { type: 'welcome' });
  t.same(s.cameras(), ['door']);
  cam.send({ type: 'detection', label: 'person', confidence: 0.9, box: [1, 2, 30, 40], ts: 1700000000000 });
  cam.send({ type: 'detection', label: 'person', confidence: 1.5 });
  t.same(await cam.next(), { type: 'error', error: 'confidence must be a number from 0 to 1' });
  cam.send('{not json');
  t.same(await cam.next(), { type: 'error', error: 'not JSON' });
  t.match(seen, [{ camera: 'door', label: 'person', confidence: 0.9, box: [1, 2, 30, 40], ts: 1700000000000 }]);
  for (let i = 0; i < 12; i++) cam.send({ type: 'what' });
  await cam.closedP;
  t.ok(cam.isClosed(), 'more than 10 bad lines: disconnected');

  const big = await camera(s.port);
  big.send({ type: 'hello', camera: 'big', token: 'tok' });
  await big.next();
  big.socket.write('x'.repeat(MAX_LINE + 10));
  await big.closedP;
  t.ok(big.isClosed(), 'a line over 64 KiB: disconnected');
});

t.test('a connection cap: sockets without a hello make room for newcomers, cameras fill it; refusals logged and counted', async (t) => {
  const warned: string[] = [];
  const s = await startMaixcamServer({ host: '127.0.0.1', port: 0, token: 'tok', onDetection: () => {}, log: { info: () => {}, warn: (m: string) => void warned.push(m) }, helloTimeoutMs: 30_000, maxConnections: 4 });
  t.teardown(() => s.close());
  const hello = async (name: string) => {
    const c = await camera(s.port);
    c.send({ type: 'hello', camera: name, token: 'tok' });
    t.match(await c.next(), { type: 'welcome' }, `${name} is let in`);
    return c;
  };
  const silent = async () => {
    const c = await camera(s.port);
    // The server has it once it counts it.
    const before = s.connections?.().open;
    for (let i = 0; i < 100 && s.connections?.().open === before && !c.isClosed(); i++) await new Promise((r) => setTimeout(r, 10));
    return c;
  };
  /** Whether the server closed it (bounded: without a cap it never would). */
  const closed = (c: { closedP: Promise<void> }) => Promise.race([c.closedP.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
  const a = await hello('a');
  await hello('b');
  const idle1 = await silent();
  const idle2 = await silent();
  t.equal(s.connections?.().open, 4);
  // Full: the oldest socket without a hello goes, the newcomer is let in and can say hello.
  await hello('c');
  t.ok(await closed(idle1), 'the oldest socket without a hello was closed to make room');
  t.notOk(idle2.isClosed(), 'only the oldest idle one went');
  await hello('d');
  t.ok(await closed(idle2));
  t.same(s.cameras().sort(), ['a', 'b', 'c', 'd']);
  // Full of cameras: a newcomer is told and closed at once.
  const late = await camera(s.port);
  t.ok(await closed(late), 'a newcomer to a listener full of cameras is closed');
  t.match(late.lines[0], { type: 'error', error: /^too many connections \(4 connections are open, all cameras that said hello\)/ });
  t.match(s.connections(), { open: 4, max: 4, refused: 1, evicted: 2 });
  t.same(counterSeries('maixcam_refused'), [{ labels: { reason: 'evicted' }, value: 2 }, { labels: { reason: 'full' }, value: 1 }]);
  t.equal(warned.filter((w) => w.startsWith('maixcam: closed')).length, 1, 'the log hears of it once a minute, not per socket');
  t.match(warned.find((w) => w.startsWith('maixcam: closed')), /^maixcam: closed 1 new connection, the last because 4 connections were open/);
  // A camera leaves: there is room again.
  a.socket.destroy();
  for (let i = 0; i < 100 && s.connections().open === 4; i++) await new Promise((r) => setTimeout(r, 10));
  await hello('e');
});

t.test('commands: a result, a timeout, a camera that leaves, no or several cameras', async (t) => {
  const s = await startMaixcamServer({ host: '127.0.0.1', port: 0, token: 'tok', onDetection: () => {}, log: quiet });
  t.teardown(() => s.close());
  const tool = cameraCommandTool(() => s);
  const ctx = { sessionKey: 's', channel: 'cli', chatId: 'local' };
  t.match(await tool.execute({ command: 'snapshot' }, ctx), { isError: true, content: 'camera_command snapshot: no camera is connected' });
  const cam = await camera(s.port);
  cam.send({ type: 'hello', camera: 'door', token: 'tok' });
  await cam.next();
  const p = tool.execute({ command: 'snapshot', args: { quality: 80 } }, ctx);
  const cmd = await cam.next();
  t.match(cmd, { type: 'command', command: 'snapshot', args: { quality: 80 } });
  cam.send({ type: 'result', id: cmd!.id, ok: true, data: { file: 'snap-1.jpg' } });
  t.same(await p, { content: 'snapshot: {"file":"snap-1.jpg"}' });
  t.match(await tool.execute({ command: 'zoom', timeoutMs: 100 }, ctx), { isError: true, content: "camera_command zoom: camera 'door' did not answer within 100 ms" });
  const cam2 = await camera(s.port);
  cam2.send({ type: 'hello', camera: 'yard', token: 'tok' });
  await cam2.next();
  t.match(await tool.execute({ command: 'snapshot' }, ctx), { isError: true, content: 'camera_command snapshot: name the camera: door, yard' });
  const pending = tool.execute({ camera: 'yard', command: 'snapshot' }, ctx);
  await cam2.next();
  cam2.socket.destroy();
  t.match(await pending, { isError: true, content: 'camera_command snapshot: the camera disconnected' });
  t.match(await tool.execute({ camera: 'yard', command: 'snapshot' }, ctx), { isError: true, content: "camera_command snapshot: camera 'yard' is not connected (connected: door)" });
});

t.test('detection triggers: label, camera and confidence filter; one sighting per burst; rate limit', async (t) => {
  const sent: NewInbound[] = [];
  const on = detectionTriggers({
    triggers: [
      { label: 'person', minConfidence: 0.7, debounceMs: 1000, session: 'home', message: 'someone is at the door', rateLimit: { max: 2, perSeconds: 60 } },
      { camera: 'yard', minConfidence: 0.5, debounceMs: 0, session: 'telegram:42', message: 'movement in the yard', rateLimit: { max: 100, perSeconds: 60 } },
    ],
    submit: (m) => sent.push(m),
    knownChannels: ['telegram'],
    log: quiet,
  });
  const det = (over: Partial<Detection>): Detection => ({ camera: 'door', label: 'person', confidence: 0.9, receivedAt: 0, ...over });
  for (let ms = 0; ms < 3000; ms += 100) on(det({ receivedAt: 1_000_000 + ms })); // one person standing there, 30 frames
  on(det({ label: 'cat', receivedAt: 1_010_000 }));
  on(det({ confidence: 0.6, receivedAt: 1_020_000 }));
  on(det({ receivedAt: 1_030_000 }));
  on(det({ receivedAt: 1_040_000 }));
  on(det({ camera: 'yard', label: 'dog', receivedAt: 1_050_000 }));
  t.same(sent.map((m) => [m.sessionKey, m.channel, m.chatId, m.sender]), [
    ['home', 'hardware', 'home', 'hardware'],
    ['home', 'hardware', 'home', 'hardware'],
    ['telegram:42', 'telegram', '42', 'hardware'],
  ], 'one message for 30 frames, none for a cat or a low confidence, the third sighting over the rate limit, the yard trigger routed to its chat');
  t.match(sent[0]!.text, /^someone is at the door\n\(camera door: person, confidence 0\.90, at /);
  t.same(sent[0]!.meta, { trigger: { kind: 'camera', camera: 'door', label: 'person', confidence: 0.9 } });
});

t.test('through the gateway: a detection becomes a turn whose camera_command reaches the camera', async (t) => {
  const provider = await startAnthropicServer(textReply('unused'));
  t.teardown(() => provider.close());
  provider.enqueue(toolUseReply([{ name: 'camera_command', input: { command: 'snapshot' } }]), textReply('Took a snapshot of the visitor.'));
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    hardware: { maixcam: { port: 0, host: '127.0.0.1', token: 'tok', triggers: [{ label: 'person', session: 'door', message: 'someone is at the door' }] } },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: provider.url }) });
  t.teardown(() => gw.child.kill());
  const m = await gw.waitFor(/maixcam: listening on 127\.0\.0\.1:(\d+)/);
  const cam = await camera(Number(m[1]));
  cam.send({ type: 'hello', camera: 'door', token: 'tok' });
  t.same(await cam.next(), { type: 'welcome' });
  cam.send({ type: 'detection', label: 'person', confidence: 0.95 });
  const cmd = await cam.next();
  t.match(cmd, { type: 'command', command: 'snapshot' }, 'the model asked the camera through camera_command');
  cam.send({ type: 'result', id: cmd!.id, ok: true, data: { file: 'visitor.jpg' } });
  await gw.waitFor(/Took a snapshot of the visitor\./);
  const first = provider.requests[0]!.body as { messages: { content: unknown }[] };
  t.match(JSON.stringify(first.messages.at(-1)), /someone is at the door/, 'the turn got the trigger message');
  const results = JSON.stringify((provider.requests[1]!.body as { messages: unknown[] }).messages.at(-1));
  t.match(results, /visitor\.jpg/, "the camera's result went back to the model");
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
});
