// Embeds prepared texts with an addon given by path (the arm64 build, under qemu) and prints the
// vectors as base64 float32. Bundled by test/embedder-local.test.ts; plain Node, no project tree.
import { readFileSync } from 'node:fs';
import type { EmbedAddon } from '../../src/memory/embedders/local.js';

const [addonPath, dataPath, textsPath] = process.argv.slice(2) as [string, string, string];
const mod = { exports: {} as EmbedAddon };
process.dlopen(mod, addonPath);
const model = mod.exports.embedderLoad(readFileSync(dataPath));
const texts = JSON.parse(readFileSync(textsPath, 'utf8')) as string[];
const flat = mod.exports.embedTexts(model, texts);
process.stdout.write(JSON.stringify({ arch: process.arch, vectors: Buffer.from(flat.buffer, flat.byteOffset, flat.byteLength).toString('base64') }));
