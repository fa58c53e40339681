// A hand-written scanner for Postgres's lexical rules (scan.l), just enough to find the literal
// constants of a statement without the WebAssembly parse: comments (nested /* */), quoted
// identifiers, identifiers (with $), parameters, standard strings, E'' strings, dollar quotes and
// decimal numbers. It returns the text with every literal replaced by a class marker (the shape
// key) and the literals themselves. Anything it is not sure about gives `undefined`: the caller
// then takes the full parse, so a wrong guess here can only cost speed, never a wrong analysis.

/**
 * `i`: a decimal integer that fits int4 (the parser makes it an Integer); `I`: a larger decimal
 * integer (a Float node holding the digits as written); `n`: a decimal with a point or exponent;
 * `s`: a string constant (standard, E'' with simple escapes, or dollar-quoted).
 */
export type LiteralClass = 'i' | 'I' | 'n' | 's';

export interface LiteralSlot {
  /** UTF-16 offsets of the whole literal token in the text (quotes, prefix, tags included). */
  readonly start: number;
  readonly end: number;
  readonly cls: LiteralClass;
  /** The constant's value as the parse tree holds it: string contents unescaped, digits as written. */
  readonly value: string;
}

export interface NormalizedText {
  /** The text with each literal replaced by NUL + its class (NUL cannot occur in a Query). */
  readonly key: string;
  readonly slots: readonly LiteralSlot[];
}

const INT4_MAX = 2147483647;

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 0x80;
}

function isIdentCont(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57) || c === 36;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Postgres's whitespace: space, \t, \n, \r, \f, \v. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** End of a `/* ... *\/` comment starting at `i` (they nest), or -1 when unterminated. */
function blockCommentEnd(s: string, i: number): number {
  let depth = 0;
  let k = i;
  while (k < s.length) {
    if (s.charCodeAt(k) === 47 && s.charCodeAt(k + 1) === 42) {
      depth++;
      k += 2;
    } else if (s.charCodeAt(k) === 42 && s.charCodeAt(k + 1) === 47) {
      depth--;
      k += 2;
      if (depth === 0) return k;
    } else k++;
  }
  return -1;
}

/**
 * After a string literal ending at `i`: true when only whitespace and comments with a newline lead
 * to another quote, which Postgres glues onto the first string. Such texts are left to the parser.
 */
function continues(s: string, i: number): boolean {
  let k = i;
  let newline = false;
  while (k < s.length) {
    const c = s.charCodeAt(k);
    if (c === 10 || c === 13) {
      newline = true;
      k++;
    } else if (isSpace(c)) k++;
    else if (c === 45 && s.charCodeAt(k + 1) === 45) {
      while (k < s.length && s.charCodeAt(k) !== 10 && s.charCodeAt(k) !== 13) k++;
    } else if (c === 47 && s.charCodeAt(k + 1) === 42) {
      const e = blockCommentEnd(s, k);
      if (e < 0) return true;
      k = e;
    } else return newline && c === 39;
  }
  return false;
}

