// A voice note is saved and queued by the Telegram poller at once and transcribed in its own turn:
// a slow speech-to-text engine holds up only that chat (another chat's message sent after the note
// is answered while the engine still works), and a SIGKILL while transcribing loses nothing (the
// note is transcribed after the restart and the owner gets the reply with the transcript).
import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tempDir } from './support/proc.js';
import { startTelegramApi } from './support/telegram-api.js';
import { dbRows, lastUser, startChannelGateway } from './support/channel-gateway.js';
import { silentNote, spokenNote } from './support/voice-audio.js';

const OWNER = { id: 42, username: 'ada', first_name: 'Ada' };
const FRIEND = { id: 43, username: 'bob', first_name: 'Bob' };
const sttCommand = join(root, 'test', 'support', 'stt-command.mjs');
const audio = tempDir('pinclaw-voice-queue-audio-');
const note = spokenNote(audio, 'Please turn on the kitchen light.');

const records = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { pid: number; sampleRate: number; seconds: number }) : []);

async function fixture(t: Test, debounceMs = 0) {
  const tg = await startTelegramApi();
  const g = await startChannelGateway(t, {
    config: (home) => ({
      channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42', '43'], pollTimeoutSeconds: 2, debounceMs, streaming: false } },
      // The engine holds until the test creates the gate file; its own timeout is far away.
      voice: { stt: { backend: 'command', timeoutSeconds: 600, command: [process.execPath, sttCommand, '{wav}', join(home, 'stt.jsonl'), 'turn on the kitchen light', join(home, 'gate')] } },
    }),
    close: () => tg.close(),
  });
  const record = join(g.home, 'stt.jsonl');
  const gate = join(g.home, 'gate');
  t.teardown(() => {
    // The engine a SIGKILLed gateway left behind: let it end.
    writeFileSync(gate, '');
  });
  return { ...g, g, tg, record, gate };
}

t.test('while the note is transcribed, a message from another chat sent after it is answered', async (t) => {
  const { g, tg, record, gate, llm } = await fixture(t);
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => records(record).length === 1, 30_000);
  tg.userMessage({ from: FRIEND, text: 'are you there?' });
  // Before the poller handed transcription to the turn, this update was not even fetched until the
  // engine finished (up to voice.stt.timeoutSeconds).
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 43), 30_000);
  t.equal(tg.sent.find((m) => m.chatId === 43)!.text, 'echo: are you there?');
  t.notOk(existsSync(gate), 'answered while the engine still held the voice note');
  t.equal(tg.sent.filter((m) => m.chatId === 42).length, 0, 'the voice note is not answered yet');
  writeFileSync(gate, '');
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42), 30_000);
  t.equal(tg.sent.find((m) => m.chatId === 42)!.text, '🎤 turn on the kitchen light\n\necho: turn on the kitchen light', 'the transcript above the answer');
  t.match(lastUser(llm.requests.at(-1)!.body), /\] turn on the kitchen light"/, 'the turn got the transcript as the owner\'s text');
  const rows = dbRows<{ text: string; meta: string; state: string }>(g.home, `select text, meta, state from inbound where chat_id = '42'`);
  t.equal(rows.length, 1);
  t.equal(rows[0]!.text, 'turn on the kitchen light', 'the transcript is kept in the queue');
  t.match(JSON.parse(rows[0]!.meta), { voice: { file: /^inbox\/telegram\/[\d-]+\/\d+-voice-\S+\.ogg$/ }, transcript: 'turn on the kitchen light' });
});

t.test('a SIGKILL while transcribing loses nothing: the note is transcribed after the restart', async (t) => {
  const { g, tg, record, gate, llm } = await fixture(t);
  tg.userMessage({ from: OWNER, voice: { bytes: note.ogg, duration: Math.ceil(note.seconds) } });
  await tg.waitFor(() => records(record).length === 1, 30_000);
  // Queued before the engine ran: the poller moved on (the offset is past the note's update).
  const queued = dbRows<{ state: string; text: string }>(g.home, `select state, text from inbound`);
  t.same(queued.map((r) => r.state), ['processing'], 'the note is in the queue, its turn running');
  g.gw.child.kill('SIGKILL');
  await g.gw.exited;
  // The engine of the killed gateway is orphaned: stop it, so only the new one can answer.
  process.kill(records(record)[0]!.pid, 'SIGKILL');
  writeFileSync(gate, '');
  await g.restart();
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42), 30_000);
  t.equal(tg.sent.filter((m) => m.chatId === 42).map((m) => m.text).join('|'), '🎤 turn on the kitchen light\n\necho: turn on the kitchen light', 'answered once, with the transcript');
  t.equal(records(record).length, 2, 'transcribed again after the restart');
  t.equal(llm.requests.length, 1, 'one turn reached the model');
  t.match(g.gw.stderr(), /recovered 1 message\(s\) left unfinished/);
});

t.test('a note of silence and a text in one burst: the reply says why the note gave nothing, then answers the text', async (t) => {
  const { tg, llm, record } = await fixture(t, 1500);
  tg.userMessage({ from: OWNER, voice: { bytes: silentNote(audio, 4).ogg, duration: 4 } });
  tg.userMessage({ from: OWNER, text: 'what is up' });
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42), 30_000);
  const sent = tg.sent.filter((m) => m.chatId === 42);
  t.equal(sent.length, 1, 'one reply for the burst');
  t.match(sent[0]!.text, /^I heard nothing in your voice note \(4 seconds of silence, or no words I could make out\), so I did nothing with it\. It is saved in the workspace as inbox\/telegram\/[\d-]+\/\d+-voice-\S+\.ogg\.\n\necho: what is up$/);
  t.equal(llm.requests.length, 1, 'the text reached the model');
  t.equal(records(record).length, 0, 'silence never reached the engine');
});
