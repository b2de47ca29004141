// Voice notes through the Telegram channel end to end: the gateway as a real process (the bundle
// and its lazy chunks), the Telegram stand-in, a spoken sentence (espeak-ng) encoded as Telegram's
// OGG/Opus, the speech-to-text command stand-in checking the audio it gets, the turn receiving its
// text, the transcript shown in the reply, /voice on kept across a restart and the reply decoded
// back from the voice note; and the bad cases: a 10-minute note, silence, the STT server down, TTS
// failing. Each tells the owner the cause, keeps the note in the workspace and loses no text.
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tempDir } from './support/proc.js';
import { startSpeechServer } from './support/speech-server.js';
import { startTelegramApi, type TelegramApi } from './support/telegram-api.js';
import { lastUser, startChannelGateway, type ChannelGateway } from './support/channel-gateway.js';
import { codecOf, decode, silentNote, spokenNote } from './support/voice-audio.js';

const OWNER = { id: 42, username: 'ada', first_name: 'Ada' };
const sttCommand = join(root, 'test', 'support', 'stt-command.mjs');
const audio = tempDir('pinclaw-voice-audio-');
const note = spokenNote(audio, 'Please turn on the kitchen light.');

interface Fixture extends ChannelGateway {
  tg: TelegramApi;
  /** where the STT stand-in writes what it was given */
  record: string;
}

async function fixture(t: Test, voice: (record: string) => Record<string, unknown>): Promise<Fixture> {
  const tg = await startTelegramApi();
  const g = await startChannelGateway(t, {
    config: (home) => ({
      channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42'], pollTimeoutSeconds: 2, debounceMs: 0, streaming: false } },
      voice: voice(join(home, 'stt.jsonl')),
    }),
    close: () => tg.close(),
  });
  return Object.assign(g, { tg, record: join(g.home, 'stt.jsonl') });
}

const commandStt = (text: string) => (record: string) => ({ stt: { backend: 'command', command: [process.execPath, sttCommand, '{wav}', record, text] }, tts: { backend: 'command', command: ['espeak-ng', '-w', '{wav}'] } });
const records = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { sampleRate: number; channels: number; seconds: number }) : []);
const textsTo = (tg: TelegramApi) => tg.sent.filter((m) => m.chatId === 42).map((m) => m.text);
const savedNotes = (home: string) => {
  const inbox = join(home, 'workspace', 'inbox', 'telegram');
  return existsSync(inbox) ? readdirSync(inbox).flatMap((d) => readdirSync(join(inbox, d)).filter((f) => f.endsWith('.ogg'))) : [];
};

t.test('a voice note is transcribed, the turn gets the text, the reply shows it; /voice on adds a voice note, kept across a restart', async (t) => {
  const f = await fixture(t, commandStt('turn on the kitchen light'));
  const { tg, llm } = f;
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => tg.sent.length === 1, 30_000);
  t.equal(llm.requests.length, 1);
  t.match(lastUser(llm.requests[0]!.body), /\] turn on the kitchen light"/, 'the turn got the transcript as the owner\'s text');
  const [got] = records(f.record);
  t.match(got, { sampleRate: 16000, channels: 1 }, 'the STT command got 16 kHz mono');
  t.ok(Math.abs(got!.seconds - note.seconds) < 0.1, `of the note's length (${got!.seconds.toFixed(2)} s of ${note.seconds.toFixed(2)} s)`);
  t.equal(tg.sent[0]!.text, '🎤 turn on the kitchen light\n\necho: turn on the kitchen light', 'the transcript above the answer');
  t.equal(tg.voices.length, 0, 'no voice reply unless asked');
  t.equal(savedNotes(f.home).length, 1, 'the note is kept in the workspace');

  tg.userMessage({ from: OWNER, text: '/voice on' });
  await tg.waitFor(() => tg.sent.length === 2, 20_000);
  t.match(tg.sent[1]!.text, /^Voice replies on/);
  t.ok(tg.commands.some((c) => c.command === 'voice'), '/voice is in the command menu');
  await f.gw.child.kill('SIGTERM');
  await f.gw.exited;
  await f.restart();
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => tg.voices.length === 1, 30_000);
  t.equal(tg.sent.at(-1)!.text, '🎤 turn on the kitchen light\n\necho: turn on the kitchen light', 'the text reply goes first');
  const v = tg.voices[0]!;
  t.equal(codecOf(audio, v.bytes), 'opus,1', 'the voice reply is OGG/Opus');
  const back = decode(audio, v.bytes);
  t.ok(back.seconds > 1 && back.peakDb > -20, `decoded back: ${back.seconds.toFixed(1)} s of speech, peak ${back.peakDb.toFixed(1)} dBFS`);
  t.equal(v.duration, Math.max(1, Math.round(back.seconds)), 'its duration is told to Telegram');
  t.ok(tg.chatActions.some((a) => a.action === 'record_voice'), '"recording a voice message" was shown');

  tg.userMessage({ from: OWNER, text: '/voice off' });
  await tg.waitFor(() => textsTo(tg).at(-1)!.startsWith('Voice replies off'), 20_000);
  tg.userMessage({ from: OWNER, text: 'and now?' });
  await tg.waitFor(() => textsTo(tg).at(-1) === 'echo: and now?', 20_000);
  t.equal(tg.voices.length, 1, 'off: text only');
});

