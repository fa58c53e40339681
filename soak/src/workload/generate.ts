// The operations of the soak workloads (docs/soak.md, "Workloads"), drawn from a seeded stream:
// what to invoke (the history's value) and the SQL that does it. Pure: no I/O; the key pools
// rotate list keys after maxAppendsPerKey appends so reads stay small.
import { F, type CounterMicro, type ListMicro } from '../checker/values.js';
import type { OpKind, WorkloadPlan } from '../plan/plan.js';
import type { Rng } from '../rng.js';

export interface Statement {
  sql: string;
  params: unknown[];
  /** How to fold this statement's rows into the completion value. */
  reads?: Fill;
}

export type Fill =
  | { kind: 'list'; micro: number }
  | { kind: 'lists'; micros: Map<number, number> }
  | { kind: 'counter'; micro: number }
  | { kind: 'balances' };

export interface PlannedOp {
  kind: OpKind;
  f: string;
  /** The invoke's value; reads hold null until the completion fills them. */
  value: { ops?: (ListMicro | CounterMicro)[]; balances?: null; [k: string]: unknown };
  /** BEGIN (with this isolation) ... COMMIT around the statements, or one autocommit statement. */
  txn: 'read committed' | 'repeatable read' | undefined;
  statements: Statement[];
  /** Writes something (a recovery measurement counts only writes). */
  writes: boolean;
  /** Keys by keyspace, for the owner nodes of the op. */
  keys: { keyspace: 'lists' | 'counters' | 'bank'; key: number }[];
}

export const SQL = {
  append:
    'insert into lists (k, vals) values ($1, array[$2::bigint]) on conflict (k) do update set vals = lists.vals || excluded.vals',
  readList: 'select vals from lists where k = $1',
  readLists: 'select k, vals from lists where k = any($1::bigint[])',
  add: 'insert into counters (k, n) values ($1, $2) on conflict (k) do update set n = counters.n + excluded.n',
  ledger: 'insert into ledger (k, op_id, d) values ($1, $2, $3)',
  readCounter: 'select n from counters where k = $1',
  move: 'update accounts set balance = balance + $2 where id = $1',
  leg: 'insert into legs (account_id, transfer_id, amount) values ($1, $2, $3)',
  balances: 'select id, balance from accounts order by id',
} as const;

export class ListKeys {
  readonly #active: number[] = [];
  readonly #appends = new Map<number, number>();
  readonly #retired: number[] = [];
  #next = 1;
  /** Every key ever used, for the final-state probe. */
  readonly all = new Set<number>();

  constructor(
    readonly activeCount: number,
    readonly maxAppends: number,
  ) {
    for (let i = 0; i < activeCount; i++) this.#active.push(this.#fresh());
  }

