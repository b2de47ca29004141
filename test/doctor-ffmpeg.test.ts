// doctor's ffmpeg check, through a real `pinclaw doctor --json` (the bundle and its images chunk):
// there only when voice or a V4L2 camera needs ffmpeg; a missing one named with who needs it and the fix.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

type Check = { name: string; state: string; detail: string };

async function doctor(config: Record<string, unknown>): Promise<Check | undefined> {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const r = await runPinclawAsync(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  return (JSON.parse(r.stdout) as { checks: Check[] }).checks.find((c) => c.name === 'ffmpeg');
}

t.test('nothing needs ffmpeg: no check', async (t) => {
  t.equal(await doctor({}), undefined);
});

t.test('voice and a V4L2 camera: the ffmpeg found, and for whom', async (t) => {
  const c = await doctor({ voice: { stt: { backend: 'command', command: ['whisper-cli', '-f', '{wav}'] } }, hardware: { cameras: [{ name: 'door', device: '/dev/video0' }] } });
  t.equal(c?.state, 'ok');
  t.match(c?.detail, /^ffmpeg version \S+ for voice notes \(voice\.stt\) and the camera door \(hardware\.cameras\)$/);
});

t.test('voice.ffmpeg missing: a warning naming the key, who needs it and the fix; the camera\'s ffmpeg checked apart', async (t) => {
  const c = await doctor({ voice: { ffmpeg: '/nonexistent/ffmpeg', tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'] } }, hardware: { cameras: [{ name: 'door', device: '/dev/video0' }] } });
  t.equal(c?.state, 'warn');
  t.match(c?.detail, /^\/nonexistent\/ffmpeg is not installed \(voice\.ffmpeg is \/nonexistent\/ffmpeg\), and voice replies \(voice\.tts\) need it: sudo apt-get install ffmpeg, or set voice\.ffmpeg to where it is; ffmpeg version \S+ for the camera door/);
});