t.test('a 10-minute note and a note of silence: a clear answer, no turn, the note kept', async (t) => {
  const f = await fixture(t, commandStt('never said'));
  const { tg, llm } = f;
  const long = silentNote(audio, 600);
  tg.userMessage({ from: OWNER, voice: { bytes: long.ogg, duration: 600 } });
  await tg.waitFor(() => tg.sent.length === 1, 30_000);
  t.match(tg.sent[0]!.text, /^Your voice note is 10 minutes long; I transcribe up to 5 minutes \(voice\.maxSeconds\)\. It is saved in the workspace as inbox\/telegram\/[\d-]+\/\d+-voice-\S+\.ogg\./);
  tg.userMessage({ from: OWNER, voice: { bytes: silentNote(audio, 4).ogg, duration: 4 } });
  await tg.waitFor(() => tg.sent.length === 2, 30_000);
  t.match(tg.sent[1]!.text, /^I heard nothing in your voice note \(4 seconds of silence, or no words I could make out\), so I did nothing with it\. It is saved/);
  t.equal(llm.requests.length, 0, 'no turn for either');
  t.equal(records(f.record).length, 0, 'the engine never ran');
  t.equal(savedNotes(f.home).length, 2, 'both notes kept');
});

t.test('the STT server down: the owner hears which server and why, no turn, the note kept', async (t) => {
  const server = await startSpeechServer('what time is it');
  const url = server.url;
  await server.close();
  const f = await fixture(t, () => ({ stt: { backend: 'openai', baseUrl: url } }));
  const { tg, llm } = f;
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => tg.sent.length === 1, 30_000);
  t.match(tg.sent[0]!.text, `I could not transcribe your voice note: the speech-to-text server at ${url}/audio/transcriptions (voice.stt.baseUrl): it is not running or not reachable (connection refused). It is saved in the workspace as inbox/telegram/`);
  t.equal(llm.requests.length, 0);
  t.equal(savedNotes(f.home).length, 1, 'the note is kept');
  t.match(f.gw.stderr(), /voice note \d+ in chat 42 could not be transcribed: the speech-to-text server/, 'and logged');
});

t.test('TTS failing: the text reply still goes, with a note why there is no voice', async (t) => {
  const f = await fixture(t, (record) => ({ ...commandStt('hello')(record), tts: { backend: 'command', command: ['/nonexistent/piper', '--output_file', '{wav}'] } }));
  const { tg } = f;
  tg.userMessage({ from: OWNER, text: '/voice on' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  tg.userMessage({ from: OWNER, text: 'are you there?' });
  await tg.waitFor(() => tg.sent.length === 3, 30_000);
  t.equal(tg.sent[1]!.text, 'echo: are you there?');
  t.equal(tg.sent[2]!.text, '(No voice note for this reply: the text-to-speech command /nonexistent/piper (voice.tts.command): the program /nonexistent/piper is not installed (or not on PATH))');
  t.equal(tg.voices.length, 0);
});

t.test('/voice on without text to speech set up is refused with what to set', async (t) => {
  const f = await fixture(t, () => ({}));
  const { tg } = f;
  tg.userMessage({ from: OWNER, text: '/voice on' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.match(tg.sent[0]!.text, /^I cannot speak yet: text to speech is not set up\. My owner sets voice\.tts\.backend/);
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => tg.sent.length === 2, 30_000);
  t.match(tg.sent[1]!.text, /^I cannot listen to voice notes yet: speech to text is not set up: set voice\.stt\.backend .*\. It is saved in the workspace as /);
  tg.userMessage({ from: OWNER, text: '/voice' });
  await tg.waitFor(() => tg.sent.length === 3, 20_000);
  t.match(tg.sent[2]!.text, /^Voice replies are off in this chat/);
});

t.test('Telegram down while the voice note goes: retried with the reply, the text not sent twice', async (t) => {
  const f = await fixture(t, commandStt('hello'));
  const { tg } = f;
  tg.userMessage({ from: OWNER, text: '/voice on' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  tg.fail('sendVoice', { status: 502 });
  tg.userMessage({ from: OWNER, text: 'still there?' });
  await tg.waitFor(() => tg.voices.length === 1, 30_000);
  t.same(textsTo(tg), [tg.sent[0]!.text, 'echo: still there?'], 'the text reply once, no note: the voice came on the retry');
  t.equal(tg.calls.filter((c) => c.method === 'sendVoice').length, 2, 'the first sendVoice failed, the second went');
  t.match(f.gw.stderr(), /delivery of reply \d+ through telegram failed \(attempt 1\).*sendVoice: 502/);
});

t.test('in a forum topic, /voice on holds for that topic and the voice reply goes to the topic', async (t) => {
  const { tg } = await fixture(t, commandStt('unused'));
  const CHAT = -1005;
  const inTopic = (topicId: number, text: string, mentionBot = true) => tg.userMessage({ chatId: CHAT, chatType: 'supergroup', from: OWNER, topicId, text, mentionBot });
  inTopic(30, `/voice@${tg.bot.username} on`, false);
  await tg.waitFor(() => tg.sent.some((m) => m.threadId === 30 && m.text.startsWith('Voice replies on')), 20_000);
  inTopic(30, 'say hello');
  await tg.waitFor(() => tg.voices.length === 1, 30_000);
  t.equal(tg.voices[0]!.chatId, CHAT);
  t.equal(tg.voices[0]!.threadId, 30, 'the voice note went to the topic');
  t.ok(tg.sent.some((m) => m.threadId === 30 && m.text === 'echo: say hello'), 'the text reply too');
  t.ok(tg.chatActions.some((a) => a.action === 'record_voice' && a.threadId === 30), '"recording" shown in the topic');
  inTopic(40, 'and here?');
  await tg.waitFor(() => tg.sent.some((m) => m.threadId === 40 && m.text === 'echo: and here?'), 20_000);
  t.equal(tg.voices.length, 1, 'another topic of the group has voice replies off');
});
