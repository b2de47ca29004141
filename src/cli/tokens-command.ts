// `pinclaw tokens [--encoding NAME] [FILE|-]`: the exact token count of a file or of stdin.
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../config/index.js';
import { errorMessage, PinclawError, UsageError } from '../errors.js';
import { configureNative } from '../native/loader.js';
import { getTokenizer, type Tokenizer } from '../native/tokenizer.js';
import { DEFAULT_ENCODING, ENCODINGS, isEncodingName } from '../native/tokenizer-encodings.js';
import { parseCommandArgs } from './args.js';
import { tokensOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw tokens [--encoding NAME] [FILE|-]';

async function readInput(file: string): Promise<Buffer> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PinclawError(`tokens: cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : errorMessage(err)}`);
  }
}

export async function runTokens(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, tokensOptions, USAGE);
  if (positionals.length > 1) throw new UsageError(`tokens: one FILE at most, got ${positionals.length}\nusage: ${USAGE}`);
  const encoding = values.encoding ?? DEFAULT_ENCODING;
  if (!isEncodingName(encoding)) throw new UsageError(`tokens: unknown encoding '${encoding}'; known: ${ENCODINGS.join(', ')}`);
  const config = loadConfig(ctx.paths, ctx.env);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  const file = positionals[0] ?? '-';
  const bytes = await readInput(file);
  // Counted all the same, as a TextDecoder would read it; but the user should know.
  if (!isUtf8(bytes)) ctx.err(`pinclaw tokens: ${file === '-' ? 'stdin' : file} is not valid UTF-8; each invalid sequence was counted as U+FFFD`);

  let tokenizer: Tokenizer;
  try {
    tokenizer = getTokenizer(encoding);
  } catch (err) {
    throw new PinclawError(`tokens: ${errorMessage(err)}`); // e.g. the rank data is missing or damaged
  }
  const tokens = await tokenizer.countAsync(bytes);
  ctx.out(ctx.json ? JSON.stringify({ encoding, tokens }) : String(tokens));
  return 0;
}
