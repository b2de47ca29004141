// Text to speech behind one interface, chosen by voice.tts.backend: an OpenAI-compatible
// /audio/speech server, or a program that writes a WAV (Debian's espeak-ng, Piper). Either result
// goes through ffmpeg afterwards, so its exact format does not matter.
import { writeFile } from 'node:fs/promises';
import type { PinclawConfig } from '../config/schema.js';
import { postJson } from './http.js';
import { fillArgv, runProgram } from './run-program.js';

type TtsConfig = PinclawConfig['voice']['tts'];

export interface Synthesizer {
  readonly name: string;
  /** writes the speech of `text` to `outPath` (any format ffmpeg reads) */
  synthesize(text: string, outPath: string, signal?: AbortSignal): Promise<void>;
}

export function synthesizerFor(cfg: TtsConfig): Synthesizer | { missing: string } {
  if (cfg.backend === 'openai') return openaiSynthesizer(cfg);
  if (cfg.backend === 'command') {
    if (cfg.command.length === 0) return { missing: 'voice.tts.backend is command but voice.tts.command is empty: set it, e.g. ["espeak-ng","-w","{wav}"]' };
    if (!cfg.command.some((a) => a.includes('{wav}'))) return { missing: 'voice.tts.command has no {wav}: put {wav} where the program takes the file to write' };
    return commandSynthesizer(cfg);
  }
  return { missing: 'text to speech is not set up: set voice.tts.backend to openai (with voice.tts.baseUrl) or command (with voice.tts.command, e.g. ["espeak-ng","-w","{wav}"]); see docs/configuration.md#voice' };
}

function openaiSynthesizer(cfg: TtsConfig): Synthesizer {
  const url = `${cfg.baseUrl.replace(/\/+$/, '')}/audio/speech`;
  const name = `the text-to-speech server at ${url} (voice.tts.baseUrl)`;
  return {
    name,
    async synthesize(text, outPath, signal) {
      // WAV: every OpenAI-compatible server offers it, and ffmpeg makes the Opus afterwards.
      const audio = await postJson(url, { model: cfg.model, voice: cfg.voice, input: text, response_format: 'wav' }, { apiKey: cfg.apiKey, timeoutMs: cfg.timeoutSeconds * 1000, what: name, signal });
      await writeFile(outPath, audio);
    },
  };
}

function commandSynthesizer(cfg: TtsConfig): Synthesizer {
  const name = `the text-to-speech command ${cfg.command[0]} (voice.tts.command)`;
  return {
    name,
    async synthesize(text, outPath, signal) {
      // The text on stdin (espeak-ng and Piper read it there; no text starting with "-" is taken for
      // an option), and as {text} for a program that wants it as an argument.
      await runProgram({ argv: fillArgv(cfg.command, { wav: outPath, text }), stdin: text, timeoutMs: cfg.timeoutSeconds * 1000, what: name, signal });
    },
  };
}
