// A SELECT that only calls sequence functions (`select nextval('s')`, `select currval('s') as c`,
// `select lastval()`), item by item with where each call sits, so the router can answer it from
// its cluster-wide sequence values. Anything else is undefined: the nodes answer it.
import { scanTokens, type Token } from './parser.js';

export interface SequenceCall {
  readonly fn: 'nextval' | 'currval' | 'lastval' | 'setval';
  /** The sequence as written inside the quotes (undefined for lastval, or a setval not understood). */
  readonly sequence: string | undefined;
  /** The sequence is bind parameter `$n` (0-based index) instead. */
  readonly param?: number | undefined;
  /** The call's span. */
  readonly start: number;
  readonly end: number;
  /** An AS name follows (else Postgres names the column after the function). */
  readonly aliased: boolean;
}

const FNS = new Set(['nextval', 'currval', 'lastval', 'setval']);

/** The calls of `select <call> [[as] name], ...` (nothing else); undefined for any other shape. */
export function sequenceCallSelect(sql: string): readonly SequenceCall[] | undefined {
  const ts = scanTokens(sql).filter((t) => !t.isComment);
  if (ts[0]?.keyword !== 'select') return undefined;
  let end = ts.length;
  if (ts[end - 1]?.text === ';') end--;
  const calls: SequenceCall[] = [];
  let i = 1;
  while (i < end) {
    const call = callAt(ts, i, end);
    if (call === undefined) return undefined;
    i = call.next;
    let aliased = false;
    if (ts[i]?.keyword === 'as') i++;
    if (i < end && ts[i]!.text !== ',') {
      if (ts[i]!.keyword !== undefined && ts[i - 1]?.keyword !== 'as') return undefined;
      aliased = true;
      i++;
    }
    calls.push({ ...call.call, aliased });
    if (i === end) break;
    if (ts[i]?.text !== ',') return undefined;
    i++;
  }
  return calls.length > 0 ? calls : undefined;
}

function callAt(
  ts: readonly Token[],
  at: number,
  end: number,
): { call: Omit<SequenceCall, 'aliased'>; next: number } | undefined {
  let i = at;
  if (ts[i]?.text.toLowerCase() === 'pg_catalog' && ts[i + 1]?.text === '.') i += 2;
  const fn = ts[i]?.text.toLowerCase();
  if (fn === undefined || !FNS.has(fn) || ts[i + 1]?.text !== '(') return undefined;
  let depth = 0;
  let close = -1;
  for (let k = i + 1; k < end; k++) {
    if (ts[k]!.text === '(') depth++;
    else if (ts[k]!.text === ')' && --depth === 0) {
      close = k;
      break;
    }
  }
  if (close < 0) return undefined;
  const inner = ts.slice(i + 2, close).map((t) => t.text);
  let sequence: string | undefined;
  const lit = inner[0];
  if (lit !== undefined && /^'(?:[^']|'')*'$/.test(lit)) {
    const rest = inner.slice(1).map((x) => x.toLowerCase());
    const plain =
      rest.length === 0 || (rest.length === 2 && rest[0] === '::' && rest[1] === 'regclass');
    if (plain || fn === 'setval') sequence = lit.slice(1, -1).replace(/''/g, "'");
  }
  let param: number | undefined;
  if (lit !== undefined && /^\$\d+$/.test(lit)) {
    const rest = inner.slice(1).map((x) => x.toLowerCase());
    if (
      rest.length === 0 ||
      (rest.length === 2 && rest[0] === '::' && /^(regclass|text)$/.test(rest[1]!))
    )
      param = Number(lit.slice(1)) - 1;
  }
  if (
    fn === 'lastval'
      ? inner.length !== 0
      : fn !== 'setval' && sequence === undefined && param === undefined
  )
    return undefined;
  return {
    call: {
      fn: fn as SequenceCall['fn'],
      sequence,
      param,
      start: ts[at]!.start,
      end: ts[close]!.end,
    },
    next: close + 1,
  };
}
