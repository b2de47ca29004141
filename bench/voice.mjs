// npm run bench:voice [-- --rounds N] [--idle-seconds S] [--json]
// Voice notes (src/voice/), each figure against a baseline measured in the same run:
//   - the real-time factor (processing seconds per second of audio) of `pinclaw voice transcribe`
//     with the command backend, on notes of 10 s, 60 s and 300 s of espeak-ng speech encoded as
//     Telegram's OGG/Opus, against the same work done by hand (ffmpeg to 16 kHz mono WAV, then the
//     same command). Debian has no speech-to-text engine, so the command is the test stand-in
//     (test/support/stt-command.mjs, which reads the whole WAV): the figure is pinclaw's own share
//     (conversion, measuring, the silence check, running the command); a real engine's time adds to
//     both sides. The time is measured inside pinclaw (--json's elapsedSeconds), so Node's start-up is
//     not in it.
//   - the RssAnon of an idle gateway (S seconds after it listens) with voice.* set up, against one
//     without: the voice code is a lazy chunk that nothing loads until a voice note arrives, so the
//     idle gateway must not grow by it.
// Needs ffmpeg and espeak-ng (apt install ffmpeg espeak-ng) and a built bundle (npm run build).
// Prints, never fails on a figure.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchRun, cachedNode, listeningUrl, procMemory } from './support/lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { note, warn, fail, integer, children, tempDir } = benchRun('bench:voice');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, 'idle-seconds': { type: 'string', default: '10' }, json: { type: 'boolean', default: false } } });
const rounds = integer(values.rounds, '--rounds', 1);
const idleSeconds = integer(values['idle-seconds'], '--idle-seconds', 1);
const bundle = join(root, 'dist', 'pinclaw.cjs');
if (!existsSync(bundle)) fail(`${bundle} is missing: npm run build`);
for (const p of ['ffmpeg', 'espeak-ng']) if (spawnSync(p, ['-version']).error) fail(`${p} is not installed: apt install ffmpeg espeak-ng`);
const node = cachedNode(root, process.arch, process.version) ?? process.execPath;
const standIn = join(root, 'test', 'support', 'stt-command.mjs');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const sh = (cmd, args) => {
  const r = spawnSync(cmd, args, { maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

const dir = tempDir('pinclaw-bench-voice-');
const record = join(dir, 'record.jsonl');
// One sentence of speech, looped to each length, encoded as a Telegram app records (Opus, 48 kHz mono).
const speech = join(dir, 'speech.wav');
sh('espeak-ng', ['-w', speech, 'The weather tomorrow will be cloudy with a chance of rain in the afternoon, so take an umbrella when you leave the house.']);
const lengths = [10, 60, 300];
const notes = lengths.map((s) => {
  const file = join(dir, `note-${s}.ogg`);
  sh('ffmpeg', ['-nostdin', '-loglevel', 'error', '-y', '-stream_loop', '-1', '-i', speech, '-t', String(s), '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '24k', '-application', 'voip', '-f', 'ogg', file]);
  return { seconds: s, file };
});

const home = tempDir('pinclaw-bench-voice-home-');
const voiceConfig = { maxSeconds: 600, stt: { backend: 'command', command: [node, standIn, '{wav}', record, 'the weather tomorrow'] }, tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'] } };
writeFileSync(join(home, 'config.json'), JSON.stringify({ voice: voiceConfig }));
const env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', PINCLAW_HOME: home };

const rtf = Object.fromEntries(lengths.map((s) => [s, { pinclaw: [], byHand: [] }]));
for (let round = 0; round < rounds; round++) {
  for (const n of notes) {
    // Alternating which side goes first, so a slow stretch hits both.
    const sides = round % 2 ? ['byHand', 'pinclaw'] : ['pinclaw', 'byHand'];
    for (const side of sides) {
      if (side === 'pinclaw') {
        const r = spawnSync(node, [bundle, 'voice', 'transcribe', n.file, '--json'], { env, encoding: 'utf8' });
        if (r.status !== 0) fail(`pinclaw voice transcribe: ${r.stderr}`);
        rtf[n.seconds].pinclaw.push(JSON.parse(r.stdout).elapsedSeconds / n.seconds);
      } else {
        const wav = join(dir, 'by-hand.wav');
        const started = performance.now();
        sh('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-i', n.file, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', wav]);
        sh(node, [standIn, wav, record, 'the weather tomorrow']);
        rtf[n.seconds].byHand.push((performance.now() - started) / 1000 / n.seconds);
      }
    }
  }
  note(`transcription round ${round + 1}/${rounds}: ${lengths.map((s) => `${s} s: RTF ${rtf[s].pinclaw.at(-1).toFixed(4)} (by hand ${rtf[s].byHand.at(-1).toFixed(4)})`).join(', ')}`);
}

async function idleGateway(withVoice) {
  const h = tempDir('pinclaw-bench-voice-gw-');
  writeFileSync(join(h, 'config.json'), JSON.stringify(withVoice ? { voice: voiceConfig } : {}));
  const child = spawn(node, [bundle, 'gateway', '--port', '0'], { env: { ...env, PINCLAW_HOME: h }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  const l = listeningUrl(child, 30_000, 'gateway');
  await l.url;
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const m = procMemory(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  children.delete(child);
  return m.rssAnon;
}
const idle = { with: [], without: [] };
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 ? ['without', 'with'] : ['with', 'without']) idle[side].push(await idleGateway(side === 'with'));
  note(`idle round ${round + 1}/${rounds}: RssAnon with voice ${(idle.with.at(-1) / 1024).toFixed(1)} MiB, without ${(idle.without.at(-1) / 1024).toFixed(1)} MiB`);
}

const results = {
  node: spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim(),
  rounds,
  transcription: lengths.map((s) => ({ seconds: s, rtfPinclaw: median(rtf[s].pinclaw), rtfByHand: median(rtf[s].byHand), ratio: median(rtf[s].pinclaw) / median(rtf[s].byHand) })),
  idleRssAnonKiB: { withVoice: median(idle.with), withoutVoice: median(idle.without), difference: median(idle.with) - median(idle.without) },
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  console.log(`bench:voice (${results.node}, ${rounds} rounds, medians)`);
  console.log('transcription, command backend (stand-in engine): real-time factor = processing s / audio s');
  for (const r of results.transcription) console.log(`  ${String(r.seconds).padStart(3)} s note: pinclaw ${r.rtfPinclaw.toFixed(4)}  by hand (ffmpeg + command) ${r.rtfByHand.toFixed(4)}  ratio ${r.ratio.toFixed(2)}`);
  const i = results.idleRssAnonKiB;
  console.log(`idle gateway RssAnon (${idleSeconds} s after listening): with voice.* ${(i.withVoice / 1024).toFixed(1)} MiB, without ${(i.withoutVoice / 1024).toFixed(1)} MiB, difference ${(i.difference / 1024).toFixed(2)} MiB`);
}
if (Math.abs(results.idleRssAnonKiB.difference) > 1024) warn('the idle gateway with voice set up differs by more than 1 MiB from one without');
