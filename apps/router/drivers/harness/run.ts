// `npm run drivers`: the driver matrix. Starts a Tessera cluster with the real CLI and one plain
// Postgres, runs every client's program against both, compares the outputs line by line with
// known-differences.json as a ratchet, prints a summary, and writes docs/compatibility.md.
//
//   npm run drivers [-- --only a,b] [--jobs N] [--update] [--record] [--keep] [--no-docs]
//
// --update   drop entries that no longer occur and take the router's new line for changed ones
//            (never adds one); review the diff of known-differences.json.
// --record   also add every new difference, with an empty reason that must be filled in.
// --keep     leave the Tessera cluster running at the end (prints where).
// --jobs N   clients run N at a time (default 2), each against both sides at once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as prettier from 'prettier';
import { CLIENTS, type ClientSpec } from './clients.js';
import {
  EXIT_OP,
  checkKnown,
  compareClient,
  parseOutput,
  passes,
  recordedKnown,
  updatedKnown,
  type KnownDifference,
} from './compare.js';
import { DECLARATIONS } from './declarations.js';
import { exec, type ExecResult } from './exec.js';
import { startPlain, type PlainPostgres } from './plain.js';
import { nodesState, plainState } from './state.js';
import { compatibilityDoc, failures, summaryTable, type ClientRun } from './report.js';
import { REPO_ROOT, declare, startTessera, type TesseraCluster } from './tessera.js';

const KNOWN_FILE = join(import.meta.dirname, '..', 'known-differences.json');
const DOC_FILE = join(REPO_ROOT, 'docs', 'compatibility.md');

const { values: flags } = parseArgs({
  options: {
    only: { type: 'string' },
    update: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'no-docs': { type: 'boolean', default: false },
    jobs: { type: 'string', default: '2' },
  },
});

