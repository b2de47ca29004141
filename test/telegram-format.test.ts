// Markdown replies as Telegram HTML: every construct's exact output, escaping done exactly once, and
// the cutting into messages: checked on fixed cases and on generated replies at small limits (every
// part within the limit in what Telegram counts and in its fallback text, balanced, nothing lost or
// doubled but the repeated fences and table headers, no surrogate pair cut).
import t from 'tap';
import { escapeHtml, plainParts, telegramParts, visibleLength } from '../src/channels/telegram/format.js';
import { prng } from './support/prng.js';

const html = (md: string): string => telegramParts(md).map((p) => p.html).join('\n=====\n');
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const visible = (h: string): string => h.replace(/<[^>]*>/g, '').replace(/&(lt|gt|amp|quot);/g, (_, e: string) => ENTITIES[e]!);
const squash = (s: string): string => s.replace(/\s+/g, '');
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** null when `h` is HTML Telegram accepts: known tags, balanced, nested as Telegram allows, only its entities. */
function htmlProblem(h: string): string | null {
  const allowed = new Set(['b', 'i', 'u', 's', 'tg-spoiler', 'a', 'code', 'pre', 'blockquote']);
  const stack: string[] = [];
  for (const m of h.matchAll(/<(\/?)([a-z-]*)([^>]*)>|&(?:lt|gt|amp|quot);|[<>&]/g)) {
    if (m[2] === undefined) {
      if (m[0].length === 1) return `bare ${m[0]} at ${m.index}`;
      continue;
    }
    const [, close, name, attrs] = m;
    if (!allowed.has(name)) return `tag <${name}>`;
    if (close) {
      if (attrs || stack.pop() !== name) return `unbalanced </${name}> at ${m.index}`;
      continue;
    }
    const attrsOk = attrs === '' || (name === 'a' && /^ href="[^"<>]*"$/.test(attrs!)) || (name === 'code' && /^ class="language-[\w+#.-]+"$/.test(attrs!));
    if (!attrsOk) return `attributes ${attrs} on <${name}>`;
    const top = stack[stack.length - 1];
    if (top === 'code' || (top === 'pre' && name !== 'code')) return `<${name}> inside <${top}>`;
    if (stack.includes(name)) return `<${name}> inside itself`;
    stack.push(name);
  }
  return stack.length ? `unclosed ${stack.join(' ')}` : null;
}

t.test('the checker itself rejects what Telegram rejects', async (t) => {
  t.equal(htmlProblem('<b>a <i>b</i></b> &amp; <a href="https://x">l</a> <pre><code class="language-ts">x</code></pre>'), null);
  t.match(htmlProblem('<b>a</i>'), /unbalanced/);
  t.match(htmlProblem('<b>a'), /unclosed b/);
  t.match(htmlProblem('a < b'), /bare </);
  t.match(htmlProblem('a & b'), /bare &/);
  t.match(htmlProblem('<div>x</div>'), /tag <div>/);
  t.match(htmlProblem('<pre><b>x</b></pre>'), /inside <pre>/);
  t.match(htmlProblem('<blockquote><blockquote>x</blockquote></blockquote>'), /inside itself/);
});

t.test('escapeHtml and visibleLength', async (t) => {
  t.equal(escapeHtml('<a href="x">Tom & Jerry</a>'), '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&lt;/a&gt;');
  t.equal(escapeHtml('plain'), 'plain');
  t.equal(visibleLength('<b>a &amp; b</b>'), 5);
  t.equal(visibleLength('<pre><code class="language-ts">x &lt; y</code></pre>'), 5);
  t.equal(visibleLength('<a href="https://example.com/long">ab</a>😀'), 4, 'UTF-16 code units; the href is not counted');
});

t.test('inline formatting', async (t) => {
  t.equal(html('**b** *i* _i_ ~~s~~ `c`'), '<b>b</b> <i>i</i> <i>i</i> <s>s</s> <code>c</code>');
  t.equal(html('**bold _both_ and** plain'), '<b>bold <i>both</i> and</b> plain');
  t.equal(html('line one  \nline two\nline three'), 'line one\nline two\nline three', 'hard and soft breaks stay line breaks');
  t.equal(html('a \\*not em\\* \\_x\\_'), 'a *not em* _x_');
});

t.test('headings are bold lines; paragraphs are one blank line apart', async (t) => {
  t.equal(html('# Title\nText under it.\n\n\n\nNext paragraph.'), '<b>Title</b>\n\nText under it.\n\nNext paragraph.');
  t.equal(html('## Sub **bold** `code`'), '<b>Sub bold <code>code</code></b>', 'no <b> inside <b>');
  t.equal(html('Setext\n======\nbody'), '<b>Setext</b>\n\nbody');
});

t.test('code blocks: fenced with and without a language, indented; their text is literal', async (t) => {
  t.equal(html('```python\nif a < b and c > d:\n    print("&amp;")\n```'), '<pre><code class="language-python">if a &lt; b and c &gt; d:\n    print(&quot;&amp;amp;&quot;)</code></pre>');
  t.equal(html('~~~\nplain <b>\n~~~'), '<pre><code>plain &lt;b&gt;</code></pre>');
  t.equal(html('Before:\n\n    indented\n      more'), 'Before:\n\n<pre><code>indented\n  more</code></pre>');
  t.equal(html('```js title="x.js"\nx\n```'), '<pre><code class="language-js">x</code></pre>', 'only the language word');
  t.equal(html('```"><script>\nx\n```'), '<pre><code>x</code></pre>', 'an info string that is no language is dropped');
  t.equal(html('`a &amp; <b>`'), '<code>a &amp;amp; &lt;b&gt;</code>', 'code spans are literal too');
});

t.test('links and images: only http, https, tg and mailto become links', async (t) => {
  t.equal(html('[site](https://example.com/a?x=1&y="2") and [mail](mailto:me@example.com)'), '<a href="https://example.com/a?x=1&amp;y=&quot;2&quot;">site</a> and <a href="mailto:me@example.com">mail</a>');
  t.equal(html('[tg](tg://resolve?domain=pinclaw) [**bold** link](http://x.org "title")'), '<a href="tg://resolve?domain=pinclaw">tg</a> <a href="http://x.org"><b>bold</b> link</a>');
  t.equal(html('[bad](javascript:alert(1)) [rel](/path) [ftp](ftp://host/f)'), 'bad rel ftp');
  t.equal(html('[amp](https://e.com/?a=1&amp;b=2)'), '<a href="https://e.com/?a=1&amp;b=2">amp</a>', 'a reference in the destination is decoded, then escaped once');
  t.equal(html('![a photo](https://e.com/p.png) ![](https://e.com/q.png) ![x](data:image/png;base64,AAA)'), '<a href="https://e.com/p.png">a photo</a> <a href="https://e.com/q.png">https://e.com/q.png</a> x');
  t.equal(html('see <https://e.com/x> or https://e.com/y.'), 'see <a href="https://e.com/x">https://e.com/x</a> or <a href="https://e.com/y">https://e.com/y</a>.');
});

t.test('blockquotes, nested ones flattened (Telegram nests no blockquote)', async (t) => {
  t.equal(html('> quoted **bold**\n> next line\n\nafter'), '<blockquote>quoted <b>bold</b>\nnext line</blockquote>\n\nafter');
  t.equal(html('> outer\n>\n> > inner'), '<blockquote>outer\n\ninner</blockquote>');
  t.equal(html('> ```sh\n> ls\n> ```'), '<blockquote><pre><code class="language-sh">ls</code></pre></blockquote>');
});

t.test('lists: bullets, numbers, nesting by two spaces, tasks, continuation lines', async (t) => {
  t.equal(html('- one\n- two\n  - nested\n    - deeper\n- three'), '• one\n• two\n  • nested\n    • deeper\n• three');
  t.equal(html('3. third\n4. fourth\n   1. sub'), '3. third\n4. fourth\n  1. sub');
  t.equal(html('- [x] done\n- [ ] todo'), '• ☑ done\n• ☐ todo');
  t.equal(html('- first line\n  continues\n\n  second paragraph\n- **bold** item'), '• first line\n  continues\n  second paragraph\n• <b>bold</b> item');
  t.equal(html('- item:\n\n  ```sh\n  make\n  ```'), '• item:\n<pre><code class="language-sh">make</code></pre>');
  t.equal(html('text\n\n- a\n- b\n\nmore'), 'text\n\n• a\n• b\n\nmore');
});

t.test('horizontal rules', async (t) => {
  t.equal(html('above\n\n---\n\nbelow\n\n***'), 'above\n\n———\n\nbelow\n\n———');
});

t.test('tables: a <pre> block with the columns padded to one width and aligned', async (t) => {
  const md = '| Name | Qty | Note |\n|:-----|----:|:----:|\n| apple | 3 | ok |\n| **kiwi** | 12 | [fresh](https://e.com) |';
  t.equal(html(md), '<pre>Name  | Qty | Note\n------+-----+------\napple |   3 |  ok\nkiwi  |  12 | fresh</pre>');
  t.equal(html('| k | v |\n|---|---|\n| 日本 | 😀 |\n| a < b | x |'), '<pre>k     | v\n------+---\n日本  | 😀\na &lt; b | x</pre>', 'wide characters count two columns');
  t.equal(html('| a | b |\n|---|---|\n| only |'), '<pre>a    | b\n-----+--\nonly |</pre>', 'a short row is padded, not broken');
});

t.test('escaping happens exactly once; entities in text are decoded first', async (t) => {
  t.equal(html('a < b && c > d'), 'a &lt; b &amp;&amp; c &gt; d');
  t.equal(html('&amp; &lt;b&gt; &copy; &#169; &#x1F600; &quot;q&quot; &bogus; AT&T'), '&amp; &lt;b&gt; © © 😀 &quot;q&quot; &amp;bogus; AT&amp;T');
  t.equal(html('&amp;amp;'), '&amp;amp;', 'decoded once: the text is "&amp;"');
  t.equal(html('inline <script>alert("x")</script> tag'), 'inline &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; tag');
  t.equal(html('<script>\nalert(1 < 2)\n</script>'), '&lt;script&gt;\nalert(1 &lt; 2)\n&lt;/script&gt;', 'an HTML block is text');
  t.equal(html('<div class="x">\n<b>not bold</b>\n</div>'), '&lt;div class=&quot;x&quot;&gt;\n&lt;b&gt;not bold&lt;/b&gt;\n&lt;/div&gt;');
  t.equal(html('[a](https://e.com)<br>b'), '<a href="https://e.com">a</a>&lt;br&gt;b');
});

t.test('one part: the HTML and the whole markdown as its fallback', async (t) => {
  const md = '\n\n# Hi\r\n\r\nSome *text*.\r\n\n';
  t.same(telegramParts(md), [{ html: '<b>Hi</b>\n\nSome <i>text</i>.', text: '# Hi\n\nSome *text*.' }]);
  t.same(telegramParts(''), []);
  t.same(telegramParts('  \n\n \t \n'), [], 'whitespace only: nothing to send');
  t.same(plainParts(' \n \n'), []);
  t.throws(() => telegramParts('x', 10), RangeError);
});

t.test('cuts: between blocks first, then lines, then spaces, then anywhere', async (t) => {
  const p = (c: string) => c.repeat(30);
  t.same(telegramParts(`${p('a')}\n\n${p('b')}\n\n${p('c')}`, 70), [
    { html: `${p('a')}\n\n${p('b')}`, text: `${p('a')}\n\n${p('b')}` },
    { html: p('c'), text: p('c') },
  ]);
  t.same(telegramParts(`**${p('a')}**\n\n${p('b')}\n${p('c')}`, 70).map((x) => x.html), [`<b>${p('a')}</b>`, `${p('b')}\n${p('c')}`], 'a block that fits is not split');
  t.same(telegramParts(`${p('a')}\n${p('b')}\n${p('c')}`, 70).map((x) => x.text), [`${p('a')}\n${p('b')}`, p('c')], 'between lines of a paragraph');
  const words = Array.from({ length: 40 }, (_, k) => `w${k}`).join(' ');
  const byWord = telegramParts(`Say *${words}*`, 50);
  t.ok(byWord.length > 2);
  for (const part of byWord) {
    t.ok(visibleLength(part.html) <= 50 && part.text.length <= 50);
    t.match(part.html, /^(Say )?<i>[\w ]+<\/i>$/, 'the emphasis is closed and reopened at each cut');
    t.notMatch(part.text, /^ | $/);
  }
  t.equal(byWord.map((x) => visible(x.html)).join(' '), `Say ${words}`, 'cut at spaces: no word is broken');
  t.equal(byWord.map((x) => x.text).join(' '), `Say *${words}*`);
  const long = 'x'.repeat(120);
  t.same(telegramParts(long, 50).map((x) => x.html), ['x'.repeat(40), 'x'.repeat(40), 'x'.repeat(40)], 'a word longer than a part is cut evenly');
});

t.test('a code block cut across parts is closed and reopened with its language', async (t) => {
  const lines = Array.from({ length: 40 }, (_, k) => `let v${k} = ${k} < ${k + 1} && ok;`);
  const md = `Intro.\n\n\`\`\`ts\n${lines.join('\n')}\n\`\`\`\n\nOutro.`;
  const parts = telegramParts(md, 200);
  t.ok(parts.length >= 5);
  const code: string[] = [];
  parts.forEach((part, k) => {
    t.ok(visibleLength(part.html) <= 200 && part.text.length <= 200, `part ${k} fits`);
    t.equal(htmlProblem(part.html), null);
    const m = /<pre><code class="language-ts">([^<]*)<\/code><\/pre>/.exec(part.html);
    if (!m) return;
    code.push(visible(m[1]!));
    t.match(part.text, /^```ts\n[^`]*\n```(\n\nOutro\.)?$/, `part ${k}'s fallback opens and closes its fence`);
  });
  t.equal(code.join('\n'), lines.join('\n'), 'every line once, in order, none cut');
  t.same(parts[0], { html: 'Intro.', text: 'Intro.' }, 'the block that does not fit starts a new part');
  t.match(parts[parts.length - 1]!.html, /<\/code><\/pre>\n\nOutro\.$/);
});

t.test('a table cut across parts repeats its header', async (t) => {
  const rows = Array.from({ length: 30 }, (_, k) => `| item ${k} | ${k * 7} |`);
  const md = `| Name | Qty |\n|------|----:|\n${rows.join('\n')}`;
  const parts = telegramParts(md, 200);
  t.ok(parts.length >= 4);
  const seen: string[] = [];
  for (const part of parts) {
    t.ok(visibleLength(part.html) <= 200 && part.text.length <= 200);
    const lines = visible(part.html).split('\n');
    t.same(lines.slice(0, 2), ['Name    | Qty', '--------+----'], 'starts with the header');
    t.ok(lines.length > 2, 'and holds rows');
    seen.push(...lines.slice(2));
    t.ok(part.text.startsWith('| Name | Qty |\n|------|----:|\n| item '), 'the fallback too');
  }
  t.same(seen, rows.map((_, k) => `item ${k}`.padEnd(7) + ` | ${String(k * 7).padStart(3)}`));
  t.same(telegramParts('- i\n\n  | h1 | h2 |\n  |-|-|\n  | ab | cd |\n  | ef | gh |', 36), [
    { html: '• i', text: '- i' },
    { html: '<pre>h1 | h2\n---+---\nab | cd</pre>', text: '  | h1 | h2 |\n  |-|-|\n  | ab | cd |' },
    { html: '<pre>h1 | h2\n---+---\nef | gh</pre>', text: '| h1 | h2 |\n|-|-|\n  | ef | gh |' },
  ], 'a header never ends a part without a row under it');
});

t.test('surrogate pairs are never cut', async (t) => {
  for (const md of ['😀'.repeat(300), `a${'😀'.repeat(301)}`, `ab ${'👍🏽'.repeat(100)} c`]) {
    for (const limit of [17, 50, 51]) {
      const parts = telegramParts(md, limit);
      for (const part of parts) {
        t.notMatch(part.html, LONE_SURROGATE);
        t.notMatch(part.text, LONE_SURROGATE);
        t.ok(visibleLength(part.html) <= limit && part.text.length <= limit);
      }
      t.equal(squash(parts.map((x) => x.html).join('')), squash(md));
      for (const piece of plainParts(md, limit)) t.notMatch(piece, LONE_SURROGATE);
    }
  }
});

t.test('plainParts: the same preferences for text that is not markdown', async (t) => {
  const p = (c: string) => c.repeat(30);
  t.same(plainParts(`${p('a')}\n${p('b')}\n\n${p('c')}`, 70), [`${p('a')}\n${p('b')}`, p('c')]);
  t.same(plainParts(`${p('a')}\n${p('b')}\n${p('c')}`, 70), [`${p('a')}\n${p('b')}`, p('c')]);
  t.same(plainParts(`**not markdown** <b> & ${p('x')}`, 4096), [`**not markdown** <b> & ${p('x')}`], 'returned as is');
  t.same(plainParts('one two three four five six seven eight', 16), ['one two three', 'four five six', 'seven eight']);
  t.same(plainParts('x'.repeat(40), 16), ['x'.repeat(13), 'x'.repeat(14), 'x'.repeat(13)]);
  t.same(plainParts('a\r\n\r\n\r\nb', 16), ['a\n\n\nb'], 'blank lines inside a part are kept');
});

// Generated replies: a mix of every construct, long words, emoji, entities, at small limits.
type Rnd = () => number;
const pick = <T>(r: Rnd, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rnd, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const VOCAB = ['alpha', 'beta', 'gamma', 'sensor', 'GPIO', 'pin', '42', 'a < b', 'x && y', '&amp;', '&copy;', '😀', '👍🏽', '日本語', '**bold words**', '*italic*', '~~gone~~', '`code < x`', '[a link](https://ex.com/a?b=1&c=2)', '<tag>', '"quoted"', 'naïve'];
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz0123456789é😀'];

function longWord(r: Rnd): string {
  return Array.from({ length: int(r, 30, 130) }, () => pick(r, LETTERS)).join('');
}
const sentence = (r: Rnd, n: number): string => Array.from({ length: n }, () => (r() < 0.04 ? longWord(r) : pick(r, VOCAB))).join(' ');

interface Doc { md: string; heads: string[]; srcHeads: string[] }

function generate(r: Rnd): Doc {
  const blocks: string[] = [];
  const heads: string[] = [];
  const srcHeads: string[] = [];
  for (let b = int(r, 1, 10); b > 0; b--) {
    const kind = int(r, 0, 7);
    if (kind === 0) blocks.push(`${'#'.repeat(int(r, 1, 3))} ${sentence(r, int(r, 1, 6))}`);
    else if (kind === 1) {
      const ordered = r() < 0.4;
      let depth = 0;
      blocks.push(Array.from({ length: int(r, 1, 8) }, (_, k) => {
        depth = k === 0 ? 0 : Math.max(0, Math.min(depth + int(r, -1, 1), 2));
        return `${'   '.repeat(depth)}${ordered ? `${k + 1}.` : '-'} ${sentence(r, int(r, 1, 12))}`;
      }).join('\n'));
    } else if (kind === 2) {
      const lang = pick(r, ['ts', 'python', '', 'sh']);
      const lines = Array.from({ length: int(r, 1, 16) }, (_, k) => pick(r, [`const v${k} = ${k} < ${k * 2} && "s";`, `    return x & y; // ${k}`, longWord(r), '', '😀 <b>not bold</b>']));
      if (!lines[lines.length - 1]) lines.push('end();');
      blocks.push(`\`\`\`${lang}\n${lines.join('\n')}\n\`\`\``);
      srcHeads.push(`\`\`\`${lang}`, '```');
    } else if (kind === 3) {
      const cols = int(r, 2, 3);
      const header = `| ${Array.from({ length: cols }, (_, j) => `Column${j}`).join(' | ')} |`;
      const delim = `|${Array.from({ length: cols }, () => pick(r, ['---', ':--', '--:', ':-:'])).join('|')}|`;
      const cells = ['alpha', '42', '😀', '日本語', '**b**', 'a & b', '`x`', '7.5'];
      const rows = Array.from({ length: int(r, 1, 14) }, () => `| ${Array.from({ length: cols }, () => pick(r, cells)).join(' | ')} |`);
      const table = [header, delim, ...rows].join('\n');
      blocks.push(table);
      heads.push(squash(visible(telegramParts(table, 1_000_000)[0]!.html).split('\n').slice(0, 2).join('')));
      srcHeads.push(squash(`${header}\n${delim}`));
    } else if (kind === 4) blocks.push(Array.from({ length: int(r, 1, 4) }, () => `> ${sentence(r, int(r, 1, 14))}`).join('\n'));
    else if (kind === 5) blocks.push('---');
    else blocks.push(Array.from({ length: int(r, 1, 3) }, () => sentence(r, int(r, 1, 30))).join('\n'));
  }
  return { md: blocks.join('\n\n'), heads, srcHeads };
}

/**
 * Whether `pieces` (whitespace removed) make up `whole`, each after the first maybe starting with one
 * of `prefixes`, each before the last maybe ending with one of `suffixes`: -1 if not, else how many
 * pieces needed a prefix (a reopened fence, a repeated header).
 */
function tiles(whole: string, pieces: string[], prefixes: string[], suffixes: string[]): number {
  let at = 0, prefixed = 0;
  const ok = pieces.every((piece, k) => {
    for (const pre of k ? ['', ...prefixes] : ['']) {
      for (const suf of k < pieces.length - 1 ? ['', ...suffixes] : ['']) {
        if (piece.length < pre.length + suf.length || !piece.startsWith(pre) || !piece.endsWith(suf)) continue;
        const core = piece.slice(pre.length, piece.length - suf.length);
        if (whole.startsWith(core, at)) {
          at += core.length;
          if (pre) prefixed++;
          return true;
        }
      }
    }
    return false;
  });
  return ok && at === whole.length ? prefixed : -1;
}

t.test('generated replies at small limits: every part fits, is balanced, and nothing is lost or doubled', async (t) => {
  const r = prng(20260401);
  let cuts = 0, reopened = 0, repeated = 0;
  for (let n = 0; n < 80; n++) {
    const doc = generate(r);
    const whole = telegramParts(doc.md, 1_000_000);
    t.equal(whole.length, 1);
    for (const limit of [50, 80, 200, 1000]) {
      const parts = telegramParts(doc.md, limit);
      cuts += parts.length - 1;
      const problems: string[] = [];
      parts.forEach((part, k) => {
        const where = `doc ${n} limit ${limit} part ${k}`;
        if (visibleLength(part.html) > limit) problems.push(`${where}: html is ${visibleLength(part.html)} long`);
        if (part.text.length > limit) problems.push(`${where}: text is ${part.text.length} long`);
        if (!part.html.trim() || !part.text.trim()) problems.push(`${where}: empty`);
        const bad = htmlProblem(part.html);
        if (bad) problems.push(`${where}: ${bad}`);
        if (LONE_SURROGATE.test(part.html) || LONE_SURROGATE.test(part.text)) problems.push(`${where}: a surrogate pair is cut`);
      });
      const headers = tiles(squash(visible(whole[0]!.html)), parts.map((p) => squash(visible(p.html))), doc.heads, []);
      if (headers < 0) problems.push(`limit ${limit}: the parts' visible text is not the whole's\n${doc.md}`);
      const heads = tiles(squash(doc.md), parts.map((p) => squash(p.text)), doc.srcHeads, ['```']);
      if (heads < 0) problems.push(`limit ${limit}: the parts' fallback texts are not the markdown\n${doc.md}`);
      repeated += Math.max(0, headers);
      reopened += Math.max(0, heads);
      t.same(problems, [], `doc ${n} at ${limit}`);
      if (problems.length) return;
    }
  }
  t.ok(cuts > 1000, `many cuts were made (${cuts})`);
  t.ok(repeated > 50, `table headers were repeated (${repeated} times)`);
  t.ok(reopened > repeated + 50, `fences were reopened and headers repeated in the fallback (${reopened} times)`);
});

t.test('arbitrary input: every part still fits, is balanced, and keeps surrogate pairs whole', async (t) => {
  const pieces = [...'ab c\n\n\n- 1. > # * _ ~ ` | --- [ ] ( ) ! < > & ; \\ \t 😀 é', '```', '\n```py\n', '\n| a | b |\n|---|---|\n', '\n- [x] ', '\n    code', 'http://x.y', '&amp;', '&#x1F600;', '<b>', '</b>', 'https://example.com/a/long/path/to/something'];
  const r = prng(7);
  const problems: string[] = [];
  for (let n = 0; n < 400; n++) {
    const md = Array.from({ length: int(r, 0, 400) }, () => pick(r, pieces)).join('');
    for (const limit of [16, 40, 300]) {
      for (const part of telegramParts(md, limit)) {
        const bad = htmlProblem(part.html) ?? (visibleLength(part.html) > limit || part.text.length > limit ? 'too long' : null)
          ?? (!part.html.trim() || !part.text.trim() ? 'empty' : null) ?? (LONE_SURROGATE.test(part.html + part.text) ? 'surrogate' : null);
        if (bad) problems.push(`${JSON.stringify(md)} at ${limit}: ${bad} in ${JSON.stringify(part)}`);
      }
      for (const piece of plainParts(md, limit)) {
        if (piece.length > limit || !piece.trim() || LONE_SURROGATE.test(piece)) problems.push(`plain ${JSON.stringify(md)} at ${limit}: ${JSON.stringify(piece)}`);
      }
    }
  }
  t.same(problems.slice(0, 5), []);
});

t.test('a link whose address alone is longer than a part: the link is whole, its fallback holds what fits', async (t) => {
  const url = `https://example.com/${'a'.repeat(150)}`;
  const parts = telegramParts(`see [the docs](${url}) here`, 64);
  t.equal(parts.map((p) => p.html).join(' '), `see <a href="${url}">the</a> <a href="${url}">docs</a> here`, 'no word of it is cut');
  for (const part of parts) t.ok(part.text.length <= 64 && visibleLength(part.html) <= 64);
  t.equal(parts[0]!.text, 'see [the');
});

t.test('the tiling check fails when text is lost or doubled', async (t) => {
  t.equal(tiles('abcdef', ['abc', 'def'], [], []), 0);
  t.equal(tiles('abcdef', ['abc', 'ef'], [], []), -1);
  t.equal(tiles('abcdef', ['abc', 'cdef'], [], []), -1);
  t.equal(tiles('abcdef', ['ab', 'cd', 'ef'], [], []), 0);
  t.equal(tiles('H1abH1cd', ['H1ab', 'H1cd'], ['H1'], []), 0, 'a header that is in the source too is not a repeat');
  t.equal(tiles('H1abcd', ['H1ab', 'H1cd'], ['H1'], []), 1);
  t.equal(tiles('H1abcd', ['H1ab', 'XXcd'], ['H1'], []), -1);
  t.equal(tiles('```ab```', ['```a```', '```b```'], ['```'], ['```']), 1);
});
