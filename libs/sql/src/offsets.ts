// The parser reports UTF-8 byte offsets; JavaScript strings index UTF-16 code units. This maps one
// to the other, with a no-cost path for the usual all-ASCII statement.

export type ByteToChar = (byteOffset: number) => number;

const ASCII = /^[\x00-\x7f]*$/;

export function byteToCharMap(text: string): ByteToChar {
  if (ASCII.test(text)) return (b) => b;
  const byteLength = Buffer.byteLength(text, 'utf8');
  const map = new Uint32Array(byteLength + 1);
  let byte = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let width: number;
    if (code < 0x80) width = 1;
    else if (code < 0x800) width = 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair is one 4-byte code point and two UTF-16 units.
      for (let k = 0; k < 4; k++) map[byte + k] = i;
      byte += 4;
      i++;
      continue;
    } else width = 3;
    for (let k = 0; k < width; k++) map[byte + k] = i;
    byte += width;
  }
  map[byteLength] = text.length;
  return (b) => (b >= byteLength ? text.length : b <= 0 ? 0 : (map[b] ?? text.length));
}
