// WordNet's links for the memory rerank: the build script's encoding and relation choice
// (scripts/word-links.mjs), the reader (src/memory/word-links.ts), the built data, and their effect
// in the rerank (src/memory/rerank.ts).
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { localEmbedder } from '../src/memory/embedders/local.js';
import { linkedSimilarity, rerank, WordVectors } from '../src/memory/rerank.js';
import { baseForms, decodeWordLinks, linksKey, linksName, LINKS_FORMAT, loadWordLinks } from '../src/memory/word-links.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Script {
  LINKS_FORMAT: number;
  linksKey(): string;
  linksName(): string;
  wordLinks(words: string[], synsets: Map<string, { words: string[]; links: [string, string][] }>, relations?: string[]): Map<string, Set<string>>;
  encodeLinks(links: Map<string, Set<string>>, kinds?: Map<string, Set<string>>): { bytes: Buffer; words: number; pairs: number; nouns: number; kinds: number };
  nounKinds(words: string[], synsets: Map<string, { words: string[]; links: [string, string][] }>, senses: Map<string, string[]>, tops?: string[]): Map<string, Set<string>>;
}
const script = (await import(join(root, 'scripts', 'word-links.mjs'))) as Script;

const linksOf = (pairs: [string, string][]): Map<string, Set<string>> => {
  const m = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!m.has(a)) m.set(a, new Set());
    if (!m.has(b)) m.set(b, new Set());
    m.get(a)!.add(b);
    m.get(b)!.add(a);
  }
  return m;
};

t.test('the build script and the reader agree on the format and the names', async (t) => {
  t.equal(script.LINKS_FORMAT, LINKS_FORMAT);
  t.equal(script.linksKey(), linksKey());
  t.equal(script.linksName(), linksName());
});

t.test('which WordNet relations link words, among the vocabulary only', async (t) => {
  // Synsets as scripts/wordnet-retrofit.mjs's readWordNet gives them: words, and pointers to other synsets.
  const synsets = new Map<string, { words: string[]; links: [string, string][] }>([
    ['1n', { words: ['chicken', 'poultry'], links: [['@', '2n'], ['+', '3v']] }],
    ['2n', { words: ['bird', 'fowl'], links: [] }],
    ['3v', { words: ['chickenize'], links: [] }],
    ['4n', { words: ['hen', 'biddy', 'laying_hen'], links: [['~', '1n']] }],
  ]);
  const words = ['chicken', 'poultry', 'bird', 'chickenize', 'hen', 'laying_hen'];
  const links = script.wordLinks(words, synsets);
  t.same([...links.get('chicken')!].sort(), ['bird', 'hen', 'poultry'], 'synonyms, the hypernym, and the hyponym pointing back');
  t.same([...links.get('bird')!].sort(), ['chicken', 'poultry'], 'a hypernym link goes both ways');
  t.notOk(links.has('fowl'), 'a word outside the vocabulary has no link');
  t.notOk(links.has('chickenize'), "a relation not chosen ('+') links nothing");
  t.notOk(links.has('laying_hen'), 'a collocation is not a term of the ranking');
  t.same([...script.wordLinks(words, synsets, ['='])!.keys()].sort(), ['chicken', 'poultry'], 'synonyms only');
});

t.test('the file round-trips: every link both ways, nothing else', async (t) => {
  const pairs: [string, string][] = [['chicken', 'poultry'], ['cut', 'mow'], ['cut', 'trim'], ['bag', 'sack'], ['abacus', 'zymurgy']];
  const { bytes, words, pairs: n } = script.encodeLinks(linksOf(pairs));
  t.equal(words, 9);
  t.equal(n, pairs.length);
  const l = decodeWordLinks(bytes, 'test.bin');
  t.equal(l.words, 9);
  for (const [a, b] of pairs) {
    t.ok(l.has(a, b), `${a} ~ ${b}`);
    t.ok(l.has(b, a), `${b} ~ ${a}`);
  }
  t.notOk(l.has('mow', 'trim'), 'not transitive');
  t.notOk(l.has('chicken', 'chicken'), 'a word is not its own link');
  t.notOk(l.has('chicken', 'piano'));
  t.ok(l.has('mows', 'cut') && l.has('sacks', 'bags') && l.has('cutting', 'mowed'), 'inflections find their base forms');
  // Many links of one word (gaps of more than one varint byte) and a long shared prefix.
  const wide = linksOf(Array.from({ length: 300 }, (_, i): [string, string] => ['hub', `spoke${String(i).padStart(3, '0')}`]));
  const w = decodeWordLinks(script.encodeLinks(wide).bytes);
  t.ok(w.has('hub', 'spoke000') && w.has('spoke299', 'hub'));
  t.notOk(w.has('spoke000', 'spoke001'));
});

