// The camera against a real V4L2 device behind a real kernel driver: Debian's own vivid module in the
// x64 VM (test/support/vm, one boot), its webcam input as /dev/video0. The guest runs Debian's ffmpeg
// (this host's, with its libraries) with exactly the command line pinclaw's V4L2 source builds
// (src/hardware/camera/source.ts), and prints what it got; the host decodes each JPEG and checks its
// size, and reads the failures the way pinclaw does (explain()):
// - 640x480, a size the webcam offers; 400x300, one it does not (the nearest, scaled);
// - busy: a second ffmpeg streams from /dev/video0 while the snapshot's runs;
// - missing: /dev/video9.
// The tool itself (the registry, the audit, the file, the image for the model) runs on the host in
// test/camera.test.ts, with ffmpeg's test source behind the same interface.
import t from 'tap';
import { jpegSize } from '../src/images/jpeg.js';
import { v4l2Source } from '../src/hardware/camera/source.js';
import { decodeJpeg } from './support/camera-testsrc.js';
import { runInVm, vmAvailable, type VmResult } from './support/vm/index.js';

t.setTimeout(900_000);

/** The shell form of pinclaw's command for one still. */
function snapshotCommand(device: string, width: number, height: number): string {
  const [c] = v4l2Source(device).commands(width, height);
  return [c!.command, ...c!.args].map((a) => `'${a}'`).join(' ');
}

const SIZES = [
  [640, 480],
  [400, 300],
] as const;

const script = `
echo "devices=$(ls /dev/video* | tr '\\n' ' ')"
echo "card=$(cat /sys/class/video4linux/video0/name)"
${SIZES.map(([w, h]) => `
${snapshotCommand('/dev/video0', w, h)} > /tmp/s.jpg 2> /tmp/s.err
echo "snap-${w}x${h}-exit=$?"
echo "snap-${w}x${h}-stderr=$(tr '\\n' ' ' < /tmp/s.err)"
echo "snap-${w}x${h}-begin"
base64 /tmp/s.jpg
echo "snap-${w}x${h}-end"`).join('\n')}
# Busy: another program streams from the camera (the kernel gives one streamer the device's queue).
ffmpeg -hide_banner -loglevel error -nostdin -f v4l2 -i /dev/video0 -f null - > /dev/null 2>&1 &
streamer=$!
sleep 8
${snapshotCommand('/dev/video0', 640, 480)} > /tmp/b.jpg 2> /tmp/b.err
echo "busy-exit=$?"
echo "busy-stderr=$(tr '\\n' ' ' < /tmp/b.err)"
kill $streamer
${snapshotCommand('/dev/video9', 640, 480)} > /tmp/m.jpg 2> /tmp/m.err
echo "missing-exit=$?"
echo "missing-stderr=$(tr '\\n' ' ' < /tmp/m.err)"
`;

function field(output: string, key: string): string | undefined {
  const m = output.match(new RegExp(`^${key}=(.*)$`, 'gm'));
  return m?.at(-1)?.slice(key.length + 1).trim();
}

function block(output: string, name: string): Buffer {
  const m = new RegExp(`^${name}-begin\\r?\\n([\\s\\S]*?)^${name}-end`, 'm').exec(output);
  return Buffer.from((m?.[1] ?? '').replace(/\s+/g, ''), 'base64');
}

const available = vmAvailable('x64');
const reason = available.ok ? null : `x64 VM unavailable: ${available.reason}`;
t.test('V4L2 snapshots from the vivid driver: the JPEG decoded at the size asked; busy and missing read as such', { skip: reason && !process.env.CI ? reason : false }, async (t) => {
  if (reason) return void t.fail(`unavailable on CI: ${reason}`);
  const r: VmResult = await runInVm({
    arch: 'x64',
    files: { '/usr/bin/ffmpeg': '/usr/bin/ffmpeg' },
    // One device, video capture only, its one input a webcam (discrete sizes, 640x480 among them).
    modules: ['vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0'],
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

  for (const [w, h] of SIZES) {
    t.equal(field(r.output, `snap-${w}x${h}-exit`), '0', `${w}x${h}: ffmpeg succeeded (${field(r.output, `snap-${w}x${h}-stderr`)})`);
    const jpeg = block(r.output, `snap-${w}x${h}`);
    t.same(jpegSize(jpeg), { width: w, height: h }, `${w}x${h}: the JPEG's header`);
    t.same(decodeJpeg(jpeg, w, h), { ok: true }, `${w}x${h}: the JPEG decodes to ${w}x${h} pixels`);
  }

  const source = v4l2Source('/dev/video0');
  t.not(field(r.output, 'busy-exit'), '0', 'a second streamer fails');
  t.match(source.explain(field(r.output, 'busy-stderr') ?? ''), /^\/dev\/video0 is busy: another program is using the camera/, `busy read as busy: ${field(r.output, 'busy-stderr')}`);
  t.not(field(r.output, 'missing-exit'), '0');
  t.match(v4l2Source('/dev/video9').explain(field(r.output, 'missing-stderr') ?? ''), /^\/dev\/video9 is not there/, `missing read as missing: ${field(r.output, 'missing-stderr')}`);
});
