// The size of a JPEG from its frame header, without decoding it: what a scaled image and a snapshot
// are checked by (the notes say the size, and a file that is no JPEG is refused by name).

/** Width and height from the first SOFn marker, or undefined when the bytes are not a JPEG. */
export function jpegSize(b: Uint8Array): { width: number; height: number } | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    // SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (b[i + 5]! << 8) | b[i + 6]!, width: (b[i + 7]! << 8) | b[i + 8]! };
    }
    if (marker === 0xd9 || marker === 0xda) return undefined;
    i += 2 + length;
  }
  return undefined;
}