t.test('the kinds of beings: below the tops, from the first sense that is a being', async (t) => {
  // A small WordNet: entity > organism > animal > dog > hound > beagle; animal > cat; organism >
  // person > man, and "cat" also a man ("guy", a later sense); "mum" a plant first, then a mother.
  const synsets = new Map<string, { words: string[]; links: [string, string][] }>([
    ['1n', { words: ['entity'], links: [] }],
    ['2n', { words: ['organism', 'being'], links: [['@', '1n']] }],
    ['3n', { words: ['animal', 'beast'], links: [['@', '2n']] }],
    ['4n', { words: ['dog', 'domestic_dog'], links: [['@', '3n']] }],
    ['5n', { words: ['hunting_dog'], links: [['@', '4n']] }],
    ['6n', { words: ['hound', 'hound_dog'], links: [['@', '5n']] }],
    ['7n', { words: ['beagle'], links: [['@', '6n']] }],
    ['8n', { words: ['cat', 'true_cat'], links: [['@', '3n']] }],
    ['9n', { words: ['person', 'someone'], links: [['@', '2n']] }],
    ['10n', { words: ['man', 'guy'], links: [['@', '9n']] }],
    ['11n', { words: ['cat', 'guy'], links: [['@', '10n']] }],
    ['12n', { words: ['mum', 'chrysanthemum'], links: [['@', '2n']] }],
    ['13n', { words: ['mother', 'parent'], links: [['@', '9n']] }],
    ['14n', { words: ['mum', 'mom'], links: [['@', '13n']] }],
    ['15n', { words: ['piano'], links: [['@', '1n']] }],
    ['16n', { words: ['lassie'], links: [['@i', '4n']] }],
  ]);
  const senses = new Map<string, string[]>([
    ['person', ['9n']], ['animal', ['3n']], ['dog', ['4n']], ['hound', ['6n']], ['beagle', ['7n']], ['cat', ['8n', '11n']],
    ['man', ['10n']], ['guy', ['10n', '11n']], ['mum', ['12n', '14n']], ['mother', ['13n']], ['parent', ['13n']], ['mom', ['14n']], ['piano', ['15n']], ['lassie', ['16n']],
  ]);
  const words = ['beagle', 'hound', 'dog', 'animal', 'cat', 'man', 'guy', 'person', 'someone', 'mum', 'mom', 'mother', 'parent', 'piano', 'lassie', 'organism'];
  const kinds = script.nounKinds(words, synsets, senses);
  const of = (w: string) => [...(kinds.get(w) ?? [])].sort();
  t.same(of('beagle'), ['dog', 'hound'], 'up through a collocation, the tops left out');
  t.same(of('cat'), [], 'the first sense, a feline: nothing between it and "animal"');
  t.same(of('guy'), ['man']);
  t.same(of('mum'), ['mom', 'mother', 'parent'], 'the first sense that is a being (a mother, not the plant), its synonyms too');
  t.same(of('lassie'), ['dog'], 'an instance hypernym counts');
  t.notOk(kinds.has('piano'), 'not a being');
  t.notOk(kinds.has('animal') || kinds.has('person'), 'the tops have no kinds');

  const { bytes, nouns } = script.encodeLinks(linksOf([['beagle', 'hound']]), kinds);
  t.equal(nouns, kinds.size);
  const l = decodeWordLinks(bytes, 'kinds.bin');
  t.equal(l.nouns, kinds.size);
  t.ok(l.has('beagle', 'hound'), 'the links beside them');
  t.ok(l.kindOf('beagle', 'dog') && l.kindOf('beagles', 'hounds') && l.kindOf('mum', 'mothers'), 'inflections of either side');
  t.notOk(l.kindOf('beagle', 'animal'));
  t.notOk(l.kindOf('dog', 'beagle'), 'not the other way round');
  t.notOk(l.kindOf('cat', 'man'));
  t.notOk(l.kindOf('unknown', 'dog'));
  const broken = Buffer.from(bytes);
  broken[broken.length - 1] = 0x7f; // the last noun's last kind now points past the kind words
  t.throws(() => decodeWordLinks(broken, 'kinds.bin'), /kinds\.bin: bad kind of noun \d+/);
  t.throws(() => decodeWordLinks(Buffer.concat([bytes.subarray(0, 40), Buffer.from([0, 0, 0, 0]), bytes.subarray(44)]), 'kinds.bin'), /the header says/, 'a length that does not add up');
});

