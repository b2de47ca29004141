// doctor's check that ffmpeg is there for what needs it: voice notes and spoken replies (voice.stt,
// voice.tts, through voice.ffmpeg) and V4L2 cameras (hardware.cameras with a /dev/videoN, through
// the ffmpeg on PATH). Without it they fail only when used, so doctor says it first, with the fix.
import { spawnSync } from 'node:child_process';
import type { PinclawConfig } from '../config/schema.js';

export interface FfmpegCheck {
  state: 'ok' | 'warn';
  detail: string;
}

/** Undefined when nothing configured needs ffmpeg. */
export function ffmpegCheck(config: PinclawConfig): FfmpegCheck | undefined {
  const needs = new Map<string, string[]>();
  const need = (program: string, what: string) => needs.set(program, [...(needs.get(program) ?? []), what]);
  if (config.voice.stt.backend) need(config.voice.ffmpeg, 'voice notes (voice.stt)');
  if (config.voice.tts.backend) need(config.voice.ffmpeg, 'voice replies (voice.tts)');
  const v4l2 = config.hardware.cameras.filter((c) => c.device?.startsWith('/dev/video')).map((c) => c.name ?? c.device!);
  if (v4l2.length) need('ffmpeg', `the camera${v4l2.length > 1 ? 's' : ''} ${v4l2.join(', ')} (hardware.cameras)`);
  if (needs.size === 0) return undefined;
  const lines: string[] = [];
  let ok = true;
  for (const [program, users] of needs) {
    const r = spawnSync(program, ['-hide_banner', '-version'], { encoding: 'utf8', timeout: 10_000 });
    const err = r.error as NodeJS.ErrnoException | undefined;
    if (err?.code === 'ENOENT') {
      ok = false;
      const key = program === config.voice.ffmpeg && program !== 'ffmpeg' ? ` (voice.ffmpeg is ${program})` : '';
      lines.push(`${program} is not installed${key}, and ${users.join(' and ')} need it: sudo apt-get install ffmpeg${key ? ', or set voice.ffmpeg to where it is' : ''}`);
    } else if (err || r.status !== 0) {
      ok = false;
      lines.push(`${program} -version failed (${err?.message ?? `exit ${r.status}`}): ${users.join(' and ')} need it`);
    } else {
      lines.push(`${(/^ffmpeg version (\S+)/.exec(r.stdout)?.[0] ?? program)} for ${users.join(' and ')}`);
    }
  }
  return { state: ok ? 'ok' : 'warn', detail: lines.join('; ') };
}
