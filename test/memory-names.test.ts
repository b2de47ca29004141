// The household's names in memory search (src/memory/names.ts): which sentences name someone, which
// query words stand for which names (with WordNet's kinds of beings from the word-links file), and
// the effect through openMemory on a real SQLite file, with the local embedder and without one.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defaults } from '../src/config/schema.js';
import { localEmbedder } from '../src/memory/embedders/local.js';
import { openMemory } from '../src/memory/memory.js';
import { namesFor, namingsIn, ownWords, type Naming } from '../src/memory/names.js';
import { contentWords } from '../src/memory/rerank.js';
import { loadWordLinks } from '../src/memory/word-links.js';
import { openDatabase } from '../src/store/db.js';
import { tempDir } from './support/proc.js';

const named = (text: string): string[] => namingsIn(text).map((n) => `${n.name}=${n.role}${n.others ? ' (theirs)' : ''}`);

t.test('the sentences that name someone, and the ones that look alike but do not', async (t) => {
  t.same(named('Pepper is our spaniel, six years old.'), ['Pepper=spaniel']);
  t.same(named('Sam is a paramedic at the county hospital.'), ['Sam=paramedic'], 'the phrase ends before "at"');
  t.same(named('Tom, my husband, works from home on Fridays.'), ['Tom=husband']);
  t.same(named('Misty, the old tabby cat, sleeps on the boiler.'), ['Misty=cat'], 'the last word of the phrase is the role');
  t.same(named("Priya, Sam's sister, visits at Easter."), ['Priya=sister']);
  t.same(named('Our gardener Bill comes on Tuesdays.'), ['Bill=gardener']);
  t.same(named('The piano teacher, Ann Lee, charges £30.'), ['Ann=teacher'], 'set off by commas, a surname allowed');
  t.same(named('We have a tortoise called Shelly.'), ['Shelly=tortoise']);
  t.same(named('my dog is called Rex'), ['Rex=dog']);
  t.same(named('The Smiths next door have a son; their son Ollie is seven.'), ['Ollie=son (theirs)'], 'their/his/her: someone else\'s role');
  t.same(named('Pepper is our spaniel. Pepper is our spaniel.'), ['Pepper=spaniel'], 'once each');
  for (const text of [
    'Jonas drives a grey Nissan Leaf.', // a make: "a" is no definite determiner
    'The old Pi 3 used GPIO17 for the doorbell.', // a model number follows
    'Elena sings in the community choir, Wednesdays 19:30 at the church hall.', // no comma after the "name"
    'Swimming is at the leisure centre in Hebden Bridge.', // a preposition inside the phrase
    'Leo is five.', // no determiner, no role
    'The heater is a 2 kW fan heater.', // no name before "is"
    'This is our shed. The is a typo.',
    'Biscuit must not have grapes.',
  ]) t.same(named(text), [], text);
});

t.test('which names a query stands for', async (t) => {
  const namings: Naming[] = [
    { name: 'Pepper', role: 'spaniel' },
    { name: 'Tom', role: 'husband' },
    { name: 'Ollie', role: 'son', others: true },
    { name: 'Ann-Marie', role: 'teacher' },
  ];
  // A stand-in for WordNet's kinds, to test the mapping alone; the real kinds are tested below.
  const kindOf = (noun: string, general: string) => noun === 'spaniel' && general === 'dog';
  const ask = (q: string, k: typeof kindOf | null = kindOf) => Object.fromEntries([...namesFor(q, contentWords(q), namings, k)].map(([w, s]) => [w, [...s]]));
  t.same(ask('what does the dog eat?'), { dog: ['pepper'] }, 'a kind of the role');
  t.same(ask('what does the dog eat?', null), {}, 'without kinds, only the role itself');
  t.same(ask('when is the spaniel fed?', null), { spaniel: ['pepper'] });
  t.same(ask("my husband's birthday"), { husband: ['tom'] });
  t.same(ask('which husbands came?'), { husbands: ['tom'] }, 'an inflection of the role');
  t.same(ask('when does Pepper eat?'), {}, 'a query that names the name has nothing to add');
  t.same(ask('when does their son swim?'), { son: ['ollie'] });
  t.same(ask('when does our son swim?'), {}, '"our son" is not the neighbours\' son');
  t.same(ask('who is the teacher?'), { teacher: ['ann', 'marie'] }, 'a hyphenated name as the ranking splits it');
  t.same([...ownWords('When does my youngest son swim, and our dog?')].sort(), ['dog', 'son', 'youngest']);
});

