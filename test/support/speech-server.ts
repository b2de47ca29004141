// An OpenAI-compatible speech server on 127.0.0.1 (a whisper.cpp server, OpenAI, Groq all speak
// this): POST /v1/audio/transcriptions takes multipart/form-data with `file`, `model`,
// `response_format`, `language`, and like the stand-in command (stt-command.mjs) it judges the
// audio rather than the words: anything but a 16 kHz mono 16-bit WAV is refused with 400, and each
// request's audio is recorded. POST /v1/audio/speech answers with speech made by Debian's
// espeak-ng (a real WAV). `fail` makes the next calls answer a status.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Heard { sampleRate: number; channels: number; bits: number; seconds: number; model: string; language?: string; authorization?: string; fileName: string }
export interface SpeechServer {
  url: string;
  readonly transcriptions: Heard[];
  readonly speeches: { input: string; voice: string; model: string; format: string }[];
  /** the text each transcription answers */
  text: string;
  fail(status: number, times?: number): void;
  close(): Promise<void>;
}

export function wavFormat(buf: Buffer): { format: number; sampleRate: number; channels: number; bits: number; seconds: number } | undefined {
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let at = 12;
  let fmt: { format: number; sampleRate: number; channels: number; bits: number } | undefined;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'fmt ') fmt = { format: buf.readUInt16LE(at + 8), channels: buf.readUInt16LE(at + 10), sampleRate: buf.readUInt32LE(at + 12), bits: buf.readUInt16LE(at + 22) };
    if (id === 'data' && fmt) return { ...fmt, seconds: Math.min(size, buf.length - at - 8) / ((fmt.bits / 8) * fmt.channels * fmt.sampleRate) };
    at += 8 + size + (size % 2);
  }
  return undefined;
}

export async function startSpeechServer(text = ''): Promise<SpeechServer> {
  const transcriptions: Heard[] = [];
  const speeches: SpeechServer['speeches'] = [];
  const faults: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const answer = (status: number, body: unknown, type = 'application/json') => {
          const b = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
          res.writeHead(status, { 'content-type': type, 'content-length': b.length });
          res.end(b);
        };
        const fault = faults.shift();
        if (fault) return answer(fault, { error: { message: `injected ${fault}` } });
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') {
          const form = await new Response(new Uint8Array(body), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
          const file = form.get('file');
          if (!file || typeof file === 'string') return answer(400, { error: { message: 'file is required' } });
          const fmt = wavFormat(Buffer.from(await file.arrayBuffer()));
          if (!fmt || fmt.format !== 1 || fmt.sampleRate !== 16000 || fmt.channels !== 1 || fmt.bits !== 16) return answer(400, { error: { message: `expected a 16 kHz mono 16-bit WAV, got ${JSON.stringify(fmt)}` } });
          const language = form.get('language');
          transcriptions.push({ ...fmt, model: String(form.get('model')), ...(typeof language === 'string' ? { language } : {}), ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), fileName: file.name });
          return answer(200, { text: api.text });
        }
        if (req.method === 'POST' && req.url === '/v1/audio/speech') {
          const p = JSON.parse(body.toString('utf8')) as { input: string; voice: string; model: string; response_format: string };
          speeches.push({ input: p.input, voice: p.voice, model: p.model, format: p.response_format });
          const r = spawnSync('espeak-ng', ['--stdout'], { input: p.input });
          return answer(200, r.stdout, 'audio/wav');
        }
        answer(404, { error: { message: 'not found' } });
      })().catch((e: unknown) => {
        res.writeHead(500);
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const api: SpeechServer = {
    url: `http://127.0.0.1:${port}/v1`,
    transcriptions,
    speeches,
    text,
    fail: (status, times = 1) => void faults.push(...Array.from({ length: times }, () => status)),
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
  return api;
}
