// Records every file this process reads or opens through node:fs, creates the local embedder and
// reads its id without embedding, then embeds once; prints which reads touched the embedder data
// before and after. Bundled by test/embedder-local.test.ts into the project tree (the data are
// found from there).
import { createRequire, syncBuiltinESMExports } from 'node:module';

type Fn = (this: unknown, ...args: unknown[]) => unknown;
const require = createRequire(import.meta.url);
const opened: string[] = [];
function spy(mod: Record<string, unknown>, names: string[]): void {
  for (const name of names) {
    const orig = mod[name] as Fn;
    mod[name] = function (this: unknown, ...args: unknown[]) {
      opened.push(String(args[0]));
      return orig.apply(this, args);
    };
  }
}
spy(require('node:fs') as Record<string, unknown>, ['readFileSync', 'openSync', 'readFile', 'open', 'createReadStream']);
spy(require('node:fs/promises') as Record<string, unknown>, ['readFile', 'open']);
// The ES module bindings of node:fs follow the patched CommonJS objects from here on.
syncBuiltinESMExports();

const { localEmbedder } = await import('../../src/memory/embedders/local.js');
const data = () => opened.filter((p) => p.includes('embedder'));
const e = localEmbedder();
const before = { id: e.id, dims: e.dimensions, implementation: e.implementation, read: data() };
const [v] = await e.embed(['the heating is too warm']);
process.stdout.write(JSON.stringify({ before, after: { implementation: e.implementation, read: data(), length: v!.length } }));
