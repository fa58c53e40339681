// Runs one query on the router and on plain Postgres and judges the pair: equal (in order when the
// ORDER BY is total, else as multisets) = pass; 0A000 from the router = refused; anything else =
// wrong. Values are compared as the servers' own text (every type parser returns the raw text).
import type pg from 'pg';

export interface Outcome {
  readonly kind: 'rows' | 'error';
  readonly names?: readonly string[];
  readonly types?: readonly number[];
  readonly rows?: readonly (readonly (string | null)[])[];
  readonly code?: string;
  readonly message?: string;
}

export type Verdict = 'pass' | 'refused' | 'wrong';

const RAW = { getTypeParser: () => (v: string) => v };

/** `params`: bound values (the extended protocol, whatever `extended` says). */
export async function runQuery(
  client: pg.Client,
  sql: string,
  extended = false,
  params?: readonly unknown[],
): Promise<Outcome> {
  try {
    const res = await client.query({
      text: sql,
      rowMode: 'array',
      types: RAW,
      ...(params !== undefined ? { values: [...params] } : {}),
      ...(extended ? { queryMode: 'extended' as const } : {}),
    });
    return {
      kind: 'rows',
      names: res.fields.map((f) => f.name),
      types: res.fields.map((f) => f.dataTypeID),
      rows: res.rows as (string | null)[][],
    };
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { kind: 'error', code: err.code ?? '?', message: err.message ?? String(e) };
  }
}

function multiset(rows: readonly (readonly (string | null)[])[]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

export function judge(router: Outcome, plain: Outcome, ordered: boolean): Verdict {
  if (router.kind === 'error') {
    if (plain.kind === 'error' && plain.code === router.code && plain.message === router.message)
      return 'pass';
    return router.code === '0A000' ? 'refused' : 'wrong';
  }
  if (plain.kind === 'error') return 'wrong';
  if (JSON.stringify(router.names) !== JSON.stringify(plain.names)) return 'wrong';
  if (JSON.stringify(router.types) !== JSON.stringify(plain.types)) return 'wrong';
  const a = ordered
    ? (router.rows ?? []).map((r) => JSON.stringify(r))
    : multiset(router.rows ?? []);
  const b = ordered ? (plain.rows ?? []).map((r) => JSON.stringify(r)) : multiset(plain.rows ?? []);
  return a.length === b.length && a.every((x, i) => x === b[i]) ? 'pass' : 'wrong';
}

export function describeOutcome(o: Outcome): string {
  if (o.kind === 'error') return `error ${o.code}: ${o.message}`;
  const rows = o.rows ?? [];
  return `${rows.length} rows, columns ${JSON.stringify(o.names)} ${JSON.stringify(o.types)}, first ${JSON.stringify(rows.slice(0, 5))}`;
}
