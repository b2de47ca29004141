// The text of a response body in the encoding it was written in, found the way a browser finds it
// (WHATWG "encoding sniffing", shortened): a byte-order mark wins, then the charset of the
// Content-Type header, then, for HTML, a <meta charset> or <meta http-equiv> in the first 1024
// bytes, then UTF-8. TextDecoder knows every label the Encoding Standard names (Node has full ICU),
// and maps latin1 and iso-8859-1 to windows-1252 as browsers do.
export interface Decoded {
  text: string;
  /** the encoding used */
  encoding: string;
  /** set when a label was unknown and UTF-8 was used instead */
  note?: string;
}

const BOMS: [bytes: number[], encoding: string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

function bomOf(body: Uint8Array): string | undefined {
  return BOMS.find(([bytes]) => bytes.every((b, i) => body[i] === b))?.[1];
}

function headerCharset(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
}

/** The prescan on at most 1024 bytes: short and bounded, so a regex is safe here. */
function metaCharset(body: Uint8Array): string | undefined {
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, 1024)).toString('latin1');
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    // A charset attribute, found with quoted values blanked out, so that "charset=" in the words
    // of, say, a description's content is not taken for one; its value is read from the tag.
    const bare = tag.replace(/"[^"]*"|'[^']*'/g, (q) => ' '.repeat(q.length));
    const attr = /\scharset\s*=/i.exec(bare);
    if (attr) return /^\s*["']?\s*([\w.:-]+)/.exec(tag.slice(attr.index + attr[0].length))?.[1];
    // <meta http-equiv="Content-Type" content="text/html; charset=...">
    if (/\shttp-equiv\s*=\s*["']?\s*content-type/i.test(tag)) {
      const inContent = /charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag);
      if (inContent) return inContent[1];
    }
  }
  return undefined;
}

// windows-1252's 0x80–0x9F (the Encoding Standard's table; 0x81, 0x8D, 0x8F, 0x90, 0x9D stay as is).
// Node 20's TextDecoder decodes windows-1252 as ISO-8859-1 and leaves these as C1 controls, so
// they are mapped here; on a Node that decodes correctly there is nothing left to map.
const CP1252 = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decode(d: TextDecoder, body: Uint8Array): string {
  const text = d.decode(body);
  return d.encoding === 'windows-1252' ? text.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]!) : text;
}

function decoder(label: string): TextDecoder | undefined {
  try {
    return new TextDecoder(label.trim().toLowerCase());
  } catch {
    return undefined;
  }
}

export function decodeBody(body: Uint8Array, contentType: string, html: boolean): Decoded {
  const bom = bomOf(body);
  // TextDecoder drops the BOM itself (ignoreBOM is false by default).
  if (bom) return { text: new TextDecoder(bom).decode(body), encoding: bom };
  const label = headerCharset(contentType) ?? (html ? metaCharset(body) : undefined);
  if (label) {
    const d = decoder(label);
    if (d) return { text: decode(d, body), encoding: d.encoding };
    return { text: new TextDecoder('utf-8').decode(body), encoding: 'utf-8', note: `unknown charset "${label.slice(0, 40)}"; read as UTF-8` };
  }
  return { text: new TextDecoder('utf-8').decode(body), encoding: 'utf-8' };
}