  #fresh(): number {
    const k = this.#next++;
    this.all.add(k);
    return k;
  }

  /** A key to append to; a key that reached its quota is replaced by a fresh one. */
  forAppend(rng: Rng): number {
    const i = rng.int(0, this.#active.length - 1);
    const k = this.#active[i]!;
    const n = (this.#appends.get(k) ?? 0) + 1;
    this.#appends.set(k, n);
    if (n >= this.maxAppends) {
      this.#active[i] = this.#fresh();
      this.#retired.push(k);
      if (this.#retired.length > this.activeCount) this.#retired.shift();
    }
    return k;
  }

  /** A key to read: mostly active ones, sometimes one recently retired. */
  forRead(rng: Rng): number {
    if (this.#retired.length > 0 && rng.next() < 0.15) return rng.pick(this.#retired);
    return rng.pick(this.#active);
  }
}

export class OpGenerator {
  readonly lists: ListKeys;
  #value = 1;
  #ledgerId = 1;
  #transferId = 1;

  constructor(
    readonly plan: WorkloadPlan,
    readonly accounts: readonly number[],
  ) {
    this.lists = new ListKeys(plan.lists.activeKeys, plan.lists.maxAppendsPerKey);
  }

  get counterKeys(): number[] {
    return Array.from({ length: this.plan.counters.keys }, (_, i) => i + 1);
  }

  next(kind: OpKind, rng: Rng): PlannedOp {
    switch (kind) {
      case 'list-append': {
        const k = this.lists.forAppend(rng);
        const v = this.#value++;
        return {
          kind,
          f: F.list,
          value: { mode: 'auto', ops: [['append', k, v]] },
          txn: undefined,
          statements: [{ sql: SQL.append, params: [k, v] }],
          writes: true,
          keys: [{ keyspace: 'lists', key: k }],
        };
      }
      case 'list-txn':
        return this.#listTxn(rng);
      case 'list-read': {
        const k = this.lists.forRead(rng);
        return {
          kind,
          f: F.list,
          value: { mode: 'auto', ops: [['r', k, null]] },
          txn: undefined,
          statements: [{ sql: SQL.readList, params: [k], reads: { kind: 'list', micro: 0 } }],
          writes: false,
          keys: [{ keyspace: 'lists', key: k }],
        };
      }
      case 'list-read-multi': {
        const keys = this.#distinct(rng, rng.int(2, 4), () => this.lists.forRead(rng));
        return {
          kind,
          f: F.list,
          value: { mode: 'auto', ops: keys.map((k): ListMicro => ['r', k, null]) },
          txn: undefined,
          statements: [
            {
              sql: SQL.readLists,
              params: [keys],
              reads: { kind: 'lists', micros: new Map(keys.map((k, i) => [k, i])) },
            },
          ],
          writes: false,
          keys: keys.map((key) => ({ keyspace: 'lists', key })),
        };
      }
      case 'list-read-txn': {
        const keys = this.#distinct(rng, rng.int(2, 3), () => this.lists.forRead(rng));
        return {
          kind,
          f: F.list,
          value: { mode: 'txn', ops: keys.map((k): ListMicro => ['r', k, null]) },
          txn: 'repeatable read',
          statements: keys.map((k, i) => ({
            sql: SQL.readList,
            params: [k],
            reads: { kind: 'list', micro: i },
          })),
          writes: false,
          keys: keys.map((key) => ({ keyspace: 'lists', key })),
        };
      }
      case 'counter-add':
      case 'counter-add-multi': {
        const n = kind === 'counter-add' ? 1 : 2;
        const keys = this.#distinct(rng, n, () => rng.pick(this.counterKeys)).sort((a, b) => a - b);
        const ops: CounterMicro[] = keys.map((k) => ['add', k, rng.int(1, 5), this.#ledgerId++]);
        return {
          kind,
          f: F.counter,
          value: { mode: 'txn', ops },
          txn: 'read committed',
          statements: ops.flatMap((m) => [
            { sql: SQL.add, params: [m[1], m[2]] },
            { sql: SQL.ledger, params: [m[1], m[3], m[2]] },
          ]),
          writes: true,
          keys: keys.map((key) => ({ keyspace: 'counters', key })),
        };
      }
      case 'counter-read': {
        const k = rng.pick(this.counterKeys);
        return {
          kind,
          f: F.counter,
          value: { mode: 'auto', ops: [['r', k, null]] },
          txn: undefined,
          statements: [{ sql: SQL.readCounter, params: [k], reads: { kind: 'counter', micro: 0 } }],
          writes: false,
          keys: [{ keyspace: 'counters', key: k }],
        };
      }
      case 'counter-read-txn': {
        const keys = this.#distinct(rng, 2, () => rng.pick(this.counterKeys));
        return {
          kind,
          f: F.counter,
          value: { mode: 'txn', ops: keys.map((k): CounterMicro => ['r', k, null]) },
          txn: 'repeatable read',
          statements: keys.map((k, i) => ({
            sql: SQL.readCounter,
            params: [k],
            reads: { kind: 'counter', micro: i },
          })),
          writes: false,
          keys: keys.map((key) => ({ keyspace: 'counters', key })),
        };
      }
      case 'transfer': {
        const [from, to] = this.#distinct(rng, 2, () => rng.pick(this.accounts)) as [
          number,
          number,
        ];
        const amount = rng.next() < 0.02 ? rng.int(100, 600) : rng.int(1, 5);
        const id = this.#transferId++;
        // Rows locked in ascending id order everywhere: transfers never deadlock across nodes.
        const moves = [
          [from, -amount],
          [to, amount],
        ].sort((a, b) => a[0]! - b[0]!);
        return {
          kind,
          f: F.transfer,
          value: { id, from, to, amount },
          txn: 'read committed',
          statements: [
            ...moves.map(([acct, delta]) => ({ sql: SQL.move, params: [acct, delta] })),
            ...moves.map(([acct, delta]) => ({ sql: SQL.leg, params: [acct, id, delta] })),
          ],
          writes: true,
          keys: [from, to].map((key) => ({ keyspace: 'bank', key })),
        };
      }
      case 'balances':
        return {
          kind,
          f: F.balances,
          value: { balances: null },
          txn: undefined,
          statements: [{ sql: SQL.balances, params: [], reads: { kind: 'balances' } }],
          writes: false,
          keys: this.accounts.map((key) => ({ keyspace: 'bank', key })),
        };
      default:
        return assertNever(kind);
    }
  }

  /** 2-3 keys in ascending order (locks taken in one global order), each appended and/or read. */
  #listTxn(rng: Rng): PlannedOp {
    const keys = this.#distinct(rng, rng.int(2, 3), () => this.lists.forAppend(rng)).sort(
      (a, b) => a - b,
    );
    const ops: ListMicro[] = [];
    const statements: Statement[] = [];
    const patterns = ['a', 'a', 'ar', 'ra', 'r'] as const;
    keys.forEach((k, i) => {
      const p = i === 0 ? rng.pick(['a', 'ar', 'ra'] as const) : rng.pick(patterns);
      for (const step of p) {
        if (step === 'a') {
          const v = this.#value++;
          ops.push(['append', k, v]);
          statements.push({ sql: SQL.append, params: [k, v] });
        } else {
          statements.push({
            sql: SQL.readList,
            params: [k],
            reads: { kind: 'list', micro: ops.length },
          });
          ops.push(['r', k, null]);
        }
      }
    });
    return {
      kind: 'list-txn',
      f: F.list,
      value: { mode: 'txn', ops },
      txn: 'read committed',
      statements,
      writes: true,
      keys: keys.map((key) => ({ keyspace: 'lists', key })),
    };
  }

  #distinct(rng: Rng, n: number, draw: () => number): number[] {
    const out = new Set<number>();
    for (let tries = 0; out.size < n && tries < 100; tries++) out.add(draw());
    return [...out];
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected operation kind ${String(x)}`);
}
