// The camera against a real V4L2 device behind a real kernel driver: Debian's own vivid module in the
// x64 VM (test/support/vm, one boot), its webcam input as /dev/video0. The guest runs camera_snapshot
// as the gateway builds it (startCameras in src/hardware/camera/: the check of hardware.cameras, the
// capture with Debian's ffmpeg, the JPEG saved in a workspace, the picture for the model through the
// images chunk) and doctor's camera check, with this host's node and ffmpeg (and their libraries);
// test/support/camera-vm-main.ts is the guest program, bundled here with esbuild. The host decodes
// each saved JPEG and the model's picture and checks their size:
// - 640x480, a size the webcam offers; 400x300, one it does not (the nearest, scaled); the
//   configured size when the call names none;
// - busy: a second ffmpeg streams from /dev/video0 while the snapshot runs;
// - missing: a camera configured as /dev/video9.
// The registry, the audit and the providers around the tool run on the host in test/camera.test.ts,
// with ffmpeg's test source behind the same interface.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { jpegSize } from '../src/images/jpeg.js';
import { root } from './support/proc.js';
import { decodeJpeg } from './support/camera-testsrc.js';
import { runInVm, vmAvailable, type VmResult } from './support/vm/index.js';

t.setTimeout(900_000);

const SIZES = [
  [640, 480],
  [400, 300],
] as const;

interface SnapResult { content: string; isError: boolean; physical?: { device: string; camera: string; file: string; width: number; height: number }; saved?: string; image?: { type: string; mediaType: string; data: string; note?: string } }
interface DoctorResult { doctor: { name: string; device: string; ok: boolean; detail: string }[] }

/** The guest program as one file (no node_modules in the guest). */
function guestProgram(): string {
  const out = join(mkdtempSync(join(tmpdir(), 'pinclaw-camera-vm-')), 'camera-vm-main.mjs');
  buildSync({
    entryPoints: [join(root, 'test', 'support', 'camera-vm-main.ts')], outfile: out, bundle: true, platform: 'node', format: 'esm',
    target: 'node20', logLevel: 'warning', define: { __PINCLAW_VERSION__: '"0.0.0-vm"' },
    // The bundle's require() of node: built-ins from ESM.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return out;
}

const run = (args: string) => `node /camera.mjs ${args} 2> /tmp/err; echo "exit=$?"; sed 's/^/stderr: /' /tmp/err`;

const script = `
echo "devices=$(ls /dev/video* | tr '\\n' ' ')"
echo "card=$(cat /sys/class/video4linux/video0/name)"
mkdir -p /tmp/ws
${run('doctor')}
${SIZES.map(([w, h]) => run(`snap ${w} ${h}`)).join('\n')}
${run('snap')}
# Busy: another program streams from the camera (the kernel gives one streamer the device's queue).
ffmpeg -hide_banner -loglevel error -nostdin -f v4l2 -i /dev/video0 -f null - > /dev/null 2>&1 &
streamer=$!
sleep 8
${run('snap 640 480')}
kill $streamer
${run('missing')}
`;

function field(output: string, key: string): string | undefined {
  const m = output.match(new RegExp(`^${key}=(.*)$`, 'gm'));
  return m?.at(-1)?.slice(key.length + 1).trim();
}

/** The guest program's JSON lines, in order. */
function results(output: string): unknown[] {
  return output.split(/\r?\n/).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as unknown);
}

const available = vmAvailable('x64');
const reason = available.ok ? null : `x64 VM unavailable: ${available.reason}`;
t.test('V4L2 snapshots from the vivid driver: the JPEG decoded at the size asked; busy and missing read as such', { skip: reason && !process.env.CI ? reason : false }, async (t) => {
  if (reason) return void t.fail(`unavailable on CI: ${reason}`);
  const r: VmResult = await runInVm({
    arch: 'x64',
    files: { '/usr/bin/ffmpeg': '/usr/bin/ffmpeg', '/usr/bin/node': process.execPath, '/camera.mjs': guestProgram() },
    // One device, video capture only, its one input a webcam (discrete sizes, 640x480 among them).
    modules: ['vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0'],
    // ffmpeg with its libraries and node (126 MB) in the initramfs: 1 GiB cuts the last files short.
    memoryMiB: 2048,
    timeoutMs: 600_000,
    script,
  });
  t.teardown(() => {
    if (!t.passing()) t.comment(`guest output:\n${r.output.slice(0, 20_000)}\nkernel log:\n${r.kernelLog}`);
  });
  const s = (ms: number) => (ms / 1000).toFixed(1);
  t.comment(`x64 VM (${r.kernelRelease}): prepare ${s(r.timings.prepareMs)} s, boot ${s(r.timings.bootMs)} s, script ${s(r.timings.scriptMs)} s`);
  t.equal(r.exitCode, 0, 'the guest script ran to the end');
  t.match(field(r.output, 'card'), /vivid/, 'the device is the vivid driver\'s');
  t.notMatch(r.output, /^stderr: /m, 'the guest program wrote nothing on stderr');
  const [doctor, ...snaps] = results(r.output) as [DoctorResult, ...SnapResult[]];
  t.equal(snaps.length, SIZES.length + 3, 'one result per snapshot');
  t.match(doctor.doctor, [{ name: 'shelf', device: '/dev/video0', ok: true, detail: '/dev/video0 opens' }, { name: 'gone', device: '/dev/video9', ok: false, detail: /^\/dev\/video9 does not exist: the camera is not connected/ }], 'doctor: the camera opens, the missing one is named');

  const sizes = [...SIZES, [640, 480] as const];
  sizes.forEach(([w, h], i) => {
    const snap = snaps[i]!;
    t.notOk(snap.isError, `${w}x${h}: ${snap.content}`);
    t.match(snap.content, new RegExp(`^snapshot of camera shelf: ${w} × ${h} JPEG, \\d+ bytes, saved in the workspace as snapshots/shelf/[\\d-]+/[\\d-]+\\.jpg; the picture follows\\.$`));
    t.match(snap.physical, { device: '/dev/video0', camera: 'shelf', width: w, height: h }, `${w}x${h}: the audit's physical record`);
    const saved = Buffer.from(snap.saved ?? '', 'base64');
    t.same(jpegSize(saved), { width: w, height: h }, `${w}x${h}: the saved JPEG's header`);
    t.same(decodeJpeg(saved, w, h), { ok: true }, `${w}x${h}: the saved JPEG decodes to ${w}x${h} pixels`);
    t.equal(snap.image?.mediaType, 'image/jpeg', `${w}x${h}: the picture for the model is a JPEG`);
    const shown = Buffer.from(snap.image?.data ?? '', 'base64');
    t.same(decodeJpeg(shown, w, h), { ok: true }, `${w}x${h}: the model's picture decodes at ${w}x${h} (within the providers' limits, not scaled)`);
  });

  const busy = snaps[sizes.length]!;
  t.ok(busy.isError, 'a second streamer: the snapshot fails');
  t.match(busy.content, /^camera 'shelf': \/dev\/video0 is busy: another program is using the camera/, `busy read as busy: ${busy.content}`);
  const missing = snaps[sizes.length + 1]!;
  t.ok(missing.isError);
  t.match(missing.content, /^camera 'gone': \/dev\/video9 is not there/, `missing read as missing: ${missing.content}`);
  t.notOk(busy.saved ?? missing.saved, 'nothing saved for a failed snapshot');
});
