// Pure comparison of one client program's two outputs (plain Postgres, Tessera router) against
// the known-differences file: which operations agree, which differ as listed, and which make the
// run fail (a new difference, a listed one that changed, or one that no longer occurs).

/** One operation's normalised result, as a program printed it: `op<TAB>value`. */
export interface OpLine {
  op: string;
  value: string;
}

/** What a program printed, parsed. */
export interface ProgramOutput {
  lines: OpLine[];
  /** `@version ...` and other `@` lines: said once, not compared. */
  meta: string[];
  /** Lines that are neither `op<TAB>value` nor `@...`, and repeated operation ids. */
  malformed: string[];
}

/** One entry of known-differences.json. */
export interface KnownDifference {
  client: string;
  op: string;
  /** One line: why the router answers differently today. */
  reason: string;
  /** The issue that will make it go away. */
  issue: number;
  /** The router's line as last observed: a different one is a change the run reports. */
  router: string;
}

/** The operation the harness adds for how the program ended: `ok`, `exit N`, `timeout`. */
export const EXIT_OP = 'exit';

/** The value a missing line compares as. */
export const MISSING = '<missing>';

export type OpVerdict =
  | { kind: 'same'; op: string; value: string }
  | { kind: 'known'; op: string; plain: string; router: string; entry: KnownDifference }
  | { kind: 'new'; op: string; plain: string; router: string }
  | { kind: 'changed'; op: string; plain: string; router: string; entry: KnownDifference }
  | { kind: 'fixed'; op: string; value: string; entry: KnownDifference };

export interface ClientComparison {
  client: string;
  verdicts: OpVerdict[];
  /** Listed for this client but about an operation neither side printed. */
  stale: KnownDifference[];
  /** Anything wrong with the program itself against plain Postgres (a bug in the program). */
  programErrors: string[];
}

export function parseOutput(stdout: string): ProgramOutput {
  const out: ProgramOutput = { lines: [], meta: [], malformed: [] };
  const seen = new Set<string>();
  for (const raw of stdout.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '') continue;
    if (line.startsWith('@')) {
      out.meta.push(line.slice(1).trim());
      continue;
    }
    const tab = line.indexOf('\t');
    const op = tab > 0 ? line.slice(0, tab) : '';
    if (op === '' || /\s/.test(op)) {
      out.malformed.push(line);
      continue;
    }
    if (seen.has(op)) {
      out.malformed.push(`operation ${op} printed twice: ${line}`);
      continue;
    }
    seen.add(op);
    out.lines.push({ op, value: line.slice(tab + 1) });
  }
  return out;
}

/** True when a value is a refusal or error rather than a result. */
export function isError(value: string): boolean {
  return value.startsWith('ERROR');
}

/**
 * Every SQLSTATE (or `client:<kind>`) a value reports, as `ERROR X` or `caught X`, in order; a
 * failure that names none (a tool's `ERROR exit=1`, a `table=ERROR` in a summary) is `error`.
 */
export function errorsIn(value: string): string[] {
  const states = [
    ...value.matchAll(/\b(?:ERROR|caught) ([0-9A-Z]{5}|client:\S+)(?=$|[\s,;)\]])/g),
  ].map((m) => m[1] ?? '');
  if (states.length === 0 && /(^ERROR\b|=ERROR\b)/.test(value)) return ['error'];
  return states;
}

/**
 * The errors the router reported where plain Postgres reported none of them: a refusal, when
 * there are any; none means the router answered otherwise without an error.
 */
export function refusals(plain: string, router: string): string[] {
  const expected = new Set(errorsIn(plain));
  return [...new Set(errorsIn(router).filter((e) => !expected.has(e)))];
}

/**
 * Compares the two outputs operation by operation, in the order plain Postgres printed them
 * (operations only the router printed follow, in its order).
 */
