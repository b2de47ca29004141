// The household's names: a memory that says "Biscuit is our beagle" or "Jonas, Elena's partner, ..."
// tells the agent what Biscuit and Jonas are, and a question about "the dog" or "my partner" should
// find Biscuit's and Jonas's other memories, which name them only by name ("Biscuit must not have
// grapes"). Neither the words nor the word vectors can: a name shares nothing with what it names,
// and a pet's name is often a common word ("Biscuit", "Pepper") whose vector means the common word.
//
// This module reads the naming sentences from the memories' text and, for a query, says which names
// its words stand for. It is plain text patterns over English, the household's likely forms:
//   "Biscuit is our beagle", "Jonas is a nurse at ..."            (a name, "is", a determiner, a noun)
//   "Pixel, the grey cat, has ...", "Jonas, Elena's partner, ..." (a name, then an apposition)
//   "their daughter Hannah", "The window cleaner, Dave, ..."     (a determiner and a noun, then a name)
//   "a cat called Pixel", "my dog is called Biscuit"            (a noun, "called" or "named", a name)
// A noun phrase is at most three lower-case words, and its last word is the role. Capitalised words
// at the start of a sentence are only names where a pattern says so.
import { foldText, splitTerms } from '../native/ranking-text.js';
import { baseForms } from './word-links.js';

export interface Naming {
  /** the name as written ("Biscuit") */
  name: string;
  /** the noun the text gives it, lower case ("beagle") */
  role: string;
  /** the role is someone else's ("their daughter Hannah", "his sister Katrin"), not the household's */
  others?: true;
}

/** Words that end a noun phrase: what follows them is not part of the role. */
const PHRASE_END = new Set(`at in on of for from with who whom whose which that and or but to by as is was are were has have had since until when where while
than about after before into near under over who's`.split(/\s+/));

/** The definite determiners and possessives; with "a" and "an", those that open a role's noun phrase. */
const DEFINITE = String.raw`(?:[Oo]ur|[Mm]y|[Tt]he|[Tt]heir|[Hh]is|[Hh]er|[A-Z][a-z]+(?:'s|\u2019s))`;
const DETERMINER = String.raw`(?:${DEFINITE}|[Aa]n?)`;
const NAME = String.raw`([A-Z][a-z]+(?:-[A-Z][a-z]+)?)`;
/** Up to three lower-case words (letters and hyphens). */
const PHRASE = String.raw`((?:[a-z][a-z-]* ){0,2}[a-z][a-z-]*)`;

// Each pattern is tried at every position of a text; the phrase is cut at PHRASE_END below.
const IS_A = new RegExp(String.raw`(?:^|[^\w'\u2019])${NAME} is ${DETERMINER} ${PHRASE}`, 'g');
const APPOSITION = new RegExp(String.raw`(?:^|[^\w'\u2019])${NAME}, ${DETERMINER} ${PHRASE}(?=[,;:.!?]|$)`, 'g');
// The role first takes a definite determiner ("a grey Nissan Leaf" is a make, not a name), and the
// name is either right after the noun and not followed by another capitalised word or a number ("our
// daughter Hannah", not "the old Pi 3"), or set off by commas on both sides, a surname allowed ("The
// window cleaner, Dave, comes"; "Elena's mother, Ruth Haller, lives"; not "the choir, Wednesdays 19:30").
// "We have a cat called Pixel", "my dog is called Biscuit".
const CALLED = new RegExp(String.raw`(?:^|[^\w'\u2019])${DETERMINER} ${PHRASE} (?:called|named) ${NAME}\b`, 'g');
const CALLED_WORD = / (?:called|named) [A-Z]/;
const ROLE_FIRST = new RegExp(String.raw`(?:^|[^\w'\u2019])(${DEFINITE}) ${PHRASE}(?: ${NAME}(?![\w'\u2019-]| [A-Z0-9])|, ${NAME}(?: [A-Z][a-z]+)?,)`, 'g');

/** Determiners that make a role someone else's: "their daughter Hannah" is no daughter of "my daughter". */
const THIRD_PERSON = /^(?:their|his|her)$/i;

