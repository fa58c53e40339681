// The human-readable report (soak/results/<date>-<plan>.md).
import { ANOMALY_CLASSES, FRACTURED_KINDS } from '../checker/findings.js';
import type { SoakReport } from './model.js';

export function renderMarkdown(r: SoakReport, files: { svg: string; json: string }): string {
  const o = r.check.operations;
  const lines: string[] = [];
  lines.push(`# Soak ${r.plan}, ${r.startedAt.slice(0, 10)}`);
  lines.push('');
  if (r.description) lines.push(`${r.description}`, '');
  lines.push(`- command: \`${r.command}\` (seed ${r.seed})`);
  lines.push(
    `- load: ${Math.round(r.loadSeconds)} s at up to ${r.workload.rate} ops/s from ${r.workload.clients} clients`,
  );
  lines.push(`- network: ${r.network.use} (${r.network.reason})`);
  lines.push(
    `- cluster: nodes ${r.cluster.nodes.join(', ')}; coordinators ${r.cluster.coordinators.join(', ')}; routers ${r.cluster.routers.join(', ')}`,
  );
  lines.push(
    `- history: \`${r.history}\` (${r.check.events} events; re-check with \`npm run soak -- check ${r.history}\`)`,
  );
  lines.push('');
  lines.push('```');
  lines.push(r.lastLine);
  lines.push('```');
  lines.push('');
  lines.push(`![throughput and latency with faults](${files.svg})`);
  lines.push('');
  lines.push('## Operations');
  lines.push('');
  lines.push('| operation | ok | fail | info (unknown) |');
  lines.push('| --- | ---: | ---: | ---: |');
  for (const [k, v] of Object.entries(r.byKind).sort())
    lines.push(`| ${k} | ${v.ok} | ${v.fail} | ${v.info} |`);
  lines.push(`| **all** (incl. final reads) | ${o.ok} | ${o.fail} | ${o.info} |`);
  lines.push('');
  const c = r.check;
  lines.push(
    `Checked: ${c.lists.keys} list keys, ${c.lists.appends} appends, ${c.lists.reads} list reads; ${c.counters.adds} counter adds (the ledger settled ${c.counters.settledCommitted} unknown ones as committed and ${c.counters.settledAbsent} as not), ${c.counters.reads} counter reads; ${c.bank.transfers} transfers over ${c.bank.accounts} accounts, ${c.bank.reads} balance reads; ${c.placedRows} rows placed.`,
  );
  lines.push('');
  lines.push('## Faults');
  lines.push('');
  const recovered = r.faults.filter((f) => f.recoveryS !== undefined);
  const slowest = recovered.reduce<(typeof recovered)[number] | undefined>(
    (a, b) => (!a || b.recoveryS! > a.recoveryS! ? b : a),
    undefined,
  );
  lines.push(
    `${r.faults.length} faults: ${Object.entries(r.faultsByKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(
        ', ',
      )}.${slowest ? ` Slowest recovery: ${slowest.recoveryS} s (fault ${slowest.id}, ${slowest.kind} on ${slowest.target}).` : ''}`,
  );
  if (r.skippedKinds.length > 0)
    lines.push(
      '',
      `Not possible in this run: ${r.skippedKinds.map((s) => `${s.kind} (${s.reason})`).join('; ')}.`,
    );
  if (r.kindsNotRun.length > 0)
    lines.push('', `Named by the plan but not reached in the time: ${r.kindsNotRun.join(', ')}.`);
  lines.push('');
  lines.push(
    "Recovery: from the fault's start to the first acknowledged write on what it affected (its node, its router, or any write across nodes for a coordinator), invoked after the start; after heal: the same from the heal.",
  );
  lines.push('');
  lines.push(
    '| # | kind | target | parameters | start s | held s | recovery s | after heal s | notes |',
  );
  lines.push('| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | --- |');
  for (const f of r.faults) {
    const held = f.endS !== undefined ? (f.endS - f.startS).toFixed(1) : '';
    const notes = [
      f.error ? `error: ${f.error}` : '',
      ...Object.entries(f.details)
        .filter(([k]) => ['fired', 'newLeader', 'killed', 'mode'].includes(k))
        .map(([k, v]) => `${k} ${String(v)}`),
    ]
      .filter(Boolean)
      .join('; ');
    lines.push(
      `| ${f.id} | ${f.kind} | ${f.target} | ${paramText(f.params)} | ${f.startS.toFixed(1)} | ${held} | ${f.recoveryS ?? '-'} | ${f.afterHealS ?? '-'} | ${notes} |`,
    );
  }
  lines.push('');
  lines.push('## Checker');
  lines.push('');
  lines.push('| anomaly class | count |');
  lines.push('| --- | ---: |');
  for (const k of ANOMALY_CLASSES) lines.push(`| ${k} | ${c.anomalies[k]} |`);
  lines.push('');
  lines.push(
    `Fractured reads (a read across nodes that saw a transaction on one node and not the other; Tessera does not promise snapshot-consistent reads across nodes yet, so these are counted, not failures): ${FRACTURED_KINDS.map((k) => `${k} ${c.fractured[k]}`).join(', ')}.`,
  );
  for (const k of ANOMALY_CLASSES) {
    const ex = c.examples[k];
    if (!ex || ex.length === 0) continue;
    lines.push('', `### ${k}`, '', ...ex.map((e) => `- ${e}`));
  }
  lines.push('');
  lines.push(...memorySection(r.rss));
  if (r.unexpectedExits.length > 0) {
    lines.push('', '## Services that exited on their own', '');
    for (const e of r.unexpectedExits)
      lines.push(
        `- ${e.name} at ${e.atS.toFixed(1)} s (code ${e.code}, signal ${e.signal}); restarted`,
      );
  }
  lines.push('', `Data: [${files.json}](${files.json}).`, '');
  return lines.join('\n');
}

