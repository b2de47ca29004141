// HTML to readable text (htmlparser2 underneath): the readable-text rules one by one, entities and
// charsets as the HTML spec has them, and hostile pages that must come back whole and correct.
import t from 'tap';
import { htmlToText, MAX_DEPTH, snippetToText } from '../src/tools/web/html.js';
import { decodeBody } from '../src/tools/web/charset.js';

const text = async (html: string, base?: string) => (await htmlToText(html, base)).text;

t.test('title, headings, paragraphs, line breaks', async (t) => {
  const page = await htmlToText('<html><head><title> The  &amp; Title </title><meta charset=utf-8></head><body><h1>Top</h1><p>One <b>bold</b>\n  word.</p><h3>Three</h3>a<br>b<hr>c</body></html>');
  t.equal(page.title, 'The & Title');
  t.equal(page.text, '# Top\n\nOne bold word.\n\n### Three\n\na\nb\n---\nc');
  t.equal(page.stopped, undefined);
});

t.test('two line breaks in a row leave one blank line, however many there are', async (t) => {
  t.equal(await text('one<br><br>two<br> <br><br><br>three<br></p>'), 'one\n\ntwo\n\nthree');
  t.equal(await text('<br><br>first'), 'first', 'not at the start');
});

t.test('what is dropped: scripts, styles, head, nav, footer, templates, svg, buttons', async (t) => {
  const html = '<nav><a href="/">Home</a></nav><script>var x = "<p>no</p>";</script><style>p{}</style><noscript>enable js</noscript><template><p>t</p></template><svg><text>s</text></svg><main><p>kept</p><button>Click</button></main><footer>© 2026</footer>';
  t.equal(await text(html), 'kept');
});

t.test('lists: bullets, numbers, nesting, start', async (t) => {
  t.equal(await text('<ul><li>one<li>two<ul><li>two a</li></ul></li><li>three</ul>'), '- one\n- two\n  - two a\n- three');
  t.equal(await text('<ol start="4"><li>d</li><li>e<ol><li>x</li><li>y</li></ol></li></ol>'), '4. d\n5. e\n  1. x\n  2. y');
});

t.test('links: every quoting, relative ones made absolute, useless ones left bare', async (t) => {
  const html = `<p><a href="/a">double</a> <a href='b.html'>single</a> <a href=c?x=1&amp;y=2>unquoted</a> <a href="#top">anchor</a> <a href="javascript:go()">script</a> <a href="https://ex.org/d">https://ex.org/d</a> <a href="/e"></a><a href="mailto:me@ex.org">mail</a></p>`;
  t.equal(await text(html, 'https://ex.org/dir/page.html'), 'double (https://ex.org/a) single (https://ex.org/dir/b.html) unquoted (https://ex.org/dir/c?x=1&y=2) anchor script https://ex.org/d mail (mailto:me@ex.org)');
  t.equal(await text('<a href="/a">rel</a>'), 'rel (/a)', 'without a base the href is kept as written');
});

t.test('tables: a row per line, cells joined', async (t) => {
  const html = '<table><caption>Prices</caption><tr><th>Item</th><th>Cost</th></tr><tr><td> Tea </td><td>3 &euro;</td></tr><tr><td>Cake<td>4 &euro;</tr></table><p>after</p>';
  t.equal(await text(html), 'Prices\nItem | Cost\nTea | 3 €\nCake | 4 €\n\nafter');
});

t.test('pre keeps its whitespace; images give their alt text', async (t) => {
  t.equal(await text('<p>x</p><pre>  a  b\n    c</pre><p>y <img src=i.png alt="a cat"> z</p>'), 'x\n\n  a  b\n    c\n\ny [image: a cat] z');
});

t.test('entities: named, numeric, hex, cp1252 references, legacy without semicolon', async (t) => {
  t.equal(await text('<p>&eacute;&hellip;&nbsp;&mdash;&lt;&gt;&quot;&apos;&copy;&NotANamedEntity;</p>'), 'é… —<>"\'©&NotANamedEntity;', 'a no-break space is a space to the reader');
  t.equal(await text('<p>&#233;&#xE9;&#X1F600;&#150;&#128;&#153;&#0;</p>'), 'éé😀–€™\ufffd');
  t.equal(await text('<p>fish &amp chips &copy 2026 &ampx</p>'), 'fish & chips © 2026 &x');
});

t.test('snippets from a search engine', async (t) => {
  t.equal(snippetToText('The <strong>quick</strong> brown &amp; <em>fox</em>'), 'The quick brown & fox');
});

const MB = 1024 * 1024;
const repeat = (unit: string, bytes = 1.6 * MB) => unit.repeat(Math.ceil(bytes / unit.length));

