// Sensitivity on real data (issue 18): a short soak on a real cluster must come out clean; then,
// one at a time, a row deleted behind Tessera's back, a row nobody wrote, and a list value
// duplicated on a node must each be found by a new final-state probe of the same history and
// cluster, as lost / invented / duplicated. Undone, the next probe is clean again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { snapshotOf } from './cluster/schema.js';
import { checkEvents, type CheckResult } from './checker/check.js';
import { ANOMALY_CLASSES, type AnomalyClass } from './checker/findings.js';
import { TABLES } from './checker/values.js';
import type { Cluster } from './cluster/cluster.js';
import { readHistoryFile } from './history/read.js';
import { parsePlan } from './plan/plan.js';
import { finalProbe, runPlan, type RunResult } from './run.js';

const SECONDS = Number(process.env.TESSERA_SOAK_SENSITIVITY_SECONDS ?? 15);

test(
  'a short soak is clean, and a lost, an invented and a duplicated row are each found',
  { timeout: 600_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-soak-sensitivity-'));
    const plan = parsePlan(
      {
        seconds: SECONDS,
        cluster: { dataNodes: 2, coordinators: 1, routers: 1 },
        workload: {
          rate: 100,
          clients: 8,
          lists: { activeKeys: 6, maxAppendsPerKey: 50 },
          counters: { keys: 6 },
          bank: { accounts: 6 },
        },
        settleTimeoutS: 60,
      },
      'sensitivity',
    );
    let run: RunResult | undefined;
    try {
      run = await runPlan({
        plan,
        command: 'sensitivity test',
        resultsDir: join(dir, 'results'),
        runsDir: join(dir, 'runs'),
        log: () => {},
        keepCluster: true,
      });
      const base = run.report.check;
      assert.equal(base.anomalyTotal, 0, JSON.stringify(base.examples, null, 1));
      assert.ok(base.counters.adds > 10 && base.lists.appends > 10, 'the soak did something');
      const cluster = run.cluster!;
      const snapshot = snapshotOf(await cluster.getCatalog());
      const owner = (keyspace: string, key: number) =>
        cluster.node(snapshot.ownerOfKey(keyspace, String(key)));
      let probe = 1;
      const baseLength = (await readHistoryFile(run.historyPath)).events.length;
      // The soak's history with only this probe after it: each mutation is judged on its own.
      const recheck = async (): Promise<CheckResult> => {
        await run!.history!.flush();
        const before = (await readHistoryFile(run!.historyPath)).events.length;
        await finalProbe(cluster, run!.history!, ++probe, run!.probeKeys, run!.newProcess, 30_000);
        await run!.history!.flush();
        const { events, malformed } = await readHistoryFile(run!.historyPath);
        return checkEvents([...events.slice(0, baseLength), ...events.slice(before)], malformed);
      };
      const onNode = async (
        c: Cluster['nodes'][number],
        sql: string,
        params: unknown[],
      ): Promise<number> => {
        const client = await cluster.nodeClient(c);
        try {
          return (await client.query(sql, params)).rowCount ?? 0;
        } finally {
          await client.end();
        }
      };

      // 1. One acknowledged ledger row deleted on its node: lost.
      const ackAdd = await acknowledgedAdd(run.historyPath);
      const ledgerNode = owner(TABLES.ledger.keyspace, ackAdd.k);
      assert.equal(
        await onNode(ledgerNode, 'delete from ledger where k = $1 and op_id = $2', [
          ackAdd.k,
          ackAdd.id,
        ]),
        1,
      );
      const lost = await recheck();
      assert.ok(lost.anomalies['counter-lost'] >= 1, JSON.stringify(lost.anomalies));
      assert.ok(lost.examples['counter-lost']!.some((e) => e.includes(`ok add ${ackAdd.id} `)));
      await onNode(ledgerNode, 'insert into ledger (k, op_id, d) values ($1, $2, $3)', [
        ackAdd.k,
        ackAdd.id,
        ackAdd.d,
      ]);

      // 2. A list row nobody wrote, on the node its key belongs to (so the fence lets it in): invented.
      const strangerKey = 987_654_321;
      await onNode(
        owner(TABLES.lists.keyspace, strangerKey),
        'insert into lists (k, vals) values ($1, $2)',
        [strangerKey, [424_242_424]],
      );
      const invented = await recheck();
      assert.ok(invented.anomalies['list-invented'] >= 1, JSON.stringify(invented.anomalies));
      assert.ok(invented.examples['list-invented']!.some((e) => e.includes('424242424')));
      await onNode(owner(TABLES.lists.keyspace, strangerKey), 'delete from lists where k = $1', [
        strangerKey,
      ]);

      // 3. A list value duplicated on its node: duplicated.
      const key = await listKeyWithValues(run.historyPath);
      const listNode = owner(TABLES.lists.keyspace, key);
      assert.equal(
        await onNode(listNode, 'update lists set vals = vals || vals[1] where k = $1', [key]),
        1,
      );
      const duplicated = await recheck();
      assert.ok(duplicated.anomalies['list-duplicated'] >= 1, JSON.stringify(duplicated.anomalies));
      only(duplicated, 'list-duplicated');
      await onNode(listNode, 'update lists set vals = vals[1:cardinality(vals) - 1] where k = $1', [
        key,
      ]);

      // Undone: clean again (the checker answers to the data, not to the history alone).
      const clean = await recheck();
      assert.equal(clean.anomalyTotal, 0, JSON.stringify(clean.examples, null, 1));
      // The counter itself still counts the add its ledger row no longer shows.
      only(lost, 'counter-lost', 'counter-ledger-mismatch');
      only(invented, 'list-invented');
    } finally {
      await run?.history?.close();
      await run?.cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

function only(r: CheckResult, ...expected: AnomalyClass[]): void {
  assert.deepEqual(
    ANOMALY_CLASSES.filter((c) => r.anomalies[c] > 0),
    expected,
    JSON.stringify(r.examples, null, 1),
  );
}

/** An acknowledged counter add of the run (ok, single key). */
async function acknowledgedAdd(path: string): Promise<{ k: number; d: number; id: number }> {
  const { events } = await readHistoryFile(path);
  for (const e of events) {
    if (e.f !== 'counter' || e.type !== 'ok') continue;
    const ops = (e.value as { ops: unknown[][] }).ops;
    const add = ops.find((m) => m[0] === 'add');
    if (add) return { k: add[1] as number, d: add[2] as number, id: add[3] as number };
  }
  throw new Error('no acknowledged counter add in the history');
}

/** A list key whose final value (the first probe's read through the router) is not empty. */
async function listKeyWithValues(path: string): Promise<number> {
  const { events } = await readHistoryFile(path);
  for (const e of events) {
    if (e.f !== 'list' || e.type !== 'ok') continue;
    const v = e.value as { probe?: boolean; ops: unknown[][] };
    if (!v.probe) continue;
    const read = v.ops.find((m) => Array.isArray(m[2]) && (m[2] as unknown[]).length > 1);
    if (read) return read[1] as number;
  }
  throw new Error('no list with values at the end');
}