/** The report's memory section: the growth of every service and the Postgres nodes' parts. */
export function memorySection(rss: SoakReport['rss']): string[] {
  const { warmupS, minSpanS } = rss.rule;
  const pct = (x: number | undefined): string => (x === undefined ? 'n/a' : String(x));
  const lines = [
    '## Memory',
    '',
    `Sampled every 10 s: the RSS of each Node.js service and the Pss of each Postgres node (postmaster and backends), each with its anonymous and shared parts. Growth is that of the anonymous memory (a Postgres node's per process, since the number of backends follows the connections; its shared memory is shared buffers touched, bounded by shared_buffers): the least-squares slope per hour relative to its mean, over the longest lifetime without its first ${warmupS} s (warm-up), judged only when at least ${minSpanS} s remain after warm-up. The later half's slope tells a leak (about the same) from a warm-up tail (lower). The rule: docs/soak.md, "Memory".`,
    '',
    '| service | kind | samples | lifetimes | first MB | last MB | max MB | growth of | growth %/h | later half %/h | |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |',
  ];
  for (const s of rss.summary) {
    const notJudged =
      s.notJudgedPctPerHour === undefined ? '' : ` (its slope there: ${s.notJudgedPctPerHour} %/h)`;
    lines.push(
      `| ${s.name} | ${s.kind} | ${s.samples} | ${s.lifetimes} | ${s.firstMb} | ${s.lastMb} | ${s.maxMb} | ${s.measure} | ${pct(s.growthPctPerHour)} | ${pct(s.lateHalfPctPerHour)} | ${s.note}${notJudged} |`,
    );
  }
  const nodes = rss.summary.filter((s) => s.parts !== undefined);
  if (nodes.length > 0) {
    lines.push(
      '',
      'Postgres nodes over their longest lifetime, first -> last sample:',
      '',
      '| node | processes | anonymous Pss MB | shared Pss MB |',
      '| --- | ---: | ---: | ---: |',
    );
    for (const s of nodes) {
      const [p, a, m] = [s.parts!.processes, s.parts!.anonMb, s.parts!.shmemMb];
      lines.push(`| ${s.name} | ${p[0]} -> ${p[1]} | ${a[0]} -> ${a[1]} | ${m[0]} -> ${m[1]} |`);
    }
  }
  return lines;
}

function paramText(p: Record<string, unknown>): string {
  return Object.entries(p)
    .filter(([k]) => k !== 'killed')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}
