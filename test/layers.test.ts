// The import rule of docs/architecture.md ("Layers"), read from that page: every module of src/ in a
// layer, no module importing a layer above its own, no circle of imports.
// A short scan of the sources rather than a dependency (dependency-cruiser is ~10 MB installed): the
// code imports only with relative `import`/`export ... from` and `import()`, which a regex reads.
import t from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

interface Layer {
  name: string;
  paths: string[];
}

/** The ```layers block of docs/architecture.md: one layer per line, the lowest first. */
function readLayers(doc: string): Layer[] {
  const m = /```layers\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/architecture.md has no ```layers block');
  return m[1]!.trim().split('\n').map((line) => {
    const [name, ...paths] = line.trim().split(/\s+/);
    return { name: name!, paths };
  });
}

/** The relative specifiers a source imports: static imports and re-exports (type-only too) and import(). */
function importsOf(source: string): string[] {
  // Comments may quote imports; they are not code.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const re = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const m of code.matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/** What breaks the rule in `sources` (path under src/ → text). */
function check(layers: Layer[], sources: ReadonlyMap<string, string>): { unplaced: string[]; upward: string[]; circles: string[][] } {
  const layerOf = (file: string): number | undefined => {
    let best: { index: number; length: number } | undefined;
    layers.forEach((l, index) => {
      for (const p of l.paths) {
        const hit = p.endsWith('/') ? file.startsWith(p) : file === p;
        if (hit && (!best || p.length > best.length)) best = { index, length: p.length };
      }
    });
    return best?.index;
  };
  const unplaced = [...sources.keys()].filter((f) => layerOf(f) === undefined);
  const edges = new Map<string, string[]>();
  const upward: string[] = [];
  for (const [file, text] of sources) {
    const targets: string[] = [];
    for (const spec of importsOf(text)) {
      const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (!sources.has(target)) continue; // a JSON file, a dashboard asset
      targets.push(target);
      const from = layerOf(file);
      const to = layerOf(target);
      if (from !== undefined && to !== undefined && to > from) {
        upward.push(`src/${file} (layer ${layers[from]!.name}) imports src/${target} (layer ${layers[to]!.name}, higher): a module imports only its own layer and those below it`);
      }
    }
    edges.set(file, targets);
  }
  return { unplaced, upward, circles: circles(edges) };
}

/** The strongly connected groups of more than one module (Tarjan), each a circle of imports. */
function circles(edges: ReadonlyMap<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

function sourcesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

const layers = readLayers(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));

t.test('src/ keeps the layers of docs/architecture.md: no upward import, no circle, every module placed', async (t) => {
  const sources = sourcesUnder(src);
  t.ok(sources.size > 300, `the scan found the sources (${sources.size})`);
  const r = check(layers, sources);
  t.same(r.unplaced, [], 'every module is in a layer (add a new folder or top-level file to the layers block)');
  t.same(r.upward, [], 'no module imports a higher layer');
  t.same(r.circles, [], 'no import circle');
});

// The check itself, on planted sources: it must be able to fail.
t.test('the check names both files of an upward import, a circle and an unplaced module', async (t) => {
  const planted = new Map([
    ['store/queue.ts', "import { turn } from '../conductor/turn.js';"],
    ['conductor/turn.ts', "import type { Row } from '../store/queue.js';\nexport const turn = 1;"],
    ['elsewhere/x.ts', "// import { y } from '../store/queue.js';\nconst m = await import('../store/queue.js');"],
  ]);
  const r = check(layers, planted);
  t.same(r.unplaced, ['elsewhere/x.ts']);
  t.equal(r.upward.length, 1);
  t.match(r.upward[0], 'src/store/queue.ts (layer store) imports src/conductor/turn.ts (layer conductor, higher)');
  t.same(r.circles, [['conductor/turn.ts', 'store/queue.ts']], 'a circle through a type-only import counts');
  t.same(importsOf(planted.get('elsewhere/x.ts')!), ['../store/queue.js'], 'a commented import is not one; import() is');
  t.same(importsOf("import {\n  a,\n  b,\n} from './multi.js';\nexport * from './all.js';\nimport './side.js';"), ['./multi.js', './all.js', './side.js']);
});
