// The tokenizer's rank data for the single executable: tiktoken's own encoder files, embedded as
// assets at build time (never copied into the repository). src/native/tokenizer-data.ts reads them
// back under the same keys (encodingAsset()); the encodings are those of
// src/native/tokenizer-encodings.ts, which test/sea.test.ts exercises inside the executable.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ENCODINGS = ['o200k_base', 'cl100k_base'];

/** { asset key: file } for sea-config.json. */
export function tokenizerAssets(root) {
  const require = createRequire(join(root, 'package.json'));
  let dir = dirname(require.resolve('tiktoken'));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== 'tiktoken') {
    if (dirname(dir) === dir) throw new Error('cannot find the tiktoken package (a devDependency) for the tokenizer data');
    dir = dirname(dir);
  }
  const assets = {};
  for (const name of ENCODINGS) {
    const file = join(dir, 'encoders', `${name}.json`);
    if (!existsSync(file)) throw new Error(`tiktoken has no ${name} encoder file at ${file}`);
    assets[`tokenizer/${name}.json`] = file;
  }
  return assets;
}