t.test('hostile pages return, with the right text', async (t) => {
  // An unclosed attribute swallows the rest of the page: nothing readable, and no hang.
  t.equal(await text(`<p>before</p>${repeat('<a href="x')}`), 'before');
  t.equal(await text(`<p>before</p>${repeat('<script>')}<p>never</p>`), 'before', 'an unclosed script hides the rest, as in a browser');
  t.equal(await text(`<p>before</p>${repeat('<!--')}after`), 'before', 'an unclosed comment runs to the end');
  t.equal(await text(repeat('<<<<')), repeat('<<<<'), 'stray angle brackets are text');
  t.equal(await text(repeat('<a href=x>t</a>', 64 * 1024)), 't (x)'.repeat(Math.ceil((64 * 1024) / 15)));
  const rows = await text(`<table>${repeat('<tr><td>a<td>b', 256 * 1024)}</table>`);
  t.equal(rows.split('\n').length, Math.ceil((256 * 1024) / 14));
  t.ok(rows.split('\n').every((l) => l === 'a | b'));
  // A long run of spaces that does not end its line: trimming it with /[ \t]+$/ or /\s+$/ was
  // quadratic (a regex retries from every space of the run).
  const spaces = ' '.repeat(1.6 * MB);
  t.equal(await text(`<p>a</p><pre>${spaces}x\n</pre><table><tr><td><pre>${spaces}y</pre><td>z</table>`), `a\n\n${spaces}x\n\n${spaces}y\n\n| z`);
});

t.test('deep nesting stops at the limit, with a note, keeping what came before', async (t) => {
  const page = await htmlToText(`<p>start</p>${repeat('<div>x')}`);
  t.match(page.stopped, new RegExp(`more than ${MAX_DEPTH} deep`));
  t.match(page.text, /^start\n\nx\nx\n/);
  t.ok(page.text.split('\n').length > MAX_DEPTH / 2);
  const divs = await htmlToText(`<p>start</p>${'<div>'.repeat(100_000)}deep`);
  t.equal(divs.text, 'start');
  t.match(divs.stopped, new RegExp(`more than ${MAX_DEPTH} deep`));
  const fine = await htmlToText(`${'<div>'.repeat(200)}deep${'</div>'.repeat(200)}`);
  t.equal(fine.text, 'deep');
  t.equal(fine.stopped, undefined);
});

t.test('an abort stops a long page between slices', async (t) => {
  const ac = new AbortController();
  ac.abort();
  await t.rejects(htmlToText(repeat('<p>x</p>'), undefined, ac.signal), { name: 'AbortError' });
});

t.test('charset: BOM, then header, then meta, then UTF-8; unknown labels named', async (t) => {
  const cp1252 = Buffer.from([0x93, 0x63, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x80]); // “café” €
  t.same(decodeBody(cp1252, 'text/html; charset=windows-1252', true), { text: '\u201ccaf\u00e9\u201d \u20ac', encoding: 'windows-1252' });
  t.same(decodeBody(cp1252, 'text/html; charset="ISO-8859-1"', true).text, '\u201ccaf\u00e9\u201d \u20ac', 'latin1 is read as windows-1252, as browsers do');
  const withMeta = Buffer.concat([Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"></head><p>'), cp1252]);
  t.match(decodeBody(withMeta, 'text/html', true).text, /<p>\u201ccaf\u00e9\u201d \u20ac$/);
  const described = Buffer.concat([Buffer.from('<meta name="description" content="charset=koi8-r explained"><meta charset="windows-1252">'), cp1252]);
  t.match(decodeBody(described, 'text/html', true).text, /\u201ccaf\u00e9\u201d \u20ac$/, '"charset=" in another attribute\'s value is not the charset');
  t.match(decodeBody(Buffer.concat([Buffer.from('<meta charset=\'koi8-r\'>'), Buffer.from([0xf0, 0xd2, 0xc9])]), 'text/html', true).text, /При$/);
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('caf\u00e9')]);
  t.same(decodeBody(bom, 'text/html; charset=windows-1252', true), { text: 'café', encoding: 'utf-8' }, 'the BOM wins over the header');
  t.same(decodeBody(Buffer.from([0xff, 0xfe, 0x41, 0x00]), 'text/plain', false), { text: 'A', encoding: 'utf-16le' });
  t.same(decodeBody(Buffer.from('plain é'), 'text/plain', false), { text: 'plain é', encoding: 'utf-8' });
  t.same(decodeBody(Buffer.from('x'), 'text/html; charset=klingon', true), { text: 'x', encoding: 'utf-8', note: 'unknown charset "klingon"; read as UTF-8' });
  t.equal(decodeBody(withMeta, 'text/plain', false).encoding, 'utf-8', 'meta tags count only in HTML');
});

t.test('a title outside head is the title, not body text', async (t) => {
  t.same(await htmlToText('<title>Pi status</title><p>CPU 48 C</p>'), { title: 'Pi status', text: 'CPU 48 C' });
});
