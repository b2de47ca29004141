// camera_snapshot and pictures for the model, on the host: ffmpeg's test source behind the camera
// interface (test/support/camera-testsrc.ts), the governed registry with a real SQLite audit, the
// real providers against the Anthropic and OpenAI stand-ins, and ffmpeg decoding every JPEG that
// comes out. The same code against a real V4L2 driver (vivid) is test/camera-vm.test.ts's.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentLoop } from '../src/agent/loop.js';
import { anthropicProvider } from '../src/agent/providers/anthropic.js';
import { openaiProvider } from '../src/agent/providers/openai.js';
import type { Message } from '../src/agent/types.js';
import { defaults } from '../src/config/index.js';
import { cameraConfigIssues } from '../src/hardware/camera/config-check.js';
import { checkCameras } from '../src/hardware/camera/doctor.js';
import { rpicamSource, v4l2Source, type CameraSource } from '../src/hardware/camera/source.js';
import { cameraTools } from '../src/hardware/camera/tools.js';
import { attachedImages } from '../src/images/attached.js';
import { MAX_BYTES, MAX_EDGE } from '../src/images/model-image.js';
import { jpegSize } from '../src/images/jpeg.js';
import { queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import { loadSession, saveSession } from '../src/store/sessions.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import type { ToolContext } from '../src/tools/types.js';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { decodeJpeg, testsrcSource } from './support/camera-testsrc.js';
import { oaText, oaTools, startOpenAIServer } from './support/openai-server.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

const images = () => import('../src/images/index.js');
const cli: ToolContext = { sessionKey: 'cli:owner', channel: 'cli', chatId: 'owner', caller: 'owner' };

function setup(source: CameraSource = testsrcSource(), name = 'shelf') {
  const dir = tempDir('pinclaw-camera-');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const tools = cameraTools({ cameras: [{ name, device: '/dev/video0', width: 640, height: 480, source }], workspace, images });
  const policy = createPolicy({ ...defaults().tools, controlChats: ['telegram:42'] });
  const registry = createRegistry(tools, { policy, audit: dbAudit(db) });
  return { dir, workspace, db, registry };
}

const snapshotsOf = (workspace: string): string[] =>
  existsSync(join(workspace, 'snapshots')) ? readdirSync(join(workspace, 'snapshots'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jpg')) : [];

t.test('a snapshot: saved in the workspace, a valid JPEG of the size asked, the image in the result, one audit row naming the file', async (t) => {
  const { workspace, db, registry } = setup();
  t.teardown(() => db.close());
  const r = await registry.call({ name: 'camera_snapshot', input: { width: 320, height: 240 } }, cli);
  t.notOk(r.result.isError, r.result.content);
  const file = /saved in the workspace as (\S+);/.exec(r.result.content)?.[1];
  t.ok(file, r.result.content);
  const saved = readFileSync(join(workspace, file!));
  t.same(jpegSize(saved), { width: 320, height: 240 });
  t.same(decodeJpeg(saved, 320, 240), { ok: true }, 'the saved file decodes');
  const image = r.result.images?.[0];
  t.equal(image?.mediaType, 'image/jpeg');
  t.same(decodeJpeg(Buffer.from(image!.data, 'base64'), 320, 240), { ok: true }, 'the image for the model decodes, same size');
  t.match(image!.note, file!, 'its note names the file');
  const rows = queryAudit(db, { tool: 'camera_snapshot' });
  t.equal(rows.length, 1);
  t.equal(rows[0]!.outcome, 'ok');
  t.match(rows[0]!.physical, file!, 'the audit row says which picture was taken');
  t.notMatch(rows[0]!.physical ?? '', image!.data.slice(0, 40), 'and holds no picture');
});

t.test('a privacy action: unasked only in the owner\'s chats; elsewhere the owner confirms, and a no takes no picture', async (t) => {
  const { workspace, db, registry } = setup();
  t.teardown(() => db.close());
  const asked: string[] = [];
  const confirm = async (q: { summary: string }) => (asked.push(q.summary), false);
  const control = await registry.call({ name: 'camera_snapshot', input: { width: 64, height: 48 } }, { sessionKey: 'telegram:42', channel: 'telegram', chatId: '42', caller: '1', confirm });
  t.notOk(control.result.isError, control.result.content);
  t.equal(asked.length, 0, 'a control chat is not asked');
  const other = await registry.call({ name: 'camera_snapshot', input: { width: 64, height: 48 } }, { sessionKey: 'telegram:7', channel: 'telegram', chatId: '7', caller: '7', confirm });
  t.equal(asked.length, 1, 'another chat is asked');
  t.ok(other.result.isError);
  t.match(other.result.content, /the owner said no \(privacy action outside the owner's chats \(tools\.controlChats\)\)/);
  t.notOk(other.result.images, 'no image');
  t.equal(snapshotsOf(workspace).length, 1, 'only the control chat\'s picture exists');
  const noAsk = await registry.call({ name: 'camera_snapshot', input: {} }, { sessionKey: 'mqtt:x', channel: 'mqtt', chatId: 'x', caller: 'x' });
  t.match(noAsk.result.content, /needs the owner's confirmation \(privacy action/, 'a channel that cannot ask is refused');
  t.same(queryAudit(db, { tool: 'camera_snapshot' }).map((r) => r.outcome).sort(), ['denied', 'denied', 'ok']);
});

t.test('a missing camera, a busy one, a missing program: the owner reads the camera and the cause; no file is left', async (t) => {
  const missing = setup(v4l2Source('/dev/video97'), 'door');
  t.teardown(() => missing.db.close());
  const r1 = await missing.registry.call({ name: 'camera_snapshot', input: { camera: 'door' } }, cli);
  t.ok(r1.result.isError);
  t.match(r1.result.content, /^camera 'door': \/dev\/video97 is not there: the camera is not connected or not enabled \(ffmpeg: .*No such file or directory/);
  t.same(snapshotsOf(missing.workspace), []);

  // The kernel's EBUSY as ffmpeg reports it, from a command standing in for ffmpeg (no second
  // process can hold a host device here; test/camera-vm.test.ts makes vivid really busy).
  const busySource: CameraSource = {
    ...v4l2Source('/dev/video0'),
    commands: () => [{ command: 'sh', args: ['-c', 'echo "[video4linux2,v4l2 @ 0x5581] ioctl(VIDIOC_STREAMON): Device or resource busy" >&2; echo "/dev/video0: Device or resource busy" >&2; exit 1'] }],
  };
  const busy = setup(busySource, 'door');
  t.teardown(() => busy.db.close());
  const r2 = await busy.registry.call({ name: 'camera_snapshot', input: {} }, cli);
  t.match(r2.result.content, /^camera 'door': \/dev\/video0 is busy: another program is using the camera/);
  t.same(snapshotsOf(busy.workspace), []);

  const unknown = await busy.registry.call({ name: 'camera_snapshot', input: { camera: 'attic' } }, cli);
  t.match(unknown.result.content, /input\.camera: must be one of "door"/, 'an unknown name is refused by the schema, naming the cameras');

  if (spawnSync('rpicam-still', ['--version']).error && spawnSync('libcamera-still', ['--version']).error) {
    const pi = setup(rpicamSource(), 'pi');
    t.teardown(() => pi.db.close());
    const r3 = await pi.registry.call({ name: 'camera_snapshot', input: {} }, cli);
    t.equal(r3.result.content, "camera 'pi' (the Pi camera): rpicam-still and libcamera-still are not installed; install them with: sudo apt-get install rpicam-apps (Raspberry Pi OS)");
  }
});

t.test('hardware.cameras: every bad entry named by its key, all at once', async (t) => {
  const issues = cameraConfigIssues(
    [
      { name: 'shelf', device: 'rpicam', width: 1280, height: 720 },
      { name: 'shelf', device: '/dev/video0', width: 1280, height: 720 },
      { name: 'door', device: '/dev/sda', width: 1280, height: 720 },
      { name: 'bad name', device: '/dev/video1', width: 1280, height: 720 },
      { device: '/dev/video2', width: 1280, height: 720 },
    ],
    { id: 'orange-pi', interfaces: ['usb'] },
  );
  t.same(issues, [
    'hardware.cameras[0].device: "rpicam" needs a camera connector (CSI), and board orange-pi has none (its camera interfaces: usb)',
    'hardware.cameras[1].name: "shelf" is already the name of another camera',
    'hardware.cameras[2].device: expected "rpicam" (the Pi camera) or a V4L2 device such as /dev/video0, found "/dev/sda"',
    'hardware.cameras[3].name: "bad name" must be letters, digits, _ or - (at most 32; it names the snapshots\' folder)',
    'hardware.cameras[4].name: required (the name camera_snapshot uses, e.g. shelf)',
  ]);
  t.same(cameraConfigIssues([{ name: 'shelf', device: 'rpicam', width: 1280, height: 720 }], { id: 'rpi-4b', interfaces: ['csi', 'usb'] }), []);
});

t.test('doctor: each camera and whether it opens', async (t) => {
  const dir = tempDir('pinclaw-camera-');
  writeFileSync(join(dir, 'video5'), '');
  const checks = checkCameras([
    { name: 'gone', device: '/dev/video96', width: 1, height: 1 },
    { name: 'null', device: '/dev/null', width: 1, height: 1 },
  ]);
  t.same(checks.map((c) => [c.name, c.ok]), [['gone', false], ['null', true]]);
  t.match(checks[0]!.detail, /\/dev\/video96 does not exist: the camera is not connected/);
});

/** The picture of the last request's last message, as the provider received it: Anthropic's image block. */
function anthropicImage(body: { messages: { content: { type: string; source?: { media_type: string; data: string } }[] }[] }) {
  const content = body.messages.at(-1)!.content;
  return { types: content.map((b) => b.type), image: content.find((b) => b.type === 'image')?.source };
}

t.test('anthropic: the snapshot reaches the model in the same turn as an image block; the stored session keeps only its note', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  const { workspace, db, registry } = setup();
  t.teardown(() => db.close());
  srv.enqueue(toolUseReply([{ name: 'camera_snapshot', input: { width: 400, height: 300 } }]), textReply('A test pattern.'));
  const user: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'what is on the shelf?' }] }];
  const r = await runAgentLoop({
    provider: anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 10_000 }), model: 'c', system: 's', messages: user,
    tools: registry, toolContext: cli, maxIterations: 5, maxTokens: 512,
  });
  t.equal(r.reply, 'A test pattern.');
  const { types, image } = anthropicImage(srv.requests[1]!.body);
  t.same(types, ['tool_result', 'image'], 'the result first, then the picture, in one user message');
  t.equal(image?.media_type, 'image/jpeg');
  t.same(decodeJpeg(Buffer.from(image!.data, 'base64'), 400, 300), { ok: true }, 'a valid JPEG of the size asked');
  t.equal(snapshotsOf(workspace).length, 1);

  saveSession(db, { key: 'cli:owner', messages: r.conversation, meta: {} });
  const stored = JSON.stringify(loadSession(db, 'cli:owner').messages);
  t.notMatch(stored, image!.data.slice(0, 60), 'no picture in the stored session');
  t.match(stored, /\[image removed from the history: a snapshot of camera shelf \(400 × 300\), saved in the workspace as snapshots\/shelf\//);
});

t.test('openai-compatible: an image_url data URL; a model without images gets the note instead', async (t) => {
  const srv = await startOpenAIServer();
  t.teardown(() => srv.close());
  const { db, registry } = setup();
  t.teardown(() => db.close());
  const user: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'look' }] }];
  for (const takesImages of [true, false]) {
    srv.enqueue(oaTools([{ name: 'camera_snapshot', arguments: { width: 160, height: 120 } }]), oaText('seen'));
    const before = srv.requests.length;
    await runAgentLoop({
      provider: openaiProvider('m', { baseUrl: `${srv.url}/v1`, timeoutMs: 10_000, images: takesImages }), model: 'm', system: 's', messages: user,
      tools: registry, toolContext: cli, maxIterations: 5, maxTokens: 512,
    });
    const messages = srv.requests[before + 1]!.body.messages as { role: string; content: unknown }[];
    t.same(messages.slice(-2).map((m) => m.role), ['tool', 'user'], 'the tool message, then the picture as the user\'s');
    const last = messages.at(-1)!.content;
    if (takesImages) {
      const part = (last as { type: string; image_url?: { url: string } }[]).find((p) => p.type === 'image_url');
      const m = /^data:image\/jpeg;base64,(.+)$/.exec(part?.image_url?.url ?? '');
      t.ok(m, 'an image_url part with a JPEG data URL');
      t.same(decodeJpeg(Buffer.from(m![1]!, 'base64'), 160, 120), { ok: true });
    } else {
      t.type(last, 'string', 'text only');
      t.match(last as string, /^\[an image the model cannot see \(this model takes no images\): a snapshot of camera shelf \(160 × 120\), saved in the workspace as snapshots\/shelf\/.*\.jpg\]$/);
    }
  }
});

