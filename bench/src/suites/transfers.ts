// The pairs of accounts the 2pc suite's transfers move money between: precomputed by node, so a
// pgbench script can pick a pair on one node or across two with one lookup, and the script itself.
export const pairsDdl = (table: string) =>
  `create table ${table} (i int primary key, a bigint not null, b bigint not null)`;

export type PairKind = 'local' | 'cross';
export type Pair = readonly [a: bigint, b: bigint];

/**
 * pgbench script: a pair of accounts looked up by a random index (a < b, so every transfer locks
 * in id order and two transfers never wait on each other across nodes, where no deadlock detector
 * would see it), then a transfer of +-1 between them in one transaction.
 */
export function transferScript(table: string, pairs: number): string {
  return `\\set i random(1, ${pairs})
\\set d random(0, 1) * 2 - 1
SELECT a, b FROM ${table} WHERE i = :i \\gset
BEGIN;
UPDATE accounts SET balance = balance - :d WHERE id = :a;
UPDATE accounts SET balance = balance + :d WHERE id = :b;
COMMIT;
`;
}

/** mulberry32: a small seeded generator, so every run transfers between the same pairs. */
function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** `count` pairs of distinct accounts on one node (local) or on two different nodes (cross). */
export function makePairs(byNode: readonly bigint[][], kind: PairKind, count: number): Pair[] {
  const random = seeded(kind === 'local' ? 1 : 2);
  const nodes = byNode.map((_, i) => i).filter((i) => byNode[i]!.length >= 2);
  if (nodes.length < (kind === 'local' ? 1 : 2))
    throw new Error(`too few accounts per node for ${kind} pairs`);
  const out: Pair[] = [];
  for (let i = 0; i < count; i++) {
    const ka = nodes[i % nodes.length]!;
    const kb = kind === 'local' ? ka : nodes[(i + 1 + random(nodes.length - 1)) % nodes.length]!;
    const from = byNode[ka]!;
    const to = byNode[kb]!;
    const a = from[random(from.length)]!;
    let b = to[random(to.length)]!;
    if (b === a) b = to[(to.indexOf(a) + 1) % to.length]!;
    out.push(a < b ? [a, b] : [b, a]);
  }
  return out;
}

export async function insertPairs(
  server: { query(sql: string, params?: unknown[]): Promise<unknown> },
  table: string,
  pairs: readonly Pair[],
): Promise<void> {
  await server.query(
    `insert into ${table} (i, a, b) select n, a, b from unnest($1::bigint[], $2::bigint[]) with ordinality as u(a, b, n)`,
    [pairs.map((p) => String(p[0])), pairs.map((p) => String(p[1]))],
  );
}
