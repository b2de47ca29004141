// Speech to text behind one interface, chosen by voice.stt.backend: an OpenAI-compatible
// /audio/transcriptions server (a whisper.cpp server on the LAN, OpenAI, Groq) or a program that
// prints the text. Both get the same 16 kHz mono WAV (ffmpeg.ts made it).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { fillArgv, runProgram } from './run-program.js';
import { httpFailure, postForm } from './http.js';

type SttConfig = PinclawConfig['voice']['stt'];

export interface Transcriber {
  /** what it is, for messages: "the speech-to-text server at http://..." */
  readonly name: string;
  transcribe(wavPath: string, signal?: AbortSignal): Promise<string>;
}

/** The configured backend, or a sentence saying what to set. */
export function transcriberFor(cfg: SttConfig): Transcriber | { missing: string } {
  if (cfg.backend === 'openai') return openaiTranscriber(cfg);
  if (cfg.backend === 'command') {
    if (cfg.command.length === 0) return { missing: 'voice.stt.backend is command but voice.stt.command is empty: set it to the argv of the program, e.g. ["whisper-cli","-m","/opt/ggml-base.bin","-nt","-np","-f","{wav}"]' };
    if (!cfg.command.some((a) => a.includes('{wav}'))) return { missing: 'voice.stt.command has no {wav}: the program would never get the audio; put {wav} where it takes the file' };
    return commandTranscriber(cfg);
  }
  return { missing: 'speech to text is not set up: set voice.stt.backend to openai (with voice.stt.baseUrl) or command (with voice.stt.command); see docs/configuration.md#voice' };
}

function openaiTranscriber(cfg: SttConfig): Transcriber {
  const url = `${cfg.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`;
  const name = `the speech-to-text server at ${url} (voice.stt.baseUrl)`;
  return {
    name,
    async transcribe(wavPath, signal) {
      const form = new FormData();
      form.append('file', new Blob([await readFile(wavPath)], { type: 'audio/wav' }), basename(wavPath));
      form.append('model', cfg.model);
      form.append('response_format', 'json');
      if (cfg.language) form.append('language', cfg.language);
      const res = await postForm(url, form, { apiKey: cfg.apiKey, timeoutMs: cfg.timeoutSeconds * 1000, what: name, signal });
      let body: unknown;
      try {
        body = JSON.parse(res.toString('utf8'));
      } catch {
        throw httpFailure(name, 'its answer was not JSON');
      }
      const text = (body as { text?: unknown }).text;
      if (typeof text !== 'string') throw httpFailure(name, 'its answer has no "text"');
      return text.trim();
    },
  };
}

function commandTranscriber(cfg: SttConfig): Transcriber {
  const name = `the speech-to-text command ${cfg.command[0]} (voice.stt.command)`;
  return {
    name,
    async transcribe(wavPath, signal) {
      const out = await runProgram({ argv: fillArgv(cfg.command, { wav: wavPath }), timeoutMs: cfg.timeoutSeconds * 1000, what: name, signal });
      // whisper.cpp prints one line per segment: one text, however the program breaks it.
      return out.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
    },
  };
}
