// memory.embedder = "local": the built-in embedder (docs/memory-embedder.md). GloVe-derived word
// vectors shipped inside the executable, no network and no download: SIF-weighted averages of the
// words, typos corrected against the vocabulary, unknown words from hashed character n-grams, the
// common component removed. Computed by the addon (native/embed*.cc) or, when it is missing, by the
// TypeScript reference (local-reference.ts), which gives the same vectors. Nothing is read until
// the first embed: a process that never embeds never touches the ~2.7 MB of data.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { addonStatus, tryAddon } from '../../native/loader.js';
import { onRelease } from '../../release.js';
import { EmbedderError, type Embedder } from '../types.js';
import { DEFAULT_WORDS, EMBEDDER_DIMS, embedderId, loadEmbedderBytes, parseEmbedderData } from './local-asset.js';
import { prepareText, ReferenceEmbedder } from './local-reference.js';
import { loadWordLinks, type WordLinks } from '../word-links.js';

export { prepareText } from './local-reference.js';

/** What native/embed.cc exports. The model object is opaque. */
export interface EmbedAddon {
  embedderLoad(data: Uint8Array): object;
  embedderInfo(model: object): { format: number; dims: number; words: number; buckets: number; minGram: number; maxGram: number };
  embedTexts(model: object, texts: string[]): Float32Array;
  embedTextsAsync(model: object, texts: string[]): Promise<Float32Array>;
}

export interface LocalEmbedderOptions {
  /** Vocabulary size of the data to use; only the default (60k) is inside the executable. */
  words?: number;
  /** "auto" (default): the addon when it loads, else the reference. */
  implementation?: 'auto' | 'native' | 'reference';
  /** A data file to read instead of the built-in data (benchmarks). */
  file?: string;
  /** WordNet's links for the rerank (word-links.ts): on by default; false leaves the rerank to the word vectors alone. */
  links?: boolean;
  /** Another build of the links (node scripts/word-links.mjs writes the default one). */
  linksFile?: string;
}

export interface LocalEmbedder extends Embedder {
  /** Which backend computes; null until the first embed loads one. */
  readonly implementation: 'native' | 'reference' | null;
}

/**
 * Batches up to this many UTF-16 units (about two 400-token chunks: ~0.5 ms in the addon on an x64
 * dev machine, a few ms on a Pi) are embedded synchronously, a query above all: a thread-pool round
 * trip would cost about as much as the work. Larger batches go to the libuv pool in slices of this
 * size, so the event loop never waits on them.
 */
export const SYNC_UNITS = 4096;

export function embedAddon(): EmbedAddon | null {
  const a = tryAddon<Partial<EmbedAddon>>('pinclaw');
  // An addon built before the embedder existed lacks these functions: treat it as absent.
  if (a && typeof a.embedderLoad === 'function' && typeof a.embedTexts === 'function' && typeof a.embedTextsAsync === 'function') return a as EmbedAddon;
  return null;
}

interface Backend {
  implementation: 'native' | 'reference';
  /** Embeds prepared texts; `sync` only where the caller decided the batch is small. */
  run(prepared: string[], sync: boolean): Promise<Float32Array[]>;
}

function split(flat: Float32Array, count: number, dims: number): Float32Array[] {
  const out: Float32Array[] = [];
  // Copies, so each vector owns its buffer (a store may keep one and drop the rest).
  for (let i = 0; i < count; i++) out.push(flat.slice(i * dims, (i + 1) * dims));
  return out;
}

