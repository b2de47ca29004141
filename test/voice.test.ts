// Voice with real parts: Debian's espeak-ng speaks, ffmpeg encodes the OGG/Opus Telegram sends, and
// the pipeline (src/voice/) converts, measures and hands the audio to speech-to-text stand-ins (an
// OpenAI-compatible server and a command) that check they get 16 kHz mono audio of the right length:
// no offline engine in Debian judges words well enough to test the words. The reply side speaks
// with espeak-ng (the command backend) and through the server's /audio/speech, and is decoded back.
// `pinclaw voice transcribe|say` run as the real bundle.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig } from '../src/config/index.js';
import type { PinclawConfig } from '../src/config/schema.js';
import { hear, SILENCE_DB } from '../src/voice/hear.js';
import { speak } from '../src/voice/speak.js';
import { loudestWindowDb, readWav } from '../src/voice/wav.js';
import { fillArgv } from '../src/voice/run-program.js';
import { cleanEnv, root, runPinclawAsync, tempDir } from './support/proc.js';
import { startSpeechServer, wavFormat } from './support/speech-server.js';
import { codecOf, decode, silentNote, spokenNote } from './support/voice-audio.js';

const SENTENCE = 'Please turn on the kitchen light at seven.';
const sttCommand = join(root, 'test', 'support', 'stt-command.mjs');

function config(voice: Record<string, unknown>): PinclawConfig {
  const r = validateConfig({ voice });
  if (!r.config) throw new Error(JSON.stringify(r.errors));
  return r.config;
}
const records = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { sampleRate: number; channels: number; bits: number; seconds: number; peakDb: number }) : []);

const dir = tempDir('pinclaw-voice-');
const note = spokenNote(dir, SENTENCE);

t.test('the command backend gets 16 kHz mono WAV of the note\'s length and its text is the transcript', async (t) => {
  const record = join(dir, 'cmd-1.jsonl');
  const cfg = config({ stt: { backend: 'command', command: [process.execPath, sttCommand, '{wav}', record, 'turn on the kitchen light'] } });
  const heard = await hear(cfg, note.path);
  t.same(heard.kind, 'text');
  t.equal(heard.kind === 'text' && heard.text, 'turn on the kitchen light', 'the two printed lines become one text');
  const [got] = records(record);
  t.match(got, { sampleRate: 16000, channels: 1, bits: 16 });
  // Opus pads and trims a few milliseconds at each end; the speech itself is all there.
  t.ok(Math.abs(got!.seconds - note.seconds) < 0.1, `the command got ${got!.seconds.toFixed(3)} s, the speech is ${note.seconds.toFixed(3)} s`);
  t.ok(got!.peakDb > -20, `it is the speech, not silence (peak ${got!.peakDb.toFixed(1)} dBFS)`);
});

t.test('the OpenAI-compatible backend: multipart with model and language, bearer key, 16 kHz mono WAV', async (t) => {
  const server = await startSpeechServer('turn on the kitchen light');
  t.teardown(() => server.close());
  const cfg = config({ stt: { backend: 'openai', baseUrl: server.url, model: 'whisper-large-v3', language: 'en', apiKey: 'gsk-test' } });
  const heard = await hear(cfg, note.path);
  t.match(heard, { kind: 'text', text: 'turn on the kitchen light' });
  t.equal(server.transcriptions.length, 1);
  const got = server.transcriptions[0]!;
  t.match(got, { sampleRate: 16000, channels: 1, bits: 16, model: 'whisper-large-v3', language: 'en', authorization: 'Bearer gsk-test' });
  t.ok(Math.abs(got.seconds - note.seconds) < 0.1, `the server got ${got.seconds.toFixed(3)} s of the ${note.seconds.toFixed(3)} s`);
});

t.test('silence is "heard nothing" and never reaches the engine; an engine that hears nothing is the same', async (t) => {
  const server = await startSpeechServer('Thank you.');
  t.teardown(() => server.close());
  const silent = silentNote(dir, 5);
  const heard = await hear(config({ stt: { backend: 'openai', baseUrl: server.url } }), silent.path);
  t.match(heard, { kind: 'silence' });
  t.equal(server.transcriptions.length, 0, 'the engine never got the silence (it would have invented "Thank you.")');
  server.text = '[BLANK_AUDIO]';
  const blank = await hear(config({ stt: { backend: 'openai', baseUrl: server.url } }), note.path);
  t.match(blank, { kind: 'silence' }, 'speech the engine made nothing of');
  t.equal(server.transcriptions.length, 1);
});