export function compareClient(
  client: string,
  plain: ProgramOutput,
  router: ProgramOutput,
  known: readonly KnownDifference[],
): ClientComparison {
  const listed = new Map<string, KnownDifference>();
  for (const k of known) if (k.client === client) listed.set(k.op, k);
  const routerByOp = new Map(router.lines.map((l) => [l.op, l.value]));
  const plainByOp = new Map(plain.lines.map((l) => [l.op, l.value]));
  const order = [
    ...plain.lines.map((l) => l.op),
    ...router.lines.map((l) => l.op).filter((op) => !plainByOp.has(op)),
  ];

  const verdicts: OpVerdict[] = [];
  for (const op of order) {
    const p = plainByOp.get(op) ?? MISSING;
    const r = routerByOp.get(op) ?? MISSING;
    const entry = listed.get(op);
    listed.delete(op);
    if (p === r)
      verdicts.push(
        entry ? { kind: 'fixed', op, value: p, entry } : { kind: 'same', op, value: p },
      );
    else if (!entry) verdicts.push({ kind: 'new', op, plain: p, router: r });
    else if (entry.router === r) verdicts.push({ kind: 'known', op, plain: p, router: r, entry });
    else verdicts.push({ kind: 'changed', op, plain: p, router: r, entry });
  }

  const programErrors = plain.malformed.map((m) => `malformed line against plain Postgres: ${m}`);
  for (const m of router.malformed) programErrors.push(`malformed line against the router: ${m}`);
  const exit = plainByOp.get(EXIT_OP);
  if (exit !== undefined && exit !== 'ok')
    programErrors.push(`the program failed against plain Postgres: ${exit}`);
  for (const l of plain.lines) {
    // A program's own operations never fail against plain Postgres, except where an error is
    // the expected answer (those print their SQLSTATE inside a successful line, not as ERROR).
    if (isError(l.value)) programErrors.push(`${l.op} failed against plain Postgres: ${l.value}`);
  }
  return { client, verdicts, stale: [...listed.values()], programErrors };
}

/** Whether a comparison lets the run pass. */
export function passes(c: ClientComparison): boolean {
  return (
    c.programErrors.length === 0 &&
    c.stale.length === 0 &&
    c.verdicts.every((v) => v.kind === 'same' || v.kind === 'known')
  );
}

/**
 * The known-differences list after a run, for `--update`: entries that no longer occur are
 * dropped and changed ones take the router's new line; new differences are never added.
 */
export function updatedKnown(
  known: readonly KnownDifference[],
  results: readonly ClientComparison[],
): KnownDifference[] {
  const ran = new Set(results.map((r) => r.client));
  const byKey = new Map<string, OpVerdict>();
  for (const r of results) for (const v of r.verdicts) byKey.set(`${r.client}\0${v.op}`, v);
  const out: KnownDifference[] = [];
  for (const k of known) {
    if (!ran.has(k.client)) {
      out.push(k);
      continue;
    }
    const v = byKey.get(`${k.client}\0${k.op}`);
    if (!v) continue;
    switch (v.kind) {
      case 'known':
        out.push(k);
        break;
      case 'changed':
        out.push({ ...k, router: v.router });
        break;
      case 'fixed':
      case 'same':
      case 'new':
        break;
      default:
        assertNever(v);
    }
  }
  return out;
}

/** The differences of a run as new entries (`--record`), each still to be given its reason. */
export function recordedKnown(
  known: readonly KnownDifference[],
  results: readonly ClientComparison[],
): KnownDifference[] {
  const out = updatedKnown(known, results);
  for (const r of results)
    for (const v of r.verdicts)
      if (v.kind === 'new')
        out.push({ client: r.client, op: v.op, reason: '', issue: 0, router: v.router });
  return out;
}

/** Problems with the file itself: every entry needs a reason and an issue, once per (client, op). */
export function checkKnown(known: readonly KnownDifference[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const k of known) {
    const key = `${k.client} ${k.op}`;
    if (seen.has(key)) problems.push(`${key} is listed twice`);
    seen.add(key);
    if (!k.reason || k.reason.includes('\n')) problems.push(`${key} needs a one-line reason`);
    if (!Number.isInteger(k.issue) || k.issue <= 0) problems.push(`${key} needs an issue number`);
    if (typeof k.router !== 'string') problems.push(`${key} needs the router's line`);
  }
  return problems;
}

export function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`);
}
