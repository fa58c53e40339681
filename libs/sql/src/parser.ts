// The one door to libpg-query: loading its WebAssembly once, parsing into per-statement slices, and
// scanning tokens. Syntax errors come out as SqlError 42601 with Postgres's message and position.
import { loadModule, parseSync, scanSync, hasSqlDetails } from 'libpg-query';
import type { Node } from 'libpg-query';
import { SqlError, SQLSTATE_SYNTAX_ERROR } from './errors.js';
import { byteToCharMap } from './offsets.js';

let loaded = false;
let loading: Promise<void> | undefined;

/** Loads the parser's WebAssembly module. Await it once at startup, before any analysis. */
export function initSqlParser(): Promise<void> {
  loading ??= loadModule().then(() => {
    loaded = true;
  });
  return loading;
}

export function isSqlParserReady(): boolean {
  return loaded;
}

function assertLoaded(): void {
  if (!loaded)
    throw new Error('@tessera/sql: await initSqlParser() once before analysing statements');
}

export interface RawStatement {
  readonly node: Node;
  /** The statement's text, trimmed, without the terminating semicolon. */
  readonly sql: string;
  /** Offset of `sql` in the input, UTF-16 units. */
  readonly location: number;
}

/** Parses `input` (one or more statements) with the real Postgres grammar. */
export function parseStatements(input: string): RawStatement[] {
  assertLoaded();
  if (input.trim() === '') return [];
  let result;
  try {
    result = parseSync(input);
  } catch (e) {
    throw toSqlError(e);
  }
  const toChar = byteToCharMap(input);
  const out: RawStatement[] = [];
  for (const raw of result.stmts ?? []) {
    if (raw.stmt === undefined) continue;
    const startByte = raw.stmt_location ?? 0;
    const lenBytes = raw.stmt_len ?? 0;
    const start = toChar(startByte);
    const end = lenBytes === 0 ? input.length : toChar(startByte + lenBytes);
    const { text, offset } = trimSlice(input, start, end);
    out.push({ node: raw.stmt, sql: text, location: offset });
  }
  return out;
}

function trimSlice(input: string, start: number, end: number): { text: string; offset: number } {
  let s = start;
  let e = end;
  while (s < e && /\s/.test(input[s] ?? '')) s++;
  while (e > s && /[\s;]/.test(input[e - 1] ?? '')) e--;
  return { text: input.slice(s, e), offset: s };
}

function toSqlError(e: unknown): SqlError {
  if (hasSqlDetails(e) && e.sqlDetails !== undefined) {
    const pos = e.sqlDetails.cursorPosition;
    // libpg-query reports a 0-based character position; Postgres's P field is 1-based.
    return new SqlError(
      SQLSTATE_SYNTAX_ERROR,
      e.sqlDetails.message,
      pos >= 0 ? pos + 1 : undefined,
    );
  }
  const message = e instanceof Error ? e.message : String(e);
  return new SqlError(SQLSTATE_SYNTAX_ERROR, message);
}

export interface Token {
  /** Offsets in the scanned text, UTF-16 units, end exclusive. */
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Lower-case keyword, or undefined for non-keywords. */
  readonly keyword: string | undefined;
  readonly isComment: boolean;
}

/** Tokens of `sql` (comments included, flagged), offsets in UTF-16 units. */
export function scanTokens(sql: string): Token[] {
  assertLoaded();
  const toChar = byteToCharMap(sql);
  const out: Token[] = [];
  for (const t of scanSync(sql).tokens) {
    out.push({
      start: toChar(t.start),
      end: toChar(t.end),
      text: t.text,
      keyword: t.keywordKind === 0 ? undefined : t.text.toLowerCase(),
      isComment: t.tokenName === 'C_COMMENT' || t.tokenName === 'SQL_COMMENT',
    });
  }
  return out;
}
