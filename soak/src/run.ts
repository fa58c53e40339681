// One soak run (docs/soak.md, "Running a plan"): start the cluster, declare the schema, drive the
// workloads through the routers while the nemesis runs the seeded fault schedule, heal, settle,
// probe the final state into the history, check the history, and write the report.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkEvents } from './checker/check.js';
import { BANK_INIT } from './checker/bank.js';
import { Cluster } from './cluster/cluster.js';
import { waitReplicated } from './cluster/ha.js';
import { retrySetup } from './cluster/setup-retry.js';
import {
  bankAccounts,
  createAccounts,
  createTables,
  declareSchema,
  snapshotOf,
} from './cluster/schema.js';
import { REPO_ROOT } from './entry.js';
import type { ClusterShape } from './faults/fault.js';
import { Nemesis } from './faults/nemesis.js';
import { drawSchedule } from './faults/schedule.js';
import { HistoryWriter } from './history/writer.js';
import { readHistoryFile } from './history/read.js';
import type { Plan } from './plan/plan.js';
import { finalProbe } from './probe/final.js';
import { catalogRecord, preparedLeft } from './probe/probe.js';
import { cutoversOf, lastLine, type SoakReport } from './report/model.js';
import { renderMarkdown } from './report/markdown.js';
import { RecoveryTracker } from './report/recovery.js';
import { GROWTH_RULE, summarize } from './report/growth.js';
import { sampleOnce, type RssSample } from './report/rss.js';
import { renderSvg } from './report/svg.js';
import { Timeline } from './report/timeline.js';
import { Rng } from './rng.js';
import { Workload } from './workload/runner.js';

export interface RunOptions {
  plan: Plan;
  command: string;
  /** Where the report goes (soak/results). */
  resultsDir: string;
  /** Where the history and logs go (soak/runs). */
  runsDir: string;
  log(line: string): void;
  /** Leave the cluster running and return it (the sensitivity test mutates it and re-probes). */
  keepCluster?: boolean;
}

export interface RunResult {
  report: SoakReport;
  files: { json: string; md: string; svg: string };
  historyPath: string;
  cluster?: Cluster;
  /** With the cluster kept: the history, still open, for more probes. */
  history?: HistoryWriter;
  /** The keys the final probe reads (for a later re-probe). */
  probeKeys: { lists: number[]; counters: number[]; accounts: number[] };
  newProcess: () => number;
}

const RSS_EVERY_MS = 10_000;

export { finalProbe } from './probe/final.js';