t.test('a damaged file is refused with the reason', async (t) => {
  const { bytes } = script.encodeLinks(linksOf([['chicken', 'poultry']]));
  t.throws(() => decodeWordLinks(bytes.subarray(0, 10), 'x.bin'), /x\.bin: too short/);
  const wrongMagic = Buffer.from(bytes);
  wrongMagic[0] = 0x41;
  t.throws(() => decodeWordLinks(wrongMagic, 'x.bin'), /not a word-links file/);
  const newer = Buffer.from(bytes);
  newer.writeUInt32LE(LINKS_FORMAT + 1, 8);
  t.throws(() => decodeWordLinks(newer, 'x.bin'), new RegExp(`format ${LINKS_FORMAT + 1}, this build reads ${LINKS_FORMAT}`));
  t.throws(() => decodeWordLinks(bytes.subarray(0, bytes.length - 1), 'x.bin'), /the header says/);
  const outOfRange = Buffer.from(bytes);
  outOfRange[outOfRange.length - 2] = 5; // the only link's gap (before the last word's count) now points past the last word
  t.throws(() => decodeWordLinks(outOfRange, 'x.bin'), /bad link of word 0/);
});

t.test('base forms', async (t) => {
  t.same(baseForms('mows'), ['mows', 'mow']);
  t.same(baseForms('berries'), ['berries', 'berry', 'berri', 'berrie']);
  t.same(baseForms('repaired'), ['repaired', 'repair', 'repaire']);
  t.same(baseForms('heating'), ['heating', 'heat', 'heate']);
  t.same(baseForms('stopped'), ['stopped', 'stopp', 'stoppe', 'stop']);
  t.same(baseForms('glass'), ['glass'], 'no "glas"');
  t.same(baseForms('gpio17'), ['gpio17']);
});

t.test('the built links: WordNet pairs among the embedder words, within the size budget', async (t) => {
  const file = execFileSync(process.execPath, [join(root, 'scripts', 'word-links.mjs'), '--quiet'], { cwd: root, encoding: 'utf8' }).trim();
  t.ok(file.endsWith(linksName()), file);
  const l = await loadWordLinks(file);
  t.ok(l.words > 15_000 && l.words < 40_000, `${l.words} words with a link`);
  for (const [a, b] of [['poultry', 'chicken'], ['bag', 'sack'], ['cut', 'mows'], ['food', 'feed'], ['attic', 'loft'], ['fix', 'repaired']]) t.ok(l.has(a!, b!), `${a} ~ ${b}`);
  for (const [a, b] of [['poultry', 'piano'], ['boiler', 'invoice']]) t.notOk(l.has(a!, b!), `${a} !~ ${b}`);
  const { statSync } = await import('node:fs');
  t.ok(statSync(file).size <= 400 * 1024, `${statSync(file).size} bytes ≤ 400 KiB (the executable has ~0.5 MiB of headroom; it carries them zstd-compressed)`);
});

t.test('the rerank: a WordNet link moves a pair halfway to an exact match, if the vectors agree', async (t) => {
  t.equal(linkedSimilarity(0.4, true), 0.7);
  t.equal(linkedSimilarity(0.4, false), 0.4);
  t.equal(linkedSimilarity(-0.1, true), -0.1, 'a link the vectors contradict is not believed');
  t.equal(linkedSimilarity(0, true), 0);
  const emb = localEmbedder();
  const words = () => new WordVectors((w) => emb.embed(w));
  // bench/memory-eval.json's p28: the answer shares "bag" with neither side's words, the distractor
  // shares "bag" itself; WordNet links "poultry" to "chicken", "bag" to "sacks", "food" to "feed".
  const candidates = [
    { text: 'The water softener needs a new bag of salt blocks about every six weeks.', score: 0.5 },
    { text: 'Chicken feed: layers pellets in 25 kg sacks; one sack lasts about six weeks.', score: 0.5 },
  ];
  const links = await emb.wordLinks!();
  const q = 'How long does a bag of poultry food last?';
  // Weight 1: the word match alone orders them (min-max normalised: the better one 1, the other 0).
  t.same(await rerank(q, candidates, words(), 1), [1, 0], 'the word vectors alone prefer the distractor');
  t.same(await rerank(q, candidates, words(), 1, links), [0, 1], 'with the links, the answer');
  t.same(await rerank(q, candidates, words(), 1, { has: () => false }), [1, 0], 'a relation that links nothing is the vectors alone');
  t.notOk(localEmbedder({ links: false }).wordLinks, 'links: false leaves them out');
  t.equal(await localEmbedder().wordLinks!(), links, 'loaded once for the process');
  const { releaseCaches } = await import('../src/release.js');
  t.ok(releaseCaches().includes('word-links'));
  const again = await emb.wordLinks!();
  t.not(again, links, 'a release drops them; the next search loads them again');
  t.ok(again.has('poultry', 'chicken'));
});