t.test('a note longer than voice.maxSeconds is refused before the engine runs', async (t) => {
  const record = join(dir, 'cmd-long.jsonl');
  const cfg = config({ maxSeconds: 1, stt: { backend: 'command', command: [process.execPath, sttCommand, '{wav}', record, 'x'] } });
  const heard = await hear(cfg, note.path);
  t.match(heard, { kind: 'too-long', maxSeconds: 1 });
  t.equal(records(record).length, 0, 'the command never ran');
});

t.test('failures name their cause: the server down, a 401, a command missing or failing, no backend', async (t) => {
  const server = await startSpeechServer('x');
  const url = server.url;
  await server.close();
  await t.rejects(hear(config({ stt: { backend: 'openai', baseUrl: url } }), note.path), { message: `the speech-to-text server at ${url}/audio/transcriptions (voice.stt.baseUrl): it is not running or not reachable (connection refused)` });
  const up = await startSpeechServer('x');
  t.teardown(() => up.close());
  up.fail(401);
  await t.rejects(hear(config({ stt: { backend: 'openai', baseUrl: up.url } }), note.path), { message: /HTTP 401 \(check the apiKey\): .*injected 401/ });
  await t.rejects(hear(config({ stt: { backend: 'command', command: ['/nonexistent/whisper-cli', '-f', '{wav}'] } }), note.path), { message: 'the speech-to-text command /nonexistent/whisper-cli (voice.stt.command): the program /nonexistent/whisper-cli is not installed (or not on PATH)' });
  await t.rejects(hear(config({ stt: { backend: 'command', command: ['sh', '-c', 'echo "model file not found" >&2; exit 2', '{wav}'] } }), note.path), { message: /\(voice\.stt\.command\): sh failed \(exit 2\): model file not found/ });
  t.match(await hear(config({}), note.path), { kind: 'not-set-up', why: /set voice\.stt\.backend/ });
  t.match(await hear(config({ stt: { backend: 'command', command: ['whisper-cli', '-f', 'x.wav'] } }), note.path), { kind: 'not-set-up', why: /voice\.stt\.command has no \{wav\}/ });
  await t.rejects(hear(config({ stt: { backend: 'openai', baseUrl: up.url } }), join(dir, 'no-such.ogg')), { message: /converting the audio \(voice\.ffmpeg\): ffmpeg failed \(exit 1\): .*no-such\.ogg/ });
});