t.test('a 20 MB photo from the owner: scaled to the providers\' limits, the file untouched; an unreadable one named with its cause', async (t) => {
  const workspace = tempDir('pinclaw-photos-');
  mkdirSync(join(workspace, 'inbox'));
  const big = join('inbox', 'big.jpg');
  // Colour noise at the highest quality: about 20 MB, as large as the Bot API serves.
  const made = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', "nullsrc=s=5000x3750,geq=lum='random(1)*255':cb='random(2)*255':cr='random(3)*255'", '-frames:v', '1', '-q:v', '1', join(workspace, big)]);
  t.equal(made.status, 0, made.stderr?.toString());
  const original = readFileSync(join(workspace, big));
  t.ok(original.length > 15 * 1024 * 1024, `the photo has ${original.length} bytes`);
  const digest = createHash('sha256').update(original).digest('hex');
  writeFileSync(join(workspace, 'inbox', 'broken.jpg'), Buffer.from('this is not a picture'));

  const blocks = await attachedImages(workspace, [big, join('inbox', 'broken.jpg'), '../outside.jpg']);
  t.equal(blocks.length, 3);
  const image = blocks[0]!;
  t.equal(image.type, 'image');
  if (image.type !== 'image') return;
  const bytes = Buffer.from(image.data, 'base64');
  const dims = jpegSize(bytes)!;
  t.same(dims, { width: MAX_EDGE, height: Math.round((MAX_EDGE * 3750) / 5000) }, 'the long edge at the limit, the aspect kept');
  t.ok(bytes.length <= MAX_BYTES, `${bytes.length} bytes within ${MAX_BYTES}`);
  t.same(decodeJpeg(bytes, dims.width, dims.height), { ok: true });
  t.equal(createHash('sha256').update(readFileSync(join(workspace, big))).digest('hex'), digest, 'the saved photo is unchanged');
  t.match(blocks[1], { type: 'text', text: /^\[the picture the sender attached \(saved in the workspace as inbox\/broken\.jpg\) could not be shown to you: .*inbox\/broken\.jpg could not be read as an image: .+\. Tell the sender so\.\]$/ });
  t.match(blocks[2], { type: 'text', text: /outside the workspace/ });
  t.equal(readFileSync(join(workspace, 'inbox', 'broken.jpg'), 'utf8'), 'this is not a picture', 'the unreadable file is kept as it was');
});

