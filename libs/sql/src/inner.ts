// Finds the text of a statement nested in another (EXPLAIN x, PREPARE p AS x, COPY (x) TO,
// DECLARE c CURSOR FOR x, CREATE TABLE t AS x) with the scanner, so comments and strings never
// confuse it.
import { scanTokens } from './parser.js';
import type { Token } from './parser.js';

export interface InnerText {
  readonly sql: string;
  /** Offset of `sql` within the outer statement's text. */
  readonly offset: number;
}

function codeTokens(sql: string): Token[] {
  return scanTokens(sql).filter((t) => !t.isComment);
}

function from(sql: string, start: number, end = sql.length): InnerText {
  let s = start;
  let e = end;
  while (s < e && /\s/.test(sql[s] ?? '')) s++;
  while (e > s && /\s/.test(sql[e - 1] ?? '')) e--;
  return { sql: sql.slice(s, e), offset: s };
}

/** The text after the first depth-0 keyword `keyword` (PREPARE ... AS, DECLARE ... FOR, CTAS ... AS). */
export function textAfterKeyword(sql: string, keyword: string): InnerText {
  let depth = 0;
  for (const t of codeTokens(sql)) {
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.keyword === keyword) return from(sql, t.end);
  }
  return { sql, offset: 0 };
}

/** The statement of an EXPLAIN: after `EXPLAIN`, an optional `( ... )`, and ANALYZE/VERBOSE. */
export function explainedText(sql: string): InnerText {
  const tokens = codeTokens(sql);
  let i = 1;
  if (tokens[i]?.text === '(') {
    let depth = 0;
    for (; i < tokens.length; i++) {
      const t = tokens[i];
      if (t?.text === '(') depth++;
      else if (t?.text === ')' && --depth === 0) {
        i++;
        break;
      }
    }
  }
  while (i < tokens.length && ['analyze', 'analyse', 'verbose'].includes(tokens[i]?.keyword ?? ''))
    i++;
  const t = tokens[i];
  return t === undefined ? { sql, offset: 0 } : from(sql, t.start);
}

/** The query of `COPY ( query ) TO`. */
export function copyQueryText(sql: string): InnerText {
  const tokens = codeTokens(sql);
  const open = tokens[1];
  if (open?.text !== '(') return { sql, offset: 0 };
  let depth = 0;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t?.text === '(') depth++;
    else if (t?.text === ')' && --depth === 0) return from(sql, open.end, t.start);
  }
  return { sql, offset: 0 };
}
