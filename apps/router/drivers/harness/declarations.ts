// The keyspaces and tables every program's schema uses, declared in the catalog before any program
// creates them. The catalog names schema.table, not a database, so one declaration serves every
// program's database. A table not declared here (audit) is global: the home node only.

export interface Declarations {
  keyspaces: readonly { name: string; type: 'bigint' | 'int'; ranges: number }[];
  tables: readonly (
    | { kind: 'sharded'; name: string; column: string; keyspace: string }
    | { kind: 'reference'; name: string }
  )[];
}

export const DECLARATIONS: Declarations = {
  keyspaces: [
    // Four ranges alternate over the two data nodes: accounts 1 and 2 land on different nodes.
    { name: 'drivers', type: 'bigint', ranges: 4 },
    // pgbench's key columns are int; its tables are distributed by branch.
    { name: 'branches', type: 'int', ranges: 4 },
  ],
  tables: [
    { kind: 'sharded', name: 'public.accounts', column: 'id', keyspace: 'drivers' },
    { kind: 'sharded', name: 'public.entries', column: 'account_id', keyspace: 'drivers' },
    { kind: 'sharded', name: 'public.notes', column: 'account_id', keyspace: 'drivers' },
    { kind: 'sharded', name: 'public.tags', column: 'account_id', keyspace: 'drivers' },
    { kind: 'reference', name: 'public.currencies' },
    { kind: 'sharded', name: 'public.pgbench_branches', column: 'bid', keyspace: 'branches' },
    { kind: 'sharded', name: 'public.pgbench_tellers', column: 'bid', keyspace: 'branches' },
    { kind: 'sharded', name: 'public.pgbench_accounts', column: 'bid', keyspace: 'branches' },
    { kind: 'sharded', name: 'public.pgbench_history', column: 'bid', keyspace: 'branches' },
  ],
};