/** A standard string `'...'` at `i` (the quote): [end, value], or undefined. */
function standardString(s: string, i: number): [number, string] | undefined {
  let value = '';
  let k = i + 1;
  for (;;) {
    const q = s.indexOf("'", k);
    if (q < 0) return undefined;
    value += s.slice(k, q);
    if (s.charCodeAt(q + 1) === 39) {
      value += "'";
      k = q + 2;
      continue;
    }
    return [q + 1, value];
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * An escape string `E'...'` at `i` (the E): [end, value], or undefined when it uses an escape whose
 * value this scanner does not decode (octal, hex, Unicode, \v) or is unterminated.
 */
function escapeString(s: string, i: number): [number, string] | undefined {
  let value = '';
  let k = i + 2;
  while (k < s.length) {
    const c = s[k] as string;
    if (c === "'") {
      if (s[k + 1] === "'") {
        value += "'";
        k += 2;
        continue;
      }
      return [k + 1, value];
    }
    if (c === '\\') {
      const n = s[k + 1];
      if (n === undefined || /[0-7xuUv]/.test(n)) return undefined;
      // A surrogate pair after a backslash is one character to Postgres; keep it whole.
      const code = s.charCodeAt(k + 1);
      if (code >= 0xd800 && code <= 0xdbff) return undefined;
      value += SIMPLE_ESCAPES[n] ?? n;
      k += 2;
      continue;
    }
    value += c;
    k++;
  }
  return undefined;
}

/** A dollar-quoted string at `i` (the first $): [end, value], or undefined if it is not one. */
function dollarString(s: string, i: number): [number, string] | undefined {
  let k = i + 1;
  if (k < s.length && s[k] !== '$') {
    if (!isIdentStart(s.charCodeAt(k))) return undefined;
    while (k < s.length && isIdentCont(s.charCodeAt(k)) && s[k] !== '$') k++;
    if (s[k] !== '$') return undefined;
  }
  const tag = s.slice(i, k + 1);
  const close = s.indexOf(tag, k + 1);
  if (close < 0) return undefined;
  return [close + tag.length, s.slice(k + 1, close)];
}

/** A decimal number at `i`: [end, class], or undefined for forms left to the parser. */
function number(s: string, i: number): [number, LiteralClass] | undefined {
  let k = i;
  while (isDigit(s.charCodeAt(k))) k++;
  const intEnd = k;
  let cls: LiteralClass = 'i';
  if (s.charCodeAt(k) === 46) {
    // `1..2` is an integer followed by `..` to Postgres; leave such texts alone.
    if (s.charCodeAt(k + 1) === 46) return undefined;
    k++;
    while (isDigit(s.charCodeAt(k))) k++;
    cls = 'n';
    if (k === i + 1) return undefined; // a lone `.`
  }
  const e = s.charCodeAt(k);
  if (e === 69 || e === 101) {
    let m = k + 1;
    if (s[m] === '+' || s[m] === '-') m++;
    if (!isDigit(s.charCodeAt(m))) return undefined; // trailing junk to Postgres 15+
    while (isDigit(s.charCodeAt(m))) m++;
    k = m;
    cls = 'n';
  }
  // `0x1f`, `1_000`, `12abc`, `5$`: other literal forms or errors; the parser decides.
  const after = s.charCodeAt(k);
  if (k < s.length && (isIdentCont(after) || after === 46)) return undefined;
  if (cls === 'i' && intEnd - i > 9) {
    let z = i;
    while (z < intEnd - 1 && s.charCodeAt(z) === 48) z++;
    if (intEnd - z > 10 || Number(s.slice(z, intEnd)) > INT4_MAX) cls = 'I';
  }
  return [k, cls];
}

/** The shape key and literals of `sql`; undefined when the text is not plainly understood. */
export function normalizeLiterals(sql: string): NormalizedText | undefined {
  const slots: LiteralSlot[] = [];
  let key = '';
  let copied = 0;
  const slot = (start: number, end: number, cls: LiteralClass, value: string): void => {
    key += sql.slice(copied, start) + '\0' + cls;
    copied = end;
    slots.push({ start, end, cls, value });
  };
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 0) return undefined;
    if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      while (i < n && sql.charCodeAt(i) !== 10 && sql.charCodeAt(i) !== 13) i++;
      continue;
    }
    if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const e = blockCommentEnd(sql, i);
      if (e < 0) return undefined;
      i = e;
      continue;
    }
    if (c === 34) {
      // "quoted identifier", "" inside.
      let k = i + 1;
      for (;;) {
        const q = sql.indexOf('"', k);
        if (q < 0) return undefined;
        if (sql.charCodeAt(q + 1) === 34) {
          k = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      continue;
    }
    if (c === 39) {
      const got = standardString(sql, i);
      if (got === undefined || continues(sql, got[0])) return undefined;
      slot(i, got[0], 's', got[1]);
      i = got[0];
      continue;
    }
    if (isIdentStart(c)) {
      const next = sql.charCodeAt(i + 1);
      if (next === 39) {
        // E'..' is decoded; B'', X'', N'' and U&'' keep their text in the key.
        if (c === 69 || c === 101) {
          const got = escapeString(sql, i);
          if (got === undefined || continues(sql, got[0])) return undefined;
          slot(i, got[0], 's', got[1]);
          i = got[0];
          continue;
        }
        const got = standardString(sql, i + 1);
        if (got === undefined || continues(sql, got[0])) return undefined;
        i = got[0];
        continue;
      }
      if ((c === 85 || c === 117) && next === 38) return undefined; // U&'..' / U&".."
      let k = i + 1;
      while (k < n && isIdentCont(sql.charCodeAt(k))) k++;
      i = k;
      continue;
    }
    if (c === 36) {
      if (isDigit(sql.charCodeAt(i + 1))) {
        let k = i + 1;
        while (isDigit(sql.charCodeAt(k))) k++;
        if (k < n && isIdentCont(sql.charCodeAt(k))) return undefined;
        i = k;
        continue;
      }
      const got = dollarString(sql, i);
      if (got === undefined) return undefined;
      slot(i, got[0], 's', got[1]);
      i = got[0];
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(sql.charCodeAt(i + 1)))) {
      const got = number(sql, i);
      if (got === undefined) return undefined;
      slot(i, got[0], got[1], sql.slice(i, got[0]));
      i = got[0];
      continue;
    }
    i++;
  }
  return { key: key + sql.slice(copied), slots };
}
