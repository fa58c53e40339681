// The pgbench workloads, as custom scripts that pin the shard key (bid) in every statement: the
// tables are distributed by bid, so a statement without it would be a scatter, not the routed
// single-node statement these benchmarks measure. Scale and layout are pgbench's own: 100,000
// accounts and 10 tellers per branch, aid in (bid-1)*100000+1 .. bid*100000.

export const ACCOUNTS_PER_BRANCH = 100_000;
export const TELLERS_PER_BRANCH = 10;

export type WorkloadKind = 'select' | 'write' | 'tpcb-branch';

export interface WorkloadSpec {
  kind: WorkloadKind;
  /** SQL statements one transaction sends (BEGIN and END count): the divisor of CPU per statement. */
  statementsPerTxn: number;
  description: string;
}

export const WORKLOADS: Readonly<Record<WorkloadKind, WorkloadSpec>> = {
  select: {
    kind: 'select',
    statementsPerTxn: 1,
    description:
      'pgbench -S (select-only) -M prepared: one primary-key SELECT on pgbench_accounts, with the shard key pinned (AND bid = :bid)',
  },
  write: {
    kind: 'write',
    statementsPerTxn: 4,
    description:
      "-M prepared: BEGIN; UPDATE one account's balance; INSERT a history row; END (one branch)",
  },
  'tpcb-branch': {
    kind: 'tpcb-branch',
    statementsPerTxn: 7,
    description:
      'pgbench TPC-B-like (-b tpcb-like) -M prepared, with account and teller chosen within one random branch',
  },
};

/**
 * The bids a script may pick from: a contiguous 1..n (pgbench -i's own layout), or any list (the
 * branches one node owns in a scale-out run), chosen uniformly either way.
 */
export type BidSet = { from: number; to: number } | { list: readonly number[] };

function pickBid(bids: BidSet): string {
  if ('from' in bids) return `\\set bid random(${bids.from}, ${bids.to})`;
  const list = bids.list;
  if (list.length === 0) throw new Error('a workload needs at least one branch');
  if (list.length === 1) return `\\set bid ${list[0]}`;
  // pgbench expressions have no arrays; a searched CASE over a random index is exact and cheap.
  const cases = list
    .slice(0, -1)
    .map((b, i) => `WHEN :k = ${i} THEN ${b}`)
    .join(' ');
  return `\\set k random(0, ${list.length - 1})\n\\set bid CASE ${cases} ELSE ${list.at(-1)} END`;
}

const PICK_ROW = `\\set aid (:bid - 1) * ${ACCOUNTS_PER_BRANCH} + random(1, ${ACCOUNTS_PER_BRANCH})
\\set tid (:bid - 1) * ${TELLERS_PER_BRANCH} + random(1, ${TELLERS_PER_BRANCH})
\\set delta random(-5000, 5000)`;

export function workloadScript(kind: WorkloadKind, bids: BidSet): string {
  const head = `${pickBid(bids)}\n${PICK_ROW}\n`;
  switch (kind) {
    case 'select':
      return `${head}SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;\n`;
    case 'write':
      return `${head}BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`;
    case 'tpcb-branch':
      return `${head}BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`;
    default:
      return assertNever(kind);
  }
}

function assertNever(x: never): never {
  throw new Error(`unknown workload ${String(x)}`);
}
