// Helpers for executor tests: a planner catalog, synthetic leaf streams that count pulls and
// returns, and collecting an executor's output as text.
import { planRead } from '@tessera/sql';
import type { PlannerCatalog, ReadPlan } from '@tessera/sql';
import { executeReadPlan } from './execute.js';
import type { ExecuteOptions, FieldDescription, LeafMessage, LeafStream } from './types.js';

export function catalog(
  sharded: readonly string[],
  reference: readonly string[] = [],
  bytewise = true,
): PlannerCatalog {
  return {
    textCollationIsBytewise: bytewise,
    table: (_schema, name) =>
      sharded.includes(name)
        ? { kind: 'sharded', keyColumn: 'id', keyspace: 'ks' }
        : reference.includes(name)
          ? { kind: 'reference' }
          : undefined,
  };
}

export function mustPlan(sql: string, cat: PlannerCatalog): ReadPlan {
  const p = planRead(sql, cat);
  if (p.kind !== 'plan') throw new Error(`refused: ${p.reason}`);
  return p;
}

export function field(name: string, typeOid: number, format = 0): FieldDescription {
  return { name, tableOid: 0, columnAttr: 0, typeOid, typeSize: -1, typeModifier: -1, format };
}

export interface CountingLeaf extends LeafStream {
  pulls: number;
  returned: boolean;
}

/** A leaf that yields RowDescription, `rows` (text values), CommandComplete, counting pulls. */
export function leaf(
  fields: readonly FieldDescription[],
  rows: Iterable<readonly (string | Buffer | null)[]>,
  opts: { failAfter?: number; error?: unknown } = {},
): CountingLeaf {
  const self: CountingLeaf = {
    pulls: 0,
    returned: false,
    [Symbol.asyncIterator]() {
      let stage = 0;
      let sent = 0;
      const it = rows[Symbol.iterator]();
      return {
        next: async (): Promise<IteratorResult<LeafMessage>> => {
          self.pulls++;
          if (stage === 0) {
            stage = 1;
            return { done: false, value: { kind: 'RowDescription', fields } };
          }
          if (stage === 1) {
            if (opts.failAfter !== undefined && sent >= opts.failAfter) throw opts.error;
            const r = it.next();
            if (r.done !== true) {
              sent++;
              return {
                done: false,
                value: {
                  kind: 'DataRow',
                  values: r.value.map((v) =>
                    v === null ? null : typeof v === 'string' ? Buffer.from(v) : v,
                  ),
                },
              };
            }
            stage = 2;
            return { done: false, value: { kind: 'CommandComplete', tag: `SELECT ${sent}` } };
          }
          return { done: true, value: undefined };
        },
        return: async (): Promise<IteratorResult<LeafMessage>> => {
          self.returned = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return self;
}

export interface Collected {
  fields: FieldDescription[];
  rows: (string | null)[][];
  /** The rows' bytes as they were sent. */
  raw: (Buffer | null)[][];
  tag: string;
}

export async function collect(
  plan: ReadPlan,
  leaves: readonly LeafStream[],
  options?: ExecuteOptions,
): Promise<Collected> {
  const out: Collected = { fields: [], rows: [], raw: [], tag: '' };
  for await (const m of executeReadPlan(plan, leaves, options)) {
    if (m.kind === 'RowDescription') out.fields = [...m.fields];
    else if (m.kind === 'DataRow') {
      out.rows.push(m.values.map((v) => (v === null ? null : v.toString('utf8'))));
      out.raw.push([...m.values]);
    } else out.tag = m.tag;
  }
  return out;
}