t.test('speech out: espeak-ng (command) and the server\'s /audio/speech, encoded as OGG/Opus and decoded back', async (t) => {
  const spoken = await speak(config({ tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'] } }), 'The kitchen light is on.');
  t.equal(codecOf(dir, spoken.ogg), 'opus,1', 'OGG/Opus, mono: what Telegram plays as a voice note');
  const back = decode(dir, spoken.ogg);
  t.ok(back.seconds > 0.8 && Math.abs(back.seconds - spoken.seconds) < 0.1, `decoded ${back.seconds.toFixed(2)} s, spoken ${spoken.seconds.toFixed(2)} s`);
  t.ok(back.peakDb > -20, `it is speech (peak ${back.peakDb.toFixed(1)} dBFS)`);
  const server = await startSpeechServer();
  t.teardown(() => server.close());
  const viaServer = await speak(config({ tts: { backend: 'openai', baseUrl: server.url, voice: 'nova' } }), 'The kitchen light is on.');
  t.match(server.speeches, [{ input: 'The kitchen light is on.', voice: 'nova', model: 'tts-1', format: 'wav' }]);
  t.equal(codecOf(dir, viaServer.ogg), 'opus,1');
  t.ok(decode(dir, viaServer.ogg).peakDb > -20);
  await t.rejects(speak(config({ tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'], maxChars: 10 } }), 'The kitchen light is on.'), { message: 'the reply has 24 characters, more than voice.tts.maxChars (10)' });
  await t.rejects(speak(config({ tts: { backend: 'command', command: ['true', '{wav}'] } }), 'hello'), { message: /converting the audio/ }, 'a program that wrote nothing');
});

t.test('the WAV reader: chunks before data, level of speech and of silence; placeholders', async (t) => {
  const speech = readWav(readFileSync(note.path.replace(/\.ogg$/, '.wav')));
  t.equal(speech.channels, 1);
  t.ok(Math.abs(speech.seconds - note.seconds) < 1e-9);
  t.ok(loudestWindowDb(speech) > SILENCE_DB + 20);
  // A LIST chunk before the data, as some writers put it.
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii'); fmt.writeUInt32LE(16, 4); fmt.writeUInt16LE(1, 8); fmt.writeUInt16LE(1, 10); fmt.writeUInt32LE(16000, 12); fmt.writeUInt32LE(32000, 16); fmt.writeUInt16LE(2, 20); fmt.writeUInt16LE(16, 22);
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0')]);
  const data = Buffer.concat([Buffer.from('data'), Buffer.from([0x80, 0x3e, 0, 0]), Buffer.alloc(16000)]);
  const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), fmt, list, data]);
  const w = readWav(wav);
  t.equal(w.seconds, 0.5);
  t.equal(loudestWindowDb(w), -Infinity, 'digital silence');
  t.throws(() => readWav(Buffer.from('not a wav at all')), { message: /not a WAV file/ });
  t.same(fillArgv(['x', '-f', '{wav}', '--out={wav}.txt', '{other}'], { wav: '/tmp/a.wav' }), ['x', '-f', '/tmp/a.wav', '--out=/tmp/a.wav.txt', '{other}']);
});

t.test('pinclaw voice transcribe FILE and say TEXT -o FILE, as the owner tests a setup', async (t) => {
  const home = tempDir();
  const record = join(home, 'rec.jsonl');
  writeFileSync(join(home, 'config.json'), JSON.stringify({ voice: {
    stt: { backend: 'command', command: [process.execPath, sttCommand, '{wav}', record, 'turn on the kitchen light'] },
    tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'] },
  } }));
  const env = cleanEnv({ PINCLAW_HOME: home });
  const r = await runPinclawAsync(['voice', 'transcribe', note.path], { env });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim(), 'turn on the kitchen light');
  t.match(r.stderr, /\d+\.\d s of audio transcribed in \d+\.\d s \(command\)/);
  t.match(records(record), [{ sampleRate: 16000, channels: 1 }]);
  const out = join(home, 'reply.ogg');
  const s = await runPinclawAsync(['voice', 'say', 'Good morning, the heating is on.', '-o', out], { env });
  t.equal(s.code, 0, s.stderr);
  t.match(s.stdout, /wrote .*reply\.ogg: \d+\.\d s of OGG\/Opus voice note/);
  t.equal(codecOf(home, readFileSync(out)), 'opus,1');
  t.ok(decode(home, readFileSync(out)).seconds > 1);
  const silence = await runPinclawAsync(['voice', 'transcribe', silentNote(home, 3).path], { env });
  t.equal(silence.code, 1);
  t.match(silence.stderr, /heard nothing in .*silence/);
  const bare = tempDir();
  const none = await runPinclawAsync(['voice', 'transcribe', note.path], { env: cleanEnv({ PINCLAW_HOME: bare }) });
  t.equal(none.code, 78, 'a configuration error');
  t.match(none.stderr, /speech to text is not set up: set voice\.stt\.backend/);
  const noSay = await runPinclawAsync(['voice', 'say', 'hello', '-o', join(bare, 'x.ogg')], { env: cleanEnv({ PINCLAW_HOME: bare }) });
  t.equal(noSay.code, 78);
  t.match(noSay.stderr, /text to speech is not set up/);
  const usage = await runPinclawAsync(['voice', 'say', 'hello'], { env });
  t.equal(usage.code, 2);
  t.match(usage.stderr, /say needs -o FILE/);
  t.equal(wavFormat(Buffer.from('x')), undefined);
});
