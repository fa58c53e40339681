// The acceptance test for moves under load, and DDL during a move, both through the
// router's part of a cutover (the Held decision, epochs acknowledged after their statements
// drain, and the 55006 check of the catalog's moves on the DDL path).
//
// 8 writers through the router insert unique keys and increment counters across every range
// (some on the moving range) during 5 cutovers in a row (move there, move back, split+move,
// merge, move; TESSERA_MOVE_CUTOVERS=20 runs 20). Afterwards: every acknowledged insert exists
// exactly once, on the node owning its hash; each counter equals its acknowledged increments (one
// whose outcome the client could not know may count 0 or 1); no client saw an error; no row of a
// moved range is left on its old node; no publication, subscription or slot on any node.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState, type Range } from '@tessera/proto';
import pg from 'pg';
import {
  bulkInsert,
  moveRequest,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';

const ENABLED = process.env['TESSERA_MOVE_UNDER_LOAD'] !== '0';
const SKIP = ENABLED ? false : 'TESSERA_MOVE_UNDER_LOAD=0 turns it off';
const CUTOVERS = Number(process.env['TESSERA_MOVE_CUTOVERS'] ?? 5);
const WRITERS = 8;
const COUNTERS = 64;

let c: MoverCluster;
let baseMover: Awaited<ReturnType<MoverCluster['startMover']>> | undefined;

before(async () => {
  if (!ENABLED) return;
  c = await startMoverCluster({
    ranges: 4,
    tables: [
      { name: 'events', keyColumn: 'id' },
      { name: 'counters', keyColumn: 'id' },
    ],
    schema: [
      `create table events (id bigint primary key, writer int not null)`,
      `create table counters (id bigint primary key, n bigint not null default 0)`,
    ],
    referenceTables: [],
  });
  const r = await c.viaRouter();
  try {
    await bulkInsert(
      r,
      'counters',
      ['id', 'n'],
      Array.from({ length: COUNTERS }, (_, i) => [i + 1, 0]),
    );
  } finally {
    await r.end();
  }
  baseMover = await c.startMover();
});
after(async () => {
  await c?.dispose();
});

/** SQLSTATEs after which the statement surely did not happen. */
const DEFINITE = /^(23|40|42|55|57014|0A000|22)/;

interface Writer {
  inserted: bigint[];
  increments: Map<number, { acked: number; unknown: number }>;
  errors: string[];
}

async function writer(url: string, w: number, stop: () => boolean, out: Writer): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  let seq = 0n;
  try {
    while (!stop()) {
      if (Math.random() < 0.5) {
        const id = BigInt(w) * 1_000_000_000n + ++seq;
        try {
          await client.query('insert into events (id, writer) values ($1, $2)', [id.toString(), w]);
          out.inserted.push(id);
        } catch (e) {
          out.errors.push(
            `insert ${id}: ${(e as { code?: string }).code ?? ''} ${(e as Error).message}`,
          );
        }
      } else {
        const k = 1 + Math.floor(Math.random() * COUNTERS);
        const slot = out.increments.get(k) ?? { acked: 0, unknown: 0 };
        out.increments.set(k, slot);
        try {
          await client.query('update counters set n = n + 1 where id = $1', [k]);
          slot.acked++;
        } catch (e) {
          const code = (e as { code?: string }).code ?? '';
          if (!DEFINITE.test(code)) slot.unknown++;
          out.errors.push(`increment ${k}: ${code} ${(e as Error).message}`);
        }
      }
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function runJob(req: { kind: string; specJson: string; steps: string[] }) {
  const done = await waitForJob(c.jobs, (await c.jobs.submitJob(req)).id, 300_000);
  assert.equal(done.state, JobState.DONE, `${req.kind} ${req.specJson}: ${done.error}`);
}

async function cutover(i: number): Promise<string> {
  const rs = (await c.catalog.getCatalog({})).ranges.filter((r) => r.keyspace === 'accounts');
  const other = (r: Range) => (r.owner === 'data1' ? 'data2' : 'data1');
  switch (i % 5) {
    case 0:
    case 1:
      await runJob(moveRequest('accounts', rs[0]!.lo, other(rs[0]!)));
      return `move ${rs[0]!.lo}`;
    case 2: {
      const r = rs[1]!;
      const at = r.lo + (r.hi - r.lo) / 2n + 1n;
      await runJob({
        kind: 'split',
        specJson: JSON.stringify({
          keyspace: 'accounts',
          lo: r.lo.toString(),
          at: at.toString(),
          moveTo: other(r),
        }),
        steps: ['split', 'move'],
      });
      return `split+move ${r.lo}`;
    }
    case 3: {
      await runJob({
        kind: 'merge',
        specJson: JSON.stringify({
          keyspace: 'accounts',
          lo: rs[1]!.lo.toString(),
          lo2: rs[2]!.lo.toString(),
        }),
        steps: ['move', 'merge'],
      });
      return `merge ${rs[1]!.lo}`;
    }
    default: {
      const r = rs[rs.length - 1]!;
      await runJob(moveRequest('accounts', r.lo, other(r)));
      return `move ${r.lo}`;
    }
  }
}

test(
  `${CUTOVERS} cutovers under 8 writers: nothing lost, nothing duplicated, no client error`,
  { skip: SKIP },
  async (t) => {
    let stopping = false;
    const outs: Writer[] = Array.from({ length: WRITERS }, () => ({
      inserted: [],
      increments: new Map(),
      errors: [],
    }));
    const loops = outs.map((o, w) => writer(c.routerUrl(), w + 1, () => stopping, o));
    const done: string[] = [];
    try {
      for (let i = 0; i < CUTOVERS; i++) done.push(await cutover(i));
    } finally {
      stopping = true;
      await Promise.all(loops);
    }
    t.diagnostic(`cutovers: ${done.join(', ')}`);
    const errors = outs.flatMap((o) => o.errors);
    t.diagnostic(`client errors: ${errors.length} (first: ${errors.slice(0, 3).join(' | ')})`);

    // Every acknowledged insert exactly once, on the node that owns its hash.
    const cat = await c.catalog.getCatalog({});
    const ranges = cat.ranges.filter((r) => r.keyspace === 'accounts');
    const ownerOf = (id: bigint) => {
      const h = hashKeyText('bigint', id.toString(), 0n);
      return ranges.find((r) => r.lo <= h && h <= r.hi)!.owner;
    };
    const where = new Map<string, string[]>();
    for (const [name, server] of c.byName) {
      for (const row of await server.query<{ id: string }>('select id::text from events'))
        where.set(row.id, [...(where.get(row.id) ?? []), name]);
    }
    const acked = outs.flatMap((o) => o.inserted);
    let lost = 0;
    let duplicated = 0;
    let misplaced = 0;
    for (const id of acked) {
      const nodes = where.get(id.toString()) ?? [];
      if (nodes.length === 0) lost++;
      else if (nodes.length > 1) duplicated++;
      else if (nodes[0] !== ownerOf(id)) misplaced++;
    }
    assert.deepEqual(
      { lost, duplicated, misplaced },
      { lost: 0, duplicated: 0, misplaced: 0 },
      `${acked.length} acknowledged inserts`,
    );
    for (const [id, nodes] of where)
      assert.equal(nodes.length, 1, `event ${id} is on ${nodes.join(' and ')}`);

    // Counters: acknowledged increments, plus at most the ones whose outcome was unknown.
    const via = await c.viaRouter();
    try {
      const { rows } = await via.query<{ id: string; n: string }>(
        'select id::text, n::text from counters order by id',
      );
      for (const r of rows) {
        let acked = 0;
        let unknown = 0;
        for (const o of outs) {
          const s = o.increments.get(Number(r.id));
          acked += s?.acked ?? 0;
          unknown += s?.unknown ?? 0;
        }
        const n = Number(r.n);
        assert.ok(
          n >= acked && n <= acked + unknown,
          `counter ${r.id} = ${n}, acknowledged ${acked}, unknown ${unknown}`,
        );
      }
    } finally {
      await via.end();
    }

    // No row of any range on a node that does not own it; nothing of the moves left.
    const verify = await waitForJob(
      c.jobs,
      (
        await c.jobs.submitJob({
          kind: 'verify',
          specJson: '{"keyspace":"accounts"}',
          steps: ['verify'],
        })
      ).id,
    );
    assert.equal(JSON.parse(verify.resultJson).ok, true, verify.resultJson);
    assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
    assert.deepEqual(errors, [], 'no client saw an error');
  },
);

test(
  'DDL on a table of a keyspace being moved is refused through the router with 55006 naming the job',
  { skip: SKIP },
  async () => {
    const rs = (await c.catalog.getCatalog({})).ranges.filter((r) => r.keyspace === 'accounts');
    let refused: { code?: string; hint?: string } | undefined;
    let jobId = 0n;
    await baseMover?.stop();
    const mover = await c.startMover(
      {},
      {
        hooks: {
          onPhase: async (job, phase) => {
            if (phase !== 'catching up') return;
            jobId = job;
            const via = await c.viaRouter();
            try {
              await via.query('alter table events add column note text');
            } catch (e) {
              refused = e as { code?: string; hint?: string };
            } finally {
              await via.end();
            }
          },
        },
      },
    );
    try {
      const other = rs[0]!.owner === 'data1' ? 'data2' : 'data1';
      await runJob(moveRequest('accounts', rs[0]!.lo, other));
      assert.equal(refused?.code, '55006');
      assert.match(refused?.hint ?? '', new RegExp(`tessera jobs (watch|cancel) ${jobId}`));
    } finally {
      await mover.stop();
    }
  },
);
