// `tessera verify KEYSPACE[:LO]`: the placement check on its own. On every node and in every
// database holding the keyspace's tables, the rows of the keyspace (or of one range) that the
// node does not own: zero everywhere means every row is on its owner. Also each range's rows per
// table on its owner. (A move's own verification compares the two copies inside its freeze;
// after the move there is one copy, so this is what can be checked.)
import { fenceCheckSql } from '@tessera/keyspace';
import { NodeState } from '@tessera/proto';
import type { JobKind } from '../job/kind.js';
import { keyspaceInfo, nodeAddr, ownedRanges, shardedTables } from '../move/catalog-view.js';
import { databasesOf } from '../move/facts.js';
import { ident, qualified } from '../nodes/sessions.js';
import { tableExists } from '../pg/rows.js';

export interface VerifySpec {
  keyspace: string;
  lo?: string;
}

export interface Misplaced {
  node: string;
  database: string;
  table: string;
  rows: number;
}

export const verifyKind: JobKind = {
  kind: 'verify',
  steps: () => ['verify'],
  async run(rt) {
    const spec = rt.spec<VerifySpec>();
    await rt.phase('verifying', 'verify');
    const catalog = await rt.catalog();
    const ks = keyspaceInfo(catalog, spec.keyspace);
    const ranges = catalog.ranges.filter(
      (r) => r.keyspace === spec.keyspace && (spec.lo === undefined || r.lo === BigInt(spec.lo)),
    );
    if (ranges.length === 0)
      throw new Error(`keyspace ${spec.keyspace} has no range starting at ${spec.lo}`);
    const tables = shardedTables(catalog, spec.keyspace);
    const misplaced: Misplaced[] = [];
    const owned: { lo: string; owner: string; database: string; table: string; rows: number }[] =
      [];
    let checked = 0;
    for (const n of catalog.nodes) {
      if (n.state === NodeState.REMOVED) continue;
      const node = nodeAddr(catalog, n.name);
      const mine = ownedRanges(catalog, spec.keyspace, n.name);
      for (const db of await databasesOf(rt, node)) {
        await rt.nodes.with(node, db, async (c) => {
          for (const t of tables) {
            if (!(await tableExists(c, t))) continue;
            const col = ident(t.keyColumn);
            const inScope = fenceCheckSql(col, ks.keyType, ks.seed, ranges);
            const ownedHere = fenceCheckSql(col, ks.keyType, ks.seed, mine);
            const r = await c.query<{ total: string; wrong: string }>(
              `select count(*)::text as total, count(*) filter (where not (${ownedHere}))::text as wrong
                 from ${qualified(t.schema, t.name)} where ${inScope}`,
            );
            checked += Number(r.rows[0]!.total);
            const wrong = Number(r.rows[0]!.wrong);
            if (wrong > 0)
              misplaced.push({
                node: n.name,
                database: db,
                table: `${t.schema}.${t.name}`,
                rows: wrong,
              });
            for (const range of ranges.filter((x) => x.owner === n.name)) {
              const cnt = await c.query<{ n: string }>(
                `select count(*)::text as n from ${qualified(t.schema, t.name)} where ${fenceCheckSql(col, ks.keyType, ks.seed, [range])}`,
              );
              owned.push({
                lo: range.lo.toString(),
                owner: n.name,
                database: db,
                table: `${t.schema}.${t.name}`,
                rows: Number(cnt.rows[0]!.n),
              });
            }
          }
        });
      }
    }
    const result = {
      keyspace: spec.keyspace,
      lo: spec.lo ?? null,
      ok: misplaced.length === 0,
      rowsChecked: checked,
      misplaced,
      ranges: owned,
    };
    await rt.done('verify', { ok: result.ok, misplaced: misplaced.length });
    return { state: 'done', result };
  },
  async undo() {},
};
