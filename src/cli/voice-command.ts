// `pinclaw voice transcribe FILE | say TEXT -o FILE`: the configured speech backends run on the
// owner's own audio and text, through the same code the Telegram channel uses, so a setup can be
// tested before a voice note ever arrives. A lazy chunk ('voice'), with the pipeline.
import { existsSync, writeFileSync } from 'node:fs';
// The import, not the global: a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../config/index.js';
import { ConfigError, PinclawError, UsageError } from '../errors.js';
import { hear } from '../voice/hear.js';
import { NotSetUp, speak } from '../voice/speak.js';
import { parseCommandArgs } from './args.js';
import { voiceOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = { transcribe: 'pinclaw voice transcribe FILE [--json]', say: 'pinclaw voice say TEXT -o FILE' } as const;

export async function runVoice(sub: string, rawArgs: string[], ctx: CliContext): Promise<number> {
  if (sub !== 'transcribe' && sub !== 'say') throw new UsageError(`unknown voice command '${sub}'\nusage: ${USAGE.transcribe}\n       ${USAGE.say}`);
  const usage = USAGE[sub];
  const { values, positionals } = parseCommandArgs(rawArgs, voiceOptions, usage);
  if (positionals.length !== 1) throw new UsageError(`expected one argument, got ${positionals.length}\nusage: ${usage}`);
  const arg = positionals[0]!;
  const config = loadConfig(ctx.paths, ctx.env);
  if (sub === 'transcribe') {
    if (!existsSync(arg)) throw new UsageError(`no such file: ${arg}\nusage: ${usage}`);
    const started = performance.now();
    const heard = await hear(config, arg).catch((err: unknown) => {
      throw new PinclawError(err instanceof Error ? err.message : String(err));
    });
    const elapsed = (performance.now() - started) / 1000;
    if (heard.kind === 'not-set-up') throw new ConfigError(heard.why);
    if (heard.kind === 'too-long') throw new PinclawError(`${arg} is ${Math.round(heard.seconds)} s long, more than voice.maxSeconds (${heard.maxSeconds} s); a voice note this long is not transcribed`);
    if (heard.kind === 'silence') throw new PinclawError(`heard nothing in ${arg} (${heard.seconds.toFixed(1)} s): it is silence, or the engine found no words`);
    if (ctx.json) ctx.out(JSON.stringify({ text: heard.text, seconds: heard.seconds, elapsedSeconds: elapsed }));
    else {
      ctx.out(heard.text);
      ctx.err(`${heard.seconds.toFixed(1)} s of audio transcribed in ${elapsed.toFixed(1)} s (${config.voice.stt.backend})`);
    }
    return 0;
  }
  if (!values.out) throw new UsageError(`say needs -o FILE (where the OGG/Opus voice note goes)\nusage: ${usage}`);
  if (arg.trim() === '') throw new UsageError(`the text is empty\nusage: ${usage}`);
  let spoken;
  try {
    spoken = await speak(config, arg);
  } catch (err) {
    if (err instanceof NotSetUp) throw new ConfigError(err.message);
    throw new PinclawError(err instanceof Error ? err.message : String(err));
  }
  writeFileSync(values.out, spoken.ogg);
  ctx.out(`wrote ${values.out}: ${spoken.seconds.toFixed(1)} s of OGG/Opus voice note (${spoken.ogg.length} bytes)`);
  return 0;
}
