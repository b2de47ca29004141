// The transcript quoted above a reply is the owner's words: Markdown or HTML in it is shown as
// typed, never read as formatting, and each voice note of a burst has its own line. What a voice
// reply speaks is the reply as read, without markup.
import t from 'tap';
import { telegramParts } from '../src/channels/telegram/format.js';
import { quoteTranscripts, speakable } from '../src/channels/telegram/voice-reply.js';

t.test('a transcript with Markdown and HTML characters comes out literally', async (t) => {
  const said = 'set *all* lights to 50% [kitchen](x) <b>now</b> & _then_ # 1. `off`';
  const parts = telegramParts(`${quoteTranscripts([said])}The lights are set.`);
  t.equal(parts.length, 1);
  t.match(parts[0]!.html, /^<blockquote>🎤 set \*all\* lights to 50% \[kitchen\]\(x\) &lt;b&gt;now&lt;\/b&gt; &amp; _then_ # 1\. `off`<\/blockquote>/);
});

t.test('two notes, two lines; none, nothing', async (t) => {
  t.equal(quoteTranscripts([]), '');
  const parts = telegramParts(`${quoteTranscripts(['first  one', 'second\none'])}ok`);
  t.match(parts[0]!.html, /^<blockquote>🎤 first one\n+🎤 second one<\/blockquote>\n*ok$/);
});

t.test('a voice reply speaks the words, not the Markdown or the HTML', async (t) => {
  const parts = telegramParts('**Done**: the `kitchen` light is on & the *door* is <locked>.\n\n- one\n- two');
  t.equal(speakable(parts), 'Done: the kitchen light is on & the door is <locked>.\n\none\ntwo');
});