t.test("the word-links file's kinds of beings: persons and animals, the first such sense only", async (t) => {
  const l = await loadWordLinks();
  t.ok(l.nouns > 3000 && l.nouns < 10_000, `${l.nouns} nouns have kinds`);
  for (const [noun, general] of [['beagle', 'dog'], ['beagle', 'dogs'], ['beagles', 'hound'], ['hen', 'bird'], ['mum', 'mother'], ['mum', 'parent'], ['nurse', 'caregiver'], ['daughter', 'child'], ['partner', 'spouse']]) {
    t.ok(l.kindOf(noun!, general!), `${general} is a kind of being a ${noun} is`);
  }
  for (const [noun, general] of [
    ['beagle', 'cat'],
    ['cat', 'dog'],
    ['cat', 'man'], // cat's third sense ("a guy") is not its first as a being
    ['beagle', 'animal'], // the tops name no one in particular
    ['nurse', 'person'],
    ['nurse', 'someone'],
    ['beagle', 'unit'], // above the tops
    ['piano', 'instrument'], // not a being
    ['dog', 'beagle'], // the other way round
  ]) t.notOk(l.kindOf(noun!, general!), `${general} is no kind of being a ${noun} is`);
});

t.test('through openMemory: "the dog" finds the memories that call it by its name', async (t) => {
  const open = (embedder: ReturnType<typeof localEmbedder> | null) => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'pinclaw.db'));
    mkdirSync(join(dir, 'workspace', 'memory'), { recursive: true });
    t.teardown(() => db.close());
    return openMemory({ db, workspace: join(dir, 'workspace'), cacheDir: join(dir, 'cache'), config: defaults().memory, count: (s: string) => s.length, embedder });
  };
  const facts = [
    'Pepper must not have onions, grapes or chocolate.',
    'Misty the cat gets the salmon pouches in the morning.', // "cat" is the word vectors' closest to "dog"
    'The children may not have fizzy drinks after six.',
    'Leave no food on the low kitchen shelf when guests visit.',
    'The fridge is cleaned out every Sunday evening.',
  ];
  const question = 'Which foods are bad for our dog?';
  const top = async (m: ReturnType<typeof open>) => (await m.search(question, { limit: 3 }))[0]!.text;

  // Without a memory that says what Pepper is, nothing links "the dog" to her.
  const without = open(localEmbedder());
  for (const f of facts) await without.store(f);
  t.not(await top(without), facts[0], 'without the naming memory, the answer is not first');

  const m = open(localEmbedder());
  for (const f of facts) await m.store(f);
  const naming = await m.store('Pepper is our spaniel, six years old, and sleeps in the hall.');
  t.equal(await top(m), facts[0], 'with it, the answer comes first');

  // Kept in step with writes: forgetting the naming memory takes the name away again.
  m.forget(naming.id);
  t.not(await top(m), facts[0], 'after forgetting it, no longer');
  await m.store('We have a spaniel called Pepper.');
  t.equal(await top(m), facts[0], 'another naming, stored later, works at once');

  // Keyword only (no embedder): the role's own word still finds the name.
  const depot = async (naming: boolean) => {
    const k = open(null);
    await k.store('Tom works at the depot every other week.');
    await k.store('The depot bus leaves at 23:40 from the depot.');
    if (naming) await k.store('Tom, my husband, hates being woken before noon.');
    return (await k.search('when does my husband go to the depot?', { limit: 3 })).map((h) => h.text.split(' ')[1]);
  };
  t.same(await depot(false), ['depot', 'works'], 'without the naming, "depot" twice wins');
  t.same((await depot(true)).filter((w) => w !== 'my'), ['works', 'depot'], 'with it, Tom\'s memory comes before the bus');
});
