// Statements that run on several nodes at once: DDL and maintenance on every node, writes to
// reference tables, and multi-row INSERTs split by row owner. Writes run in one transaction per
// node, committed only when every node succeeded (rolled back everywhere otherwise); atomic
// commit across nodes comes with two-phase commit.
import {
  Writer,
  commandRowCount,
  writeCommandComplete,
  writeQuery,
  type NoticeFields,
} from '@tessera/pg-wire';
import { rebuildInsert, type InsertAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { AllRoute, SplitInsertRoute } from '../routing/route-types.js';
import type { Backend } from '../pool/backend.js';
import { HeldOut } from './client-out.js';
import type { Expectation } from './exchange.js';
import { errorFrame } from './errors-wire.js';
import type { Session } from './session.js';

export interface Part {
  readonly node: string;
  readonly sql: string;
  /** Run after `sql` on the same node, in the same transaction (a fence). */
  readonly after?: string | undefined;
}

export interface PartResult {
  readonly node: string;
  readonly tags: string[];
  readonly output: HeldOut;
  readonly error: NoticeFields | undefined;
}

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

/**
 * Runs each part on its node concurrently. `transactional`: BEGIN first, and COMMIT everywhere
 * only if no part failed (else ROLLBACK everywhere). Keeps the first part's client output.
 */
export async function runParts(
  s: Session,
  parts: readonly Part[],
  transactional: boolean,
): Promise<PartResult[]> {
  const catalog = s.catalog();
  // Acquired in node order, so two sessions fanning out never wait on each other in a cycle.
  const ordered = [...parts].sort((x, y) => (x.node < y.node ? -1 : x.node > y.node ? 1 : 0));
  const engaged = new Map<
    string,
    { backend: Backend; messages: Buffer[]; expect: Expectation[] }
  >();
  try {
    for (const p of ordered) {
      if (!engaged.has(p.node)) engaged.set(p.node, await s.engage(p.node, catalog));
    }
    const results = await Promise.all(
      parts.map(async (p, i) => {
        const e = engaged.get(p.node)!;
        const messages = [...e.messages];
        const expect = [...e.expect];
        e.messages.length = 0;
        e.expect.length = 0;
        if (transactional || p.after !== undefined) {
          messages.push(q('BEGIN'));
          expect.push({ t: 'quiet' });
        }
        messages.push(q(p.sql));
        expect.push({ t: 'query', ready: false });
        if (p.after !== undefined) {
          messages.push(q(p.after));
          expect.push({ t: 'quiet' });
        }
        const output = new HeldOut(i === 0);
        const r = await s.run1(e.backend, messages, expect, true, output);
        const error = r.error ?? r.quietError;
        return { node: p.node, tags: r.tags, output, error };
      }),
    );
    if (transactional || parts.some((p) => p.after !== undefined)) {
      const ok = results.every((r) => r.error === undefined);
      await Promise.all(
        [...engaged].map(async ([, e]) => {
          if (e.backend.status === 'I') return;
          const end = await s.run1(
            e.backend,
            [q(ok ? 'COMMIT' : 'ROLLBACK')],
            [{ t: 'quiet' }],
            false,
            new HeldOut(false),
          );
          if (end.quietError && ok)
            throw new RouterError(
              end.quietError.code,
              `COMMIT failed on node "${e.backend.target.node}" after others committed: ${end.quietError.message}`,
            );
        }),
      );
    }
    return results;
  } finally {
    for (const node of engaged.keys()) {
      if (s.held.get(node)?.backend.status === 'I') s.settle(node);
      else s.drop(node);
    }
  }
}

function firstError(results: readonly PartResult[]): NoticeFields | undefined {
  return results.find((r) => r.error !== undefined)?.error;
}

/** DDL, maintenance or a reference write on every node; the client sees the first node's answer. */
export async function runOnAll(s: Session, r: AllRoute, sql: string): Promise<void> {
  const parts = r.nodes.map((node) => ({ node, sql, after: r.after.get(node) }));
  const results = await runParts(s, parts, r.why === 'reference_write');
  const error = firstError(results);
  if (error) {
    s.services.metrics.error(error.code);
    s.out.push(errorFrame(error));
    return;
  }
  for (const b of results[0]!.output.pieces) s.out.push(b);
}

/** A multi-row INSERT: each node gets its rows; the client sees one INSERT 0 N. */
export async function runSplitInsert(
  s: Session,
  r: SplitInsertRoute,
  a: InsertAnalysis,
): Promise<void> {
  if (a.hasReturning)
    throw unsupported('INSERT ... RETURNING whose rows go to several nodes is not supported yet');
  const parts = r.parts.map((p) => ({ node: p.node, sql: rebuildInsert(a, p.rows) }));
  const results = await runParts(s, parts, true);
  const error = firstError(results);
  if (error) {
    s.services.metrics.error(error.code);
    s.out.push(errorFrame(error));
    return;
  }
  let total = 0;
  for (const res of results) {
    const tag = res.tags[res.tags.length - 1];
    const n = tag === undefined ? undefined : commandRowCount(tag);
    if (n === undefined)
      throw new RouterError(
        SQLSTATE.internalError,
        `node "${res.node}" answered the INSERT with "${tag}"`,
      );
    total += n;
  }
  s.out.push(writeCommandComplete(new Writer(32), `INSERT 0 ${total}`).flush());
}
