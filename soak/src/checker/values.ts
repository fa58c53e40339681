// The shapes of operation values and final-state records the workloads write and the checker
// reads (docs/soak.md lists them). Readers are lenient in what they skip and strict in what they
// trust: a value that does not have the expected shape is reported, never guessed at.

/** The sharded tables of the soak schema and their key columns. */
export const TABLES = {
  lists: { name: 'lists', key: 'k', keyspace: 'soak_lists' },
  counters: { name: 'counters', key: 'k', keyspace: 'soak_counters' },
  ledger: { name: 'ledger', key: 'k', keyspace: 'soak_counters' },
  accounts: { name: 'accounts', key: 'id', keyspace: 'soak_bank' },
  legs: { name: 'legs', key: 'account_id', keyspace: 'soak_bank' },
} as const;

/** f of the client operations. */
export const F = {
  list: 'list',
  counter: 'counter',
  transfer: 'transfer',
  balances: 'balances',
} as const;

/** List micro-operations (Elle's list-append): append a unique value, or read the whole list. */
export type ListMicro = ['append', number, number] | ['r', number, number[] | null];
/** Counter micro-operations: add d (> 0) under a unique ledger id, or read the count. */
export type CounterMicro = ['add', number, number, number] | ['r', number, number | null];

export interface ListOpValue {
  via?: string;
  /** 'auto' (one statement, autocommit), 'txn' (BEGIN ... COMMIT). */
  mode?: string;
  ops: ListMicro[];
  error?: { code?: string; message?: string };
}

export interface CounterOpValue {
  via?: string;
  mode?: string;
  ops: CounterMicro[];
  error?: { code?: string; message?: string };
}

export interface TransferValue {
  via?: string;
  id: number;
  from: number;
  to: number;
  amount: number;
  error?: { code?: string; message?: string };
}

export interface BalancesValue {
  via?: string;
  /** [account id, balance] of every account read; null until the read completes. */
  balances: [number, number][] | null;
  error?: { code?: string; message?: string };
}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

export function listMicros(value: unknown): ListMicro[] | undefined {
  const ops = (value as { ops?: unknown } | null)?.ops;
  if (!Array.isArray(ops)) return undefined;
  const out: ListMicro[] = [];
  for (const m of ops) {
    if (!Array.isArray(m) || !isNum(m[1])) return undefined;
    if (m[0] === 'append' && isNum(m[2])) out.push(['append', m[1], m[2]]);
    else if (m[0] === 'r' && (m[2] === null || (Array.isArray(m[2]) && m[2].every(isNum))))
      out.push(['r', m[1], m[2] as number[] | null]);
    else return undefined;
  }
  return out;
}

export function counterMicros(value: unknown): CounterMicro[] | undefined {
  const ops = (value as { ops?: unknown } | null)?.ops;
  if (!Array.isArray(ops)) return undefined;
  const out: CounterMicro[] = [];
  for (const m of ops) {
    if (!Array.isArray(m) || !isNum(m[1])) return undefined;
    if (m[0] === 'add' && isNum(m[2]) && isNum(m[3])) out.push(['add', m[1], m[2], m[3]]);
    else if (m[0] === 'r' && (m[2] === null || isNum(m[2])))
      out.push(['r', m[1], m[2] as number | null]);
    else return undefined;
  }
  return out;
}

export function transferOf(value: unknown): TransferValue | undefined {
  const v = value as Partial<TransferValue> | null;
  if (!v || !isNum(v.id) || !isNum(v.from) || !isNum(v.to) || !isNum(v.amount)) return undefined;
  return v as TransferValue;
}

export function balancesOf(value: unknown): [number, number][] | undefined {
  const b = (value as { balances?: unknown } | null)?.balances;
  if (!Array.isArray(b)) return undefined;
  for (const pair of b) if (!Array.isArray(pair) || !isNum(pair[0]) || !isNum(pair[1])) return;
  return b as [number, number][];
}
