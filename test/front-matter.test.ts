// Skill front matter: the subset skills use, exact values, the `yaml` package as the reference for
// every block-scalar form, CRLF files, and input that must not hang or throw.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { frontMatter } from '../src/skills/front-matter.js';
import { readSkills } from '../src/agent/prompt.js';
import { tempDir } from './support/proc.js';

const doc = (yaml: string) => `---\n${yaml}\n---\n# body\n`;

t.test('scalars: plain, quoted, comments', async (t) => {
  t.same(frontMatter(doc('name: weather\ndescription: Looks up the forecast # a comment\nother: "a \\"q\\"\\n\\u00e9"\nsingle: \'it\'\'s\'\nhash: a#b')), {
    name: 'weather', description: 'Looks up the forecast', other: 'a "q"\né', single: "it's", hash: 'a#b',
  });
  t.same(frontMatter(doc('name: [a, b]\nref: *anchor\ndescription: ok')), { description: 'ok' }, 'flow collections and aliases are skipped');
  t.same(frontMatter('name: x\n'), {}, 'no opening line: no front matter');
  t.same(frontMatter('---\nname: x\n'), {}, 'no closing line: no front matter');
});

const blocks = [
  'description: >\n  Looks up the forecast\n  for a city.\nname: w',
  'description: |\n  line one\n  line two\n\nname: w',
  'description: >-\n  folded\n  strip\n\n\nname: w',
  'description: >+\n  folded\n  keep\n\n\nname: w',
  'description: |-\n  literal\n  strip\n',
  'description: |+\n  literal\n  keep\n\n',
  'description: >\n  para one\n  continues\n\n  para two\n\n\n  para three\nname: w',
  'description: >\n  normal\n    more indented\n    still\n  normal again\n  and joined\nname: w',
  'description: >\n  a\n\n    more after blank\n\n  b\n',
  'description: |2\n    two extra spaces kept\n  base\n',
  'description: >\n\n  leading blank\n  line\n',
  'description: |\n  keeps: colons # and hashes\n  "quotes" too\n',
  'description: >\nname: empty block',
];

t.test('block scalars equal what the yaml package reads', async (t) => {
  for (const y of blocks) {
    // The body between the two --- lines is the text and the line end before the closing one.
    const want = parse(`${y}\n`) as Record<string, unknown>;
    const got = frontMatter(doc(y));
    t.same(got, Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v === null ? '' : String(v)])), JSON.stringify(y));
  }
  t.equal(frontMatter(doc(blocks[0]!)).description, 'Looks up the forecast for a city.\n');
});

t.test('CRLF files read the same', async (t) => {
  for (const y of blocks) t.same(frontMatter(doc(y).replace(/\n/g, '\r\n')), frontMatter(doc(y)), JSON.stringify(y));
});

t.test('hostile front matter returns', async (t) => {
  const long = `---\n${'k: v\n'.repeat(100_000)}`;
  t.same(frontMatter(long), {}, 'unclosed and huge: nothing, quickly');
  const deep = doc(`description: >\n${'  x\n'.repeat(1500)}`);
  t.equal(frontMatter(deep).description, `${Array(1500).fill('x').join(' ')}\n`);
  t.same(frontMatter(doc('description: "unterminated')), {});
  t.same(frontMatter(doc(':\n: :\n---x\n')), {});
});

t.test('skills in the prompt use it', async (t) => {
  const ws = tempDir();
  mkdirSync(join(ws, 'skills', 'weather'), { recursive: true });
  writeFileSync(join(ws, 'skills', 'weather', 'SKILL.md'), '---\r\nname: weather\r\ndescription: >\r\n  Looks up the forecast\r\n  for a city.\r\n---\r\nbody');
  mkdirSync(join(ws, 'skills', 'bare'));
  writeFileSync(join(ws, 'skills', 'bare', 'SKILL.md'), 'no front matter');
  const skills = readSkills(ws);
  t.same(skills.map((s) => [s.name, s.description]), [['bare', '(no description)'], ['weather', 'Looks up the forecast for a city.']]);
});
