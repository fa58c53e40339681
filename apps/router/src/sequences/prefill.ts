// The extended protocol's side of cluster-wide sequences: the values for a batch's INSERTs are
// drawn before the batch runs, so that looking ahead for the batch's node (protocol/lookahead.ts)
// sees where each row goes. An error is kept for its Bind and raised there, in order.
import { FrontendCode, bindParam, decodeParse } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { StatementRecord } from '../statement/prepared.js';
import { measuredStatement, rewrittenRecord } from '../session/rewrite.js';
import { fillDefaults, forgetDefinitions, mayFill, type Filled } from './defaults.js';

/** By Bind position: its statement with the router's values in, or the error making them. */
export type Prefilled = Map<number, Filled | Error>;

export function prefillBatch(
  s: Session,
  batch: readonly InMsg[],
): Prefilled | undefined | Promise<Prefilled | undefined> {
  // No closure over these: this runs for every batch, and most have nothing to fill.
  let parsed: Map<string, Analysis | undefined> | undefined;
  let waits: Promise<void>[] | undefined;
  let out: Prefilled | undefined;
  for (let k = 0; k < batch.length; k++) {
    const m = batch[k]!;
    if (m.code === FrontendCode.Parse) {
      (parsed ??= new Map()).set(...parsedAt(s, m));
      continue;
    }
    if (m.code !== FrontendCode.Bind) continue;
    const name = s.bindNames.of(m.body);
    const a = parsed?.has(name) ? parsed.get(name) : s.statements.get(name)?.analysis;
    if (a === undefined) continue;
    // The size functions of sharded tables, measured on every node (session/catalog-reads.ts).
    const measured = measuredStatement(s, a);
    if (measured !== undefined) {
      (waits ??= []).push(keepWhenMade((out ??= new Map()), k, measured));
      continue;
    }
    if (s.services.sequences === undefined || !mayFill(a)) continue;
    try {
      const f = fillDefaults(s, a, textParams(m.body));
      if (f instanceof Promise) (waits ??= []).push(keepWhenMade((out ??= new Map()), k, f));
      else if (f !== undefined) (out ??= new Map()).set(k, f);
    } catch (e) {
      (out ??= new Map()).set(k, asError(e));
    }
  }
  return waits === undefined ? out : Promise.all(waits).then(() => out);
}

/** Keeps what `made` gives (or its error) for the Bind at `k`. */
function keepWhenMade(out: Prefilled, k: number, made: Promise<Filled | undefined>): Promise<void> {
  return made.then(
    (f) => {
      if (f !== undefined) out.set(k, f);
    },
    (e: unknown) => {
      out.set(k, asError(e));
    },
  );
}

/**
 * A Parse's name and its one analysis (undefined when it has several or none, or does not parse:
 * the Parse's own error comes in order when the batch gets there).
 */
function parsedAt(s: Session, m: InMsg): [string, Analysis | undefined] {
  const p = decodeParse(m.body);
  try {
    const analyses = s.services.cache.get(p.sql);
    return [p.name, analyses.length === 1 ? analyses[0] : undefined];
  } catch {
    return [p.name, undefined];
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** A Bind's text-format parameters by index (a function of its own: the loop captures nothing). */
function textParams(body: Buffer): (index: number) => string | null | undefined {
  return (i) => textParam(body, i);
}

/** A text-format bind parameter's value; undefined for a binary one (not understood here). */
function textParam(body: Buffer, index: number): string | null | undefined {
  const p = bindParam(body, index);
  if (p === undefined || p.format !== 0) return undefined;
  return p.value === null ? null : p.value.toString('utf8');
}

/**
 * The copy of `rec` a Bind runs: unnamed with the router's values in (sequences, sizes), or with
 * its views and fences rewritten (session/rewrite.ts); undefined when it runs `rec` as it is.
 * The error of making the values is thrown here, in the Bind's place.
 */
export function filledRecord(
  s: Session,
  f: Filled | Error | undefined,
  rec: StatementRecord,
): StatementRecord | undefined {
  if (f instanceof Error) throw f;
  if (f !== undefined) return new StatementRecord('', f.sql, rec.paramTypes, [f.analysis]);
  if (rec.analysis?.kind === 'ddl' && s.services.sequences !== undefined)
    forgetDefinitions(s.services.sequences);
  return rewrittenRecord(s, rec);
}