async function loadBackend(opts: Required<Pick<LocalEmbedderOptions, 'words' | 'implementation'>> & { file?: string }): Promise<Backend> {
  const { bytes, source } = await loadEmbedderBytes(opts.words, opts.file);
  const expect = (words: number, dims: number) => {
    if (words !== opts.words) throw new Error(`embedder data ${source}: ${words} words, ${opts.words} expected`);
    if (dims !== EMBEDDER_DIMS) throw new Error(`embedder data ${source}: ${dims} dimensions, expected ${EMBEDDER_DIMS}`);
  };
  const a = opts.implementation === 'reference' ? null : embedAddon();
  if (!a && opts.implementation === 'native') throw new Error(`the addon has no embedder (${addonStatus('pinclaw').error ?? 'built before it existed'})`);
  if (a) {
    // The addon checks the data as it loads them, as parseEmbedderData does. That parse (codebooks,
    // word offsets) is the reference's alone: 6-11 ms of JavaScript at every load, so at the first
    // embed after each idle release (docs/performance.md, "Twelfth pass").
    let model: object;
    try {
      model = a.embedderLoad(bytes);
    } catch (err) {
      throw new Error(`embedder data ${source}: ${errorMessage(err).replace(/^embedderLoad: embedder data: /, '')}`, { cause: err });
    }
    const info = a.embedderInfo(model);
    expect(info.words, info.dims);
    return {
      implementation: 'native',
      run: async (prepared, sync) => split(sync ? a.embedTexts(model, prepared) : await a.embedTextsAsync(model, prepared), prepared.length, info.dims),
    };
  }
  const data = parseEmbedderData(bytes, source);
  expect(data.words, data.dims);
  if (opts.implementation === 'auto') {
    log.once('embedder-reference', 'warn', `native embedder unavailable (${addonStatus('pinclaw').error ?? 'the addon has no embedder'}); embedding with the TypeScript reference`);
  }
  const ref = new ReferenceEmbedder(data);
  return { implementation: 'reference', run: async (prepared) => prepared.map((t) => ref.embed(t)) };
}

// One backend per data file and implementation for the whole process: every localEmbedder() shares
// it, so the data are read and the word table built once.
const backends = new Map<string, Promise<Backend>>();

// A quiet gateway drops them (src/release.ts): the addon's word table is freed once its handle is
// collected, and the executable's pages of the data can go. The next embed loads them again; an
// embed still running keeps the backend it started with.
onRelease('embedder', () => backends.clear());

// The word links, once per file for the process, dropped with the backends (about 2 MB of maps).
const links = new Map<string, Promise<WordLinks>>();
onRelease('word-links', () => links.clear());

/**
 * `load()` once per key while it succeeds; a failure is forgotten, so a later call tries again (after
 * npm install, say), and reaches the caller as `fail(message)`.
 */
function loadOnce<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>, fail: (message: string) => Error): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    p = load().catch((err: unknown) => {
      cache.delete(key);
      throw fail(errorMessage(err));
    });
    cache.set(key, p);
  }
  return p;
}

const linksFor = (file: string | undefined): Promise<WordLinks> =>
  loadOnce(links, file ?? '', () => loadWordLinks(file), (m) => new Error(`the word links cannot be loaded: ${m}`));

function backendFor(settings: Parameters<typeof loadBackend>[0]): Promise<Backend> {
  const key = `${settings.words}\0${settings.implementation}\0${settings.file ?? ''}`;
  return loadOnce(backends, key, () => loadBackend(settings), (m) => new EmbedderError(`the local embedder cannot load its data: ${m}`));
}

/** The built-in embedder: id local-wink100-60k-v2, 100 dimensions, unit vectors. */
export function localEmbedder(opts: LocalEmbedderOptions = {}): LocalEmbedder {
  const words = opts.words ?? DEFAULT_WORDS;
  const settings = { words, implementation: opts.implementation ?? 'auto', ...(opts.file ? { file: opts.file } : {}) } as const;
  let implementation: 'native' | 'reference' | null = null;
  const id = embedderId(words);
  const ready = async (): Promise<Backend> => {
    const b = await backendFor(settings);
    implementation = b.implementation;
    return b;
  };

  return {
    id,
    dimensions: EMBEDDER_DIMS,
    wordLevel: true,
    ...(opts.links === false ? {} : { wordLinks: () => linksFor(opts.linksFile) }),
    get implementation() {
      return implementation;
    },
    async embed(texts, signal) {
      const aborted = () => new EmbedderError('local embedding was aborted');
      if (signal?.aborted) throw aborted();
      if (texts.length === 0) return [];
      const b = await ready();
      const out: Float32Array[] = [];
      let i = 0;
      while (i < texts.length) {
        // Between slices the event loop runs (the reference computes on this thread).
        if (i > 0) await new Promise((r) => setImmediate(r));
        if (signal?.aborted) throw aborted();
        // A slice of up to SYNC_UNITS of text (at least one text), prepared here: folding needs ICU.
        const slice: string[] = [];
        let units = 0;
        while (i < texts.length && (slice.length === 0 || units + texts[i]!.length <= SYNC_UNITS)) {
          units += texts[i]!.length;
          slice.push(prepareText(texts[i++]!));
        }
        const sync = out.length === 0 && i === texts.length && units <= SYNC_UNITS;
        for (const v of await b.run(slice, sync)) out.push(v);
      }
      return out;
    },
  };
}