export async function runPlan(o: RunOptions): Promise<RunResult> {
  const { plan, log } = o;
  const startedAt = new Date().toISOString();
  const stamp = startedAt.replace(/[:.]/g, '-').slice(0, 19);
  const runDir = join(o.runsDir, `${stamp}-${plan.name}-s${plan.seed}`);
  mkdirSync(runDir, { recursive: true });
  const historyPath = join(runDir, 'history.jsonl');
  const history = new HistoryWriter(historyPath);
  history.note('harness', 'plan', { plan });
  log(`soak ${plan.name}: ${plan.seconds} s, seed ${plan.seed}; history ${rel(historyPath)}`);

  const cluster = await Cluster.start(plan.cluster, runDir, {
    log,
    note: (f, v) => history.note('harness', f, v),
  });
  let keep = false;
  try {
    await declareSchema(cluster, plan.cluster.rangesPerKeyspace);
    await cluster.startRouters();
    await createTables(cluster);
    let catalog = (await retrySetup(() => cluster.getCatalog(), {
      what: 'GetCatalog',
      timeoutMs: 120_000,
      log,
      beforeRetry: () => cluster.vip.waitForLeader(60_000),
    }))!;
    const snapshot = snapshotOf(catalog);
    const accounts = bankAccounts(
      snapshot,
      cluster.dataNodes.map((n) => n.name),
      plan.workload.bank.accounts,
    );
    const balances = await createAccounts(cluster, accounts, plan.workload.bank.balance);
    history.note('setup', BANK_INIT, { balances });
    // Replicated nodes start the load with their replica synchronous (a failover is possible).
    await waitReplicated(cluster, cluster.nodes, 180_000);
    history.note('harness', 'catalog', { catalog: catalogRecord(catalog) });
    log(
      `schema ready: ${accounts.length} accounts, ${catalog.ranges.length} ranges; routers ${cluster.routers.map((r) => `${r.name} ${r.address.host}:${r.address.port}`).join(', ')}`,
    );

    const shape: ClusterShape = {
      nodes: cluster.nodes.map((n) => ({ name: n.name, role: n.role })),
      coordinators: cluster.coordinators.map((c) => c.name),
      routers: cluster.routers.map((r) => r.name),
      netns: cluster.use === 'netns',
      linkProxy: plan.cluster.linkProxy,
      replicas: plan.cluster.replicas > 0,
    };
    const schedule = drawSchedule(
      plan.faults,
      plan.seconds,
      shape,
      new Rng(plan.seed).fork('faults'),
    );
    for (const s of schedule.skipped) log(`fault kind ${s.kind} skipped: ${s.reason}`);
    history.note('harness', 'schedule', {
      seed: plan.seed,
      skipped: schedule.skipped,
      items: schedule.items,
    });

    const timeline = new Timeline();
    const recovery = new RecoveryTracker();
    const workload = new Workload(
      cluster,
      history,
      plan.workload,
      new Rng(plan.seed).fork('workload'),
      accounts,
      snapshot,
      (r) => {
        timeline.record(r);
        recovery.record(r);
      },
    );
    const nemesis = new Nemesis(cluster, history, shape, log, {
      start: (run) => recovery.start(run.item.id, run.affects, run.startNs),
      end: (run) => recovery.end(run.item.id, run.endNs!),
    });
    const rss: RssSample[] = [];
    const rssTimer = setInterval(
      () => rss.push(...sampleOnce(history.now() / 1e9, cluster.servicePids())),
      RSS_EVERY_MS,
    );
    const catalogTimer = setInterval(() => {
      cluster.getCatalog().then(
        (c) => {
          catalog = c;
          workload.snapshot = snapshotOf(c);
          cluster.followCatalog(c);
        },
        () => undefined,
      );
    }, 10_000);
    const progress = setInterval(() => {
      const s = timeline.seconds();
      const recent = s.slice(-10);
      const ops = recent.reduce((a, c) => a + c.ok + c.fail + c.info, 0);
      log(
        `t=${Math.round(history.now() / 1e9)} s: ${Math.round(ops / Math.max(1, recent.length))} ops/s over the last ${recent.length} s; faults so far ${nemesis.runs.length}`,
      );
    }, 30_000);

    const loadStart = Date.now();
    workload.start();
    const faults = nemesis.run(
      schedule.items,
      plan.faults.firstAfterS,
      (plan.seconds - plan.faults.quietEndS) * 1000,
    );
    await sleep(plan.seconds * 1000);
    nemesis.stop();
    await faults;
    await workload.stop();
    const loadSeconds = (Date.now() - loadStart) / 1000;
    clearInterval(progress);
    log(`load done after ${Math.round(loadSeconds)} s; healing and settling`);

    await nemesis.healAll();
    for (const r of cluster.routers) await cluster.waitForRouter(r);
    await cluster.getCatalog().then(
      (c) => cluster.followCatalog(c),
      () => undefined,
    );
    const settleUntil = Date.now() + plan.settleTimeoutS * 1000;
    let left = await preparedLeft(cluster);
    while (left.length > 0 && Date.now() < settleUntil) {
      await sleep(1000);
      left = await preparedLeft(cluster);
    }
    if (left.length > 0) log(`still prepared after ${plan.settleTimeoutS} s: ${left.join(', ')}`);
    // A move still deleting rows on its old owner would read as misplaced rows.
    let running = await unfinishedJobs(cluster);
    while (running.length > 0 && Date.now() < settleUntil) {
      await sleep(1000);
      running = await unfinishedJobs(cluster);
    }
    if (running.length > 0)
      log(`jobs not ended after ${plan.settleTimeoutS} s: ${running.join(', ')}`);

    const probeKeys = {
      lists: [...workload.generator.lists.all],
      counters: workload.generator.counterKeys,
      accounts,
    };
    const newProcess = () => workload.newProcessId();
    await finalProbe(
      cluster,
      history,
      1,
      probeKeys,
      newProcess,
      plan.workload.opTimeoutMs * 3,
      log,
    );
    clearInterval(rssTimer);
    clearInterval(catalogTimer);
    keep = o.keepCluster === true;
    if (keep) await history.flush();
    else await history.close();

    log('checking the history');
    const { events, malformed } = await readHistoryFile(historyPath);
    const check = checkEvents(events, malformed);
    const byKind = Object.fromEntries(timeline.byKind);
    const faultsByKind: Record<string, number> = {};
    for (const r of nemesis.runs) faultsByKind[r.item.kind] = (faultsByKind[r.item.kind] ?? 0) + 1;
    const ran = new Set(nemesis.runs.map((r) => r.item.kind));
    const skipped = new Set(schedule.skipped.map((s) => s.kind));
    const base: Omit<SoakReport, 'lastLine'> = {
      plan: plan.name,
      description: plan.description,
      seed: plan.seed,
      plannedSeconds: plan.seconds,
      startedAt,
      loadSeconds,
      command: o.command,
      network: { use: cluster.use, reason: cluster.useReason },
      cluster: {
        nodes: shape.nodes.map((n) => n.name),
        coordinators: shape.coordinators,
        routers: shape.routers,
      },
      workload: { rate: plan.workload.rate, clients: plan.workload.clients },
      history: rel(historyPath),
      operations: check.operations,
      byKind,
      faults: nemesis.runs.map((r) => ({
        id: r.item.id,
        kind: r.item.kind,
        target: r.item.target === 'leader' ? String(r.details.killed ?? 'leader') : r.item.target,
        params: r.item.params,
        startS: r.startNs / 1e9,
        endS: r.endNs === undefined ? undefined : r.endNs / 1e9,
        plannedSeconds: r.item.seconds,
        recoveryS: recovery.results.get(r.item.id)?.recoveryS,
        afterHealS: recovery.results.get(r.item.id)?.afterHealS,
        details: r.details,
        error: r.error,
      })),
      faultsByKind,
      cutovers: 0,
      skippedKinds: schedule.skipped,
      kindsNotRun: [...new Set(plan.faults.kinds.map((k) => k.kind))].filter(
        (k) => !ran.has(k) && !skipped.has(k),
      ),
      check,
      throughput: timeline.seconds(),
      latency: timeline.latency(),
      rss: { samples: rss, rule: GROWTH_RULE, summary: summarize(rss, GROWTH_RULE) },
      unexpectedExits: cluster.unexpectedExits.map((e) => ({
        ...e,
        atS: (e.atMs - loadStart) / 1000,
      })),
    };
    base.cutovers = cutoversOf(base.faults);
    const report: SoakReport = { ...base, lastLine: lastLine(base) };
    const files = writeReport(o.resultsDir, report);
    return {
      report,
      files,
      historyPath,
      probeKeys,
      newProcess,
      ...(keep ? { cluster, history } : {}),
    };
  } finally {
    if (!keep) await cluster.stop();
  }
}

function writeReport(dir: string, r: SoakReport): { json: string; md: string; svg: string } {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `${r.startedAt.slice(0, 10)}-${r.plan}`);
  const files = { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(files.json, `${JSON.stringify(r, null, 1)}\n`);
  writeFileSync(files.svg, renderSvg(r));
  const name = (p: string): string => p.slice(dir.length + 1);
  writeFileSync(files.md, renderMarkdown(r, { svg: name(files.svg), json: name(files.json) }));
  return files;
}

/** Jobs the mover has not finished (none without a mover); unknown while the call fails. */
async function unfinishedJobs(cluster: Cluster): Promise<string[]> {
  if (cluster.movers.length === 0) return [];
  try {
    const { jobs } = await cluster.jobs.listJobs({ all: false, parentId: 0n });
    return jobs.map((j) => `${j.kind} ${j.id}`);
  } catch (e) {
    return [`(ListJobs: ${(e as Error).message})`];
  }
}

function rel(p: string): string {
  return p.startsWith(REPO_ROOT) ? relative(REPO_ROOT, p) : p;
}