t.test('the built pinclaw: hardware.cameras loads the camera chunk; a missing camera and a bad entry say which and why', async (t) => {
  const home = tempDir('pinclaw-camera-home-');
  const env = cleanEnv({ PINCLAW_HOME: home });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { cameras: [{ name: 'door', device: '/dev/video98' }] } }));
  const run = await runPinclawAsync(['tool', 'run', 'camera_snapshot', '{}'], { env });
  t.equal(run.code, 1);
  t.match(run.stderr, "camera 'door': /dev/video98 is not there: the camera is not connected or not enabled (ffmpeg: Cannot open video device /dev/video98: No such file or directory)");
  const doctor = await runPinclawAsync(['doctor', '--json'], { env });
  const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; state: string; detail: string }[] }).checks;
  t.match(checks.find((c) => c.name === 'camera door'), { state: 'warn', detail: /\/dev\/video98 does not exist/ }, 'doctor lists the camera and why it does not open');
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { cameras: [{ name: 'door', device: '/dev/sda' }] } }));
  const bad = await runPinclawAsync(['tool', 'run', 'camera_snapshot', '{}'], { env });
  t.equal(bad.code, 78, 'a configuration error');
  t.match(bad.stderr, 'hardware.cameras[0].device: expected "rpicam" (the Pi camera) or a V4L2 device such as /dev/video0, found "/dev/sda"');
});