/** Words capitalised at a sentence's start that are no names ("The heater is a ..."). */
const NOT_NAMES = new Set(`the a an this that these those it its our my their his her your we they he she there here what which who when where why how
every each all some any no none both either neither another other such one`.split(/\s+/));

/** The role of a phrase: its last word before a word that ends the phrase. */
function roleOf(phrase: string, whole = false): string | null {
  const words: string[] = [];
  for (const w of phrase.split(' ')) {
    if (PHRASE_END.has(w)) {
      if (whole) return null;
      break;
    }
    words.push(w);
  }
  const last = words.at(-1);
  return last && last.length >= 2 ? last : null;
}

/** The namings in a text. */
export function namingsIn(text: string): Naming[] {
  const out: Naming[] = [];
  // `whole`: the name follows the phrase, so every word of it must belong to the role ("the leisure
  // centre in Hebden Bridge" names no centre Hebden).
  const add = (name: string | undefined, phrase: string | undefined, whole = false, determiner = ''): void => {
    if (!name || !phrase || NOT_NAMES.has(name.toLowerCase())) return;
    const role = roleOf(phrase, whole);
    if (!role || out.some((n) => n.name === name && n.role === role)) return;
    out.push(THIRD_PERSON.test(determiner) ? { name, role, others: true } : { name, role });
  };
  // On the whole text: no pattern crosses a sentence's or a clause's end, as their words are letters
  // and single spaces (and ROLE_FIRST's commas) only.
  // (A plain substring test first where one exists: irregexp tries a pattern that starts with a
  // character class at every position, and every chunk is read at the first search.)
  if (text.includes(' is ')) for (const m of text.matchAll(IS_A)) add(m[1], m[2]);
  for (const m of text.matchAll(APPOSITION)) add(m[1], m[2]);
  for (const m of text.matchAll(ROLE_FIRST)) add(m[3] ?? m[4], m[2], true, m[1]);
  if (CALLED_WORD.test(text)) for (const m of text.matchAll(CALLED)) add(m[2], m[1]);
  return out;
}

/** Whether `general` names a kind of being that `noun` is ("dog" for "beagle"): WordRelation.kindOf. */
export type KindOf = (noun: string, general: string) => boolean;

/** The words a query marks as the household's own: the one or two words after "my" or "our". */
export function ownWords(query: string): Set<string> {
  const out = new Set<string>();
  for (const m of foldText(query).matchAll(/\b(?:my|our)\s+([a-z]+)(?:\s+([a-z]+))?/g)) {
    out.add(m[1]!);
    if (m[2]) out.add(m[2]);
  }
  return out;
}

/**
 * Which names a query's words stand for: each query word that is a role (an inflection of it
 * counts) or a more general word for one (kindOf: WordNet's hypernyms, word-links.ts) maps to the
 * folded names given that role. A query word that is itself the name maps to nothing new, and a word
 * the query marks as its own ("my daughter") is not someone else's role ("their daughter Hannah").
 */
export function namesFor(query: string, queryWords: readonly string[], namings: readonly Naming[], kindOf: KindOf | null): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (namings.length === 0) return out;
  // By role, so that each role is compared with each query word once, however many names it has.
  const byRole = new Map<string, Naming[]>();
  for (const n of namings) {
    const list = byRole.get(n.role);
    if (list) list.push(n);
    else byRole.set(n.role, [n]);
  }
  const own = namings.some((n) => n.others) ? ownWords(query) : new Set<string>();
  for (const w of queryWords) {
    const forms = baseForms(w);
    for (const [role, named] of byRole) {
      if (!baseForms(role).some((f) => forms.includes(f)) && !kindOf?.(role, w)) continue;
      for (const n of named) {
        if (n.others && own.has(w)) continue;
        const name = splitTerms(foldText(n.name));
        if (name.includes(w)) continue;
        let s = out.get(w);
        if (!s) out.set(w, (s = new Set()));
        for (const term of name) s.add(term);
      }
    }
  }
  return out;
}
