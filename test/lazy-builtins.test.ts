// The bundle's lazy built-ins (scripts/build.mjs lazyBuiltins), through esbuild as the bundle is
// built: a module is required at the first read of one of its names, never when the importing file
// is evaluated, and esbuild's copy of each import (made per importing file, at every start) holds
// no getters of its own: the names are read through the prototype.
import t from 'tap';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { tempDir } from './support/proc.js';

const { lazyBuiltins } = (await import(new URL('../scripts/build.mjs', import.meta.url).href)) as { lazyBuiltins: Plugin };

const entry = `
import * as crypto from 'node:crypto';
import { createHash } from 'crypto';
import { gzipSync } from 'node:zlib';
export const ownKeys = () => Object.keys(crypto);
export const hash = (s) => createHash('sha256').update(s).digest('hex');
export const has = (k) => k in crypto;
export const read = (k) => crypto[k];
export const gzip = (s) => gzipSync(s);
`;

async function bundled(modules: Record<string, Record<string, unknown>>) {
  // An .mjs file, as the bundle's modules are ES modules of a "type": "module" package: esbuild then
  // imports a CommonJS module in Node's mode (__toESM(require_x(), 1)), which reads no __esModule.
  const dir = tempDir();
  writeFileSync(join(dir, 'entry.mjs'), entry);
  const out = await build({ entryPoints: [join(dir, 'entry.mjs')], bundle: true, platform: 'node', format: 'cjs', write: false, plugins: [lazyBuiltins], logLevel: 'silent' });
  const loads: string[] = [];
  const real = createRequire(import.meta.url);
  const req = (id: string) => {
    loads.push(id);
    return modules[id] ?? real(id);
  };
  const mod = { exports: {} as Record<string, (...a: unknown[]) => unknown> };
  new Function('require', 'module', 'exports', out.outputFiles[0]!.text)(req, mod, mod.exports);
  // The first load evaluates src/v8-flags.ts (loadBuiltin, which sets V8's defaults for a built-in's
  // load in the executable), whose own import of node:module asks whether this is the executable.
  return { api: mod.exports, loads: { filter: () => loads.filter((id) => id !== 'node:module'), all: loads } };
}

t.test('required at the first read of a name, once; the import copies no getters', async (t) => {
  const { api, loads } = await bundled({});
  t.same(loads.all, [], 'evaluating the importing file loads nothing');
  t.same(api.ownKeys!(), ['default'], "esbuild's copy of the import has only its default");
  t.equal(api.hash!('x'), createHash('sha256').update('x').digest('hex'));
  t.equal(api.hash!('y'), createHash('sha256').update('y').digest('hex'));
  t.same(loads.filter(), ['node:crypto'], 'loaded once, by the first call');
  t.equal(api.has!('randomUUID'), true);
  t.equal(api.has!('noSuchName'), false);
  t.ok(Buffer.isBuffer(api.gzip!('abc')));
  t.same(loads.filter(), ['node:crypto', 'node:zlib']);
});

t.test('a name only the running Node has is read through the prototype chain', async (t) => {
  const real = createRequire(import.meta.url)('node:crypto') as Record<string, unknown>;
  const { api, loads } = await bundled({ 'node:crypto': { ...real, addedLater: 42 } });
  t.equal(api.read!('addedLater'), 42);
  t.equal(api.has!('addedLater'), true);
  t.same(loads.filter(), ['node:crypto']);
});
