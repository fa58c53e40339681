// SASLprep (RFC 4013) of a password before SCRAM hashing, done the way Postgres does it: when
// the password is not a valid SASLprep input, the raw string is used unchanged instead of
// failing. Tables are the RFC 3454 ones this needs; two checks are approximations (noted below).

/** C.1.2: non-ASCII spaces, mapped to U+0020. */
function isNonAsciiSpace(cp: number): boolean {
  return (
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200b) ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

/** B.1: commonly mapped to nothing. */
function isMappedToNothing(cp: number): boolean {
  return (
    cp === 0xad ||
    cp === 0x34f ||
    cp === 0x1806 ||
    (cp >= 0x180b && cp <= 0x180d) ||
    (cp >= 0x200b && cp <= 0x200d) ||
    cp === 0x2060 ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    cp === 0xfeff
  );
}

/** C.1.2, C.2.1, C.2.2, C.3 - C.9. */
function isProhibited(cp: number): boolean {
  if (cp < 0x20 || cp === 0x7f) return true; // C.2.1
  if (cp < 0x80) return false;
  if (isNonAsciiSpace(cp)) return true; // C.1.2
  if (cp <= 0x9f) return true; // C.2.2
  if (cp === 0x6dd || cp === 0x70f || cp === 0x180e || cp === 0x200c || cp === 0x200d) return true;
  if (
    cp === 0x2028 ||
    cp === 0x2029 ||
    (cp >= 0x2060 && cp <= 0x2063) ||
    (cp >= 0x206a && cp <= 0x206f)
  )
    return true;
  if (cp === 0xfeff || (cp >= 0xfff9 && cp <= 0xfffd) || (cp >= 0x1d173 && cp <= 0x1d17a))
    return true; // C.2.2, C.6
  if ((cp >= 0xe000 && cp <= 0xf8ff) || cp >= 0xf0000) return true; // C.3 (planes 15, 16)
  if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe) return true; // C.4
  if (cp >= 0xd800 && cp <= 0xdfff) return true; // C.5: a lone surrogate in a JS string
  if (cp >= 0x2ff0 && cp <= 0x2ffb) return true; // C.7
  if (
    cp === 0x340 ||
    cp === 0x341 ||
    cp === 0x200e ||
    cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e)
  )
    return true; // C.8
  if (cp === 0xe0001 || (cp >= 0xe0020 && cp <= 0xe007f)) return true; // C.9
  return false;
}

/** Approximation of D.1 (bidi R/AL): the Hebrew, Arabic and related right-to-left blocks. */
function isRandAL(cp: number): boolean {
  return (
    (cp >= 0x590 && cp <= 0x8ff) ||
    (cp >= 0xfb1d && cp <= 0xfdff) ||
    (cp >= 0xfe70 && cp <= 0xfefc) ||
    (cp >= 0x10800 && cp <= 0x10fff)
  );
}

/** Approximation of A.1 (unassigned in Unicode 3.2): unassigned in the runtime's Unicode. */
const UNASSIGNED = /\p{Cn}/u;
const LETTER = /\p{L}/u;

/** The SASLprep'ed password, or the password unchanged if it is not valid SASLprep input. */
export function saslprep(password: string): string {
  // Fast path: printable ASCII is left as is by every step.
  let ascii = true;
  for (let i = 0; i < password.length; i++) {
    const c = password.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) {
      ascii = false;
      break;
    }
  }
  if (ascii) return password;

  let mapped = '';
  for (const ch of password) {
    const cp = ch.codePointAt(0) as number;
    if (isNonAsciiSpace(cp)) mapped += ' ';
    else if (!isMappedToNothing(cp)) mapped += ch;
  }
  const normalized = mapped.normalize('NFKC');
  let hasRandAL = false;
  let hasL = false;
  for (const ch of normalized) {
    const cp = ch.codePointAt(0) as number;
    if (isProhibited(cp) || UNASSIGNED.test(ch)) return password;
    if (isRandAL(cp)) hasRandAL = true;
    else if (LETTER.test(ch)) hasL = true;
  }
  if (hasRandAL) {
    const first = normalized.codePointAt(0) as number;
    const last = normalized.codePointAt(normalized.length - 1) as number;
    if (hasL || !isRandAL(first) || !isRandAL(last)) return password;
  }
  return normalized;
}