const started = Date.now();
const log = (m: string) =>
  process.stderr.write(`[drivers ${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);

function selectedClients(): ClientSpec[] {
  if (!flags.only) return [...CLIENTS];
  const wanted = flags.only.split(',').map((s) => s.trim());
  const unknown = wanted.filter((w) => !CLIENTS.some((c) => c.id === w));
  if (unknown.length > 0)
    throw new Error(
      `unknown client(s) ${unknown.join(', ')}; known: ${CLIENTS.map((c) => c.id).join(', ')}`,
    );
  return CLIENTS.filter((c) => wanted.includes(c.id));
}

const dbName = (client: string, suffix?: string) =>
  `drv_${client.replace(/[^a-z0-9]/gi, '_')}${suffix ? `_${suffix}` : ''}`.toLowerCase();

function envFor(url: string, extra: Record<string, string>): Record<string, string> {
  const u = new URL(url);
  return {
    DRV_URL: url,
    PGHOST: u.hostname,
    PGPORT: u.port,
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: u.pathname.slice(1),
    PGAPPNAME: 'tessera-drivers',
    PGCONNECT_TIMEOUT: '10',
    ...extra,
  };
}

interface Side {
  name: 'plain' | 'router';
  url(db: string): string;
  createDatabase(db: string): Promise<void>;
}

async function runSide(
  spec: ClientSpec,
  side: Side,
  plain: PlainPostgres,
  workDir: string,
): Promise<ExecResult> {
  const extra: Record<string, string> = {};
  await side.createDatabase(dbName(spec.id));
  for (const x of spec.extraDatabases ?? []) {
    await side.createDatabase(dbName(spec.id, x));
    extra[`DRV_URL_${x.toUpperCase()}`] = side.url(dbName(spec.id, x));
  }
  for (const s of spec.scratchDatabases ?? []) {
    const name = dbName(spec.id, `${side.name}_${s}`);
    await plain.createDatabase(name);
    extra[`DRV_SCRATCH_${s.toUpperCase()}_URL`] = plain.url(name);
  }
  const work = join(workDir, `${spec.id}-${side.name}`);
  extra.DRV_WORK = work;
  rmSync(work, { recursive: true, force: true });
  const { cmd, args } = spec.command(workDir);
  await exec('mkdir', ['-p', work], { timeoutMs: 5_000 });
  return exec(cmd, args, {
    cwd: work,
    env: envFor(side.url(dbName(spec.id)), extra),
    timeoutMs: spec.timeoutMs,
  });
}

function missingRequirements(spec: ClientSpec): string[] {
  return spec.requires.filter((f) => !existsSync(f));
}

async function main(): Promise<number> {
  const clients = selectedClients();
  const known = JSON.parse(readFileSync(KNOWN_FILE, 'utf8')) as KnownDifference[];
  const fileProblems = checkKnown(known);
  if (fileProblems.length > 0 && !flags.record) {
    for (const p of fileProblems) process.stderr.write(`known-differences.json: ${p}\n`);
    return 1;
  }
  const missing = clients.flatMap((c) => missingRequirements(c).map((f) => `${c.id} needs ${f}`));
  if (missing.length > 0) {
    for (const m of missing) process.stderr.write(`${m}: run apps/router/drivers/install.sh\n`);
    return 1;
  }

  const workDir = mkdtempSync(join(tmpdir(), 'tessera-drivers-work-'));
  let tessera: TesseraCluster | undefined;
  let plain: PlainPostgres | undefined;
  try {
    log(
      `building ${
        clients
          .filter((c) => c.build)
          .map((c) => c.id)
          .join(', ') || 'nothing'
      }; starting the cluster and plain Postgres`,
    );
    const builds = Promise.all(clients.map(async (c) => c.build?.(workDir)));
    const tesseraUp = startTessera(log);
    [tessera] = await Promise.all([tesseraUp, builds.then(() => log('programs built'))]);
    const role = decodeURIComponent(tessera.routerUrl.username);
    plain = await startPlain(role, decodeURIComponent(tessera.routerUrl.password));
    await declare(tessera, DECLARATIONS);
    log(
      `declared ${DECLARATIONS.keyspaces.length} keyspaces and ${DECLARATIONS.tables.length} tables`,
    );

    const t = tessera;
    const p = plain;
    const sides: [Side, Side] = [
      { name: 'plain', url: (db) => p.url(db), createDatabase: (db) => p.createDatabase(db) },
      { name: 'router', url: (db) => t.url(db), createDatabase: (db) => t.createDatabase(db) },
    ];
    const runs = await inLanes(clients, Number(flags.jobs), async (spec): Promise<ClientRun> => {
      const [pr, rr] = await Promise.all(sides.map((s) => runSide(spec, s, p, workDir)));
      if (!pr || !rr) throw new Error('unreachable');
      const po = parseOutput(pr.stdout);
      const ro = parseOutput(rr.stdout);
      if (spec.compareState !== false) {
        const db = dbName(spec.id);
        const [ps, rs] = await Promise.all([
          plainState({ name: 'plain', host: p.server.host, port: p.server.port }, db),
          nodesState(t.nodes, db, DECLARATIONS),
        ]);
        po.lines.push(...ps);
        ro.lines.push(...rs);
      }
      po.lines.push({ op: EXIT_OP, value: pr.end });
      ro.lines.push({ op: EXIT_OP, value: rr.end });
      const comparison = compareClient(spec.id, po, ro, known);
      if (comparison.programErrors.length > 0 && pr.stderr.trim())
        comparison.programErrors.push(`stderr against plain Postgres:\n${tail(pr.stderr)}`);
      writeFileSync(
        join(workDir, `${spec.id}.plain.out`),
        `${pr.stdout}\n--- stderr\n${pr.stderr}`,
      );
      writeFileSync(
        join(workDir, `${spec.id}.router.out`),
        `${rr.stdout}\n--- stderr\n${rr.stderr}`,
      );
      const differing = comparison.verdicts.filter((v) => v.kind !== 'same').length;
      log(
        `${spec.id}: ${comparison.verdicts.length} operations, ${differing} differ${passes(comparison) ? '' : ' (FAIL)'} ` +
          `(${(pr.ms / 1000).toFixed(1)} s / ${(rr.ms / 1000).toFixed(1)} s)`,
      );
      return {
        comparison,
        title: spec.title,
        group: spec.group,
        versions: po.meta.filter((m) => m.startsWith('version ')).map((m) => m.slice(8)),
        plainMs: pr.ms,
        routerMs: rr.ms,
      };
    });

    const results = runs.map((r) => r.comparison);
    const problems = failures(runs);
    if (problems.length > 0) process.stdout.write(`\n${problems.join('\n\n')}\n`);
    process.stdout.write(`\n${summaryTable(runs)}\n`);
    const differences = results.flatMap((c) =>
      c.verdicts.filter((v) => v.kind === 'known' || v.kind === 'new' || v.kind === 'changed'),
    ).length;
    process.stdout.write(
      `\n${differences} differences (${known.filter((k) => clients.some((c) => c.id === k.client)).length} listed); matrix ${((Date.now() - started) / 1000).toFixed(0)} s; outputs in ${workDir} (removed on a pass)\n`,
    );

    if (flags.update || flags.record) {
      const next = flags.record ? recordedKnown(known, results) : updatedKnown(known, results);
      writeFileSync(KNOWN_FILE, await formatted(KNOWN_FILE, JSON.stringify(next, null, 2)));
      process.stdout.write(`known-differences.json: ${known.length} -> ${next.length} entries\n`);
    }
    if (!flags.only && !flags['no-docs']) {
      const listed =
        flags.update || flags.record
          ? (JSON.parse(readFileSync(KNOWN_FILE, 'utf8')) as KnownDifference[])
          : known;
      const doc = await formatted(DOC_FILE, compatibilityDoc(runs, listed));
      const before = existsSync(DOC_FILE) ? readFileSync(DOC_FILE, 'utf8') : '';
      if (doc !== before) {
        writeFileSync(DOC_FILE, doc);
        process.stdout.write('docs/compatibility.md rewritten from this run\n');
      }
    }
    const ok = problems.length === 0;
    // The outputs stay for a look when something differs (or with --keep); a pass leaves nothing.
    if (ok && !flags.keep) rmSync(workDir, { recursive: true, force: true });
    process.stdout.write(`drivers: ${ok ? 'pass' : 'FAIL'}\n`);
    return ok ? 0 : 1;
  } finally {
    log('stopping');
    await plain?.server.dispose();
    if (flags.keep && tessera)
      log(
        `kept the cluster: ${tessera.routerUrl.href}; stop it with \`tessera down --dir ${tessera.dir}\``,
      );
    else if (tessera) {
      await tessera.down();
      log('tessera down');
    }
  }
}

/** Text as the repository's formatter writes it (`npm run lint` checks every file with it). */
async function formatted(file: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}

/** Runs `fn` over `items`, at most `lanes` at a time; results in the order of `items`. */
async function inLanes<T, R>(
  items: readonly T[],
  lanes: number,
  fn: (x: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, lane));
  return out;
}

function tail(s: string, lines = 30): string {
  return s.trimEnd().split('\n').slice(-lines).join('\n');
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`drivers: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  },
);
