// Reproduction of what the ci soak found (list-stale-read): a transaction across nodes is
// acknowledged COMMIT while one participant has not run COMMIT PREPARED (it was restarting), and a
// read through the router after the acknowledgement does not see the write until the
// coordinator's recovery finishes it. One Postgres would never do that.
//
//   node --conditions=development --import tsx soak/src/repro/ack-before-commit-prepared.ts
//
// Steps: one router, stopped by TESSERA_FAULT_2PC=after-decision (ACTION=stop) right after the
// commit decision is logged; data2 is shut down; the router continues; data2 starts again 2 s
// later; COMMIT answers; the coordinator's background recovery is off (--recovery-interval-ms 0),
// so only the router can finish the commit on data2. Exits 0 when reproduced, 1 when not. The
// router now retries COMMIT PREPARED before it answers (libs/twopc finish.ts), so it is not:
// ack-before-commit-prepared.test.ts runs this in npm test and asserts that.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from '../cluster/cluster.js';
import { createTables, declareSchema, snapshotOf } from '../cluster/schema.js';
import { TABLES } from '../checker/values.js';
import { parsePlan } from '../plan/plan.js';

const sayOut = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

export interface ReproResult {
  reproduced: boolean;
  /** How the client's COMMIT ended. */
  answer: string;
  /** The row of key b read through the router after the answer, as JSON. */
  seen: string | undefined;
  /** Prepared transactions left on data2. */
  prepared: string[];
}

export async function reproduce(say: (s: string) => void = sayOut): Promise<ReproResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-repro-'));
  const plan = parsePlan(
    {
      cluster: {
        dataNodes: 2,
        coordinators: 1,
        routers: 1,
        network: 'loopback',
        linkProxy: false,
        coordinatorArgs: ['--recovery-interval-ms', '0'],
      },
    },
    'repro',
  ).cluster;
  const cluster = await Cluster.start(plan, dir, { log: say, note: () => undefined });
  try {
    await declareSchema(cluster, 2);
    await cluster.startRouters();
    await createTables(cluster);
    const snapshot = snapshotOf(await cluster.getCatalog());
    const ownerOf = (k: number) => snapshot.ownerOfKey(TABLES.lists.keyspace, String(k));
    let a = 1;
    while (ownerOf(a) !== 'data1') a++;
    let b = 1;
    while (ownerOf(b) !== 'data2') b++;
    say(`key ${a} is on data1, key ${b} on data2`);

    const router = cluster.routers[0]!;
    await router.process.stop();
    router.process.nextEnv = {
      TESSERA_FAULT_2PC: 'after-decision',
      TESSERA_FAULT_2PC_ACTION: 'stop',
    };
    router.process.start();
    await cluster.waitForRouter(router);

    const c = await cluster.routerClient(router);
    await c.query('begin');
    await c.query('insert into lists (k, vals) values ($1, array[1]::bigint[])', [a]);
    await c.query('insert into lists (k, vals) values ($1, array[2]::bigint[])', [b]);
    const commit = c.query('commit');
    await router.process.waitForLog('TESSERA_FAULT_2PC: SIGSTOPping', 30_000);
    say('the router stopped itself after logging the commit decision; shutting data2 down');
    const data2 = cluster.node('data2');
    await data2.pg.stop('fast');
    await router.process.signal('SIGCONT');
    const restarted = sleep(2000).then(() => data2.pg.start());
    const answer = await commit.then(
      (r) => `COMMIT answered ${r.command}`,
      (e: { code?: string; message: string }) => `COMMIT failed ${e.code}: ${e.message}`,
    );
    say(answer);
    await restarted;
    let seen: string | undefined;
    for (let i = 0; i < 20 && seen === undefined; i++) {
      const r = await cluster.routerClient(router);
      try {
        const rows = (await r.query('select vals from lists where k = $1', [b])).rows;
        seen = JSON.stringify(rows);
      } catch {
        await sleep(500); // the router's pool to data2 reconnects
      } finally {
        await r.end().catch(() => undefined);
      }
    }
    const node = await cluster.nodeClient(data2, 'postgres');
    const prepared = (await node.query('select gid from pg_prepared_xacts')).rows.map(
      (r) => r.gid as string,
    );
    await node.end();
    say(`after the acknowledgement, a new read of key ${b} through the router returns ${seen}`);
    say(`prepared on data2: ${prepared.join(', ') || 'none'}`);
    await c.end().catch(() => undefined);
    const reproduced = answer === 'COMMIT answered COMMIT' && seen === '[]' && prepared.length > 0;
    say(reproduced ? 'REPRODUCED: acknowledged commit not visible on data2' : 'not reproduced');
    return { reproduced, answer, seen, prepared };
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1])
  reproduce().then(
    (r) => process.exit(r.reproduced ? 0 : 1),
    (e: unknown) => {
      sayOut(`error: ${e instanceof Error ? e.stack : String(e)}`);
      process.exit(2);
    },
  );
