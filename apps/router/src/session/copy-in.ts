// COPY FROM STDIN into a table on several nodes: every node starts its COPY inside one
// transaction across the nodes (the client's, or an implicit one committed with two-phase commit);
// the client's data is split by row owner (or sent whole to every node for a reference table).
// All the rows land or none. The client sees one COPY N.
import {
  FrameReader,
  Writer,
  commandRowCount,
  decodeDataRow,
  writeCommandComplete,
  writeCopyFail,
  writeQuery,
  COPY_DONE,
  BackendCode,
} from '@tessera/pg-wire';
import { hashKeyText } from '@tessera/pg-hash';
import { quoteLiteral, quoteQualified, type Analysis, type CopyFromAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { CopyRoute } from '../routing/route-types.js';
import { BackendError, type Backend } from '../pool/backend.js';
import { CopyRowSplitter } from '../copy/copy-rows.js';
import { HeldOut } from './client-out.js';
import type { ExchangeResult } from './exchange.js';
import { engage, lost, settle } from './engage.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import { atomically } from './txn.js';

/** Rows gathered per node before they go out as one CopyData. */
const BATCH_BYTES = 64 * 1024;

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

function copyData(pieces: Buffer[], size: number): Buffer {
  const out = Buffer.allocUnsafe(5 + size);
  out[0] = 0x64;
  out.writeInt32BE(4 + size, 1);
  let at = 5;
  for (const p of pieces) at += p.copy(out, at);
  return out;
}

interface Target {
  readonly node: string;
  readonly backend: Backend;
  readonly done: Promise<ExchangeResult>;
  readonly ready: Promise<void>;
  pieces: Buffer[];
  size: number;
  result: ExchangeResult | undefined;
  failed: boolean;
}

export async function runCopySplit(s: Session, r: CopyRoute, a: Analysis): Promise<void> {
  if (a.kind !== 'copy_from' || r.mode === 'node')
    throw new Error('runCopySplit needs a COPY FROM split or broadcast route');
  let total = 0;
  // One transaction over every node (the client's, or an implicit one committed with two-phase
  // commit): all the rows land, or none.
  await atomically(s, async () => {
    const copied = await copyToNodes(s, r, a);
    if (copied instanceof Error) return copied;
    total = copied;
    return undefined;
  });
  s.out.push(writeCommandComplete(new Writer(32), `COPY ${total}`).flush());
}

/** Starts the COPY on every node, feeds each its rows; the row count, or the error it ended with. */
async function copyToNodes(
  s: Session,
  r: CopyRoute & { mode: 'all' | 'split' },
  a: CopyFromAnalysis,
): Promise<number | Error> {
  const catalog = s.catalog();
  const nodes = [...r.nodes].sort();
  const keyIndex =
    r.mode === 'split' ? await keyColumnIndex(s, a, r.keyColumn, nodes[0]!, r.schema, r.table) : -1;
  const targets: Target[] = [];
  let anyFailed = false;
  try {
    for (const node of nodes) {
      const e = await engage(s, node, catalog);
      s.txn.wrote(node, true);
      e.messages.push(q(a.sql));
      e.expect.push({ t: 'query', ready: false });
      let markReady!: () => void;
      const ready = new Promise<void>((res) => (markReady = res));
      const t: Target = {
        node,
        backend: e.backend,
        pieces: [],
        size: 0,
        result: undefined,
        failed: false,
        ready,
        done: undefined as unknown as Promise<ExchangeResult>,
      };
      (t as { done: Promise<ExchangeResult> }).done = run1(
        s,
        e.backend,
        e.messages,
        e.expect,
        true,
        new HeldOut(false),
        markReady,
      ).then((res) => {
        t.result = res;
        if (res.error || res.quietError) t.failed = anyFailed = true;
        markReady();
        return res;
      });
      t.done.catch(() => {
        t.failed = anyFailed = true;
        markReady();
      });
      targets.push(t);
    }
    await Promise.all(targets.map((t) => t.ready));
    if (anyFailed) return await abort(targets, 'another node failed to start the COPY');

    // Every node is in COPY IN: tell the client to send its data.
    s.out.push(Buffer.from([BackendCode.CopyInResponse, 0, 0, 0, 7, 0, 0, 0]));
    s.out.flush();

    const byNode = new Map(targets.map((t) => [t.node, t]));
    const keyspace = r.mode === 'split' ? r.keyspace : undefined;
    const splitter =
      r.mode === 'split'
        ? new CopyRowSplitter(a.options as never, keyIndex, (row, key) => {
            const node =
              key === null
                ? keyspace!.ownerOf(0n)
                : keyspace!.ownerOf(hashKeyText(keyspace!.keyType, key, keyspace!.seed));
            const t = byNode.get(node)!;
            t.pieces.push(row);
            t.size += row.length;
          })
        : undefined;
    let headerSent = false;
    const send = async (force: boolean): Promise<void> => {
      if (splitter?.header && !headerSent) {
        headerSent = true;
        for (const t of targets) {
          t.pieces.unshift(splitter.header);
          t.size += splitter.header.length;
        }
      }
      for (const t of targets) {
        if (t.size === 0 || (!force && t.size < BATCH_BYTES)) continue;
        const ok = t.backend.write(copyData(t.pieces, t.size));
        t.pieces = [];
        t.size = 0;
        if (!ok) await t.backend.drained();
      }
    };

    for (;;) {
      const m = await s.input.nextMessage();
      if (m === undefined) return await abort(targets, 'the client went away');
      if (anyFailed) {
        // The node's error goes to the client now; the rest of its COPY data is dropped later.
        if (m.code !== 0x64 && m.code !== 0x63 && m.code !== 0x66) s.input.unshift(m);
        return await abort(targets, 'another node failed during the COPY');
      }
      if (m.code === 0x64) {
        if (splitter) {
          splitter.push(m.body);
          await send(false);
        } else {
          for (const t of targets) if (!t.backend.write(m.raw)) await t.backend.drained();
        }
        continue;
      }
      if (m.code === 0x63) {
        splitter?.end();
        await send(true);
        for (const t of targets) t.backend.write(COPY_DONE);
        break;
      }
      if (m.code === 0x66) {
        const reason = m.body.toString('utf8', 0, Math.max(0, m.body.length - 1));
        for (const t of targets) t.backend.write(writeCopyFail(new Writer(64), reason).flush());
        await Promise.allSettled(targets.map((t) => t.done));
        return new RouterError(SQLSTATE.queryCanceled, `COPY from stdin failed: ${reason}`);
      }
      if (m.code === 0x48 || m.code === 0x53) continue;
      s.input.unshift(m);
      for (const t of targets)
        t.backend.write(
          writeCopyFail(new Writer(64), 'unexpected message type during COPY').flush(),
        );
      await Promise.allSettled(targets.map((t) => t.done));
      return new RouterError(
        SQLSTATE.protocolViolation,
        'unexpected message type during COPY from stdin',
      );
    }
    const results = await Promise.all(targets.map((t) => t.done));
    const failed = results.find((res) => res.error ?? res.quietError);
    if (failed) return new BackendError((failed.error ?? failed.quietError)!);
    let total = 0;
    for (const res of results) total += commandRowCount(res.tags[res.tags.length - 1] ?? '') ?? 0;
    return r.mode === 'all' ? total / targets.length : total;
  } catch (e) {
    // A node still in COPY IN cannot be used again: its part of the transaction is lost.
    for (const t of targets) if (t.result === undefined && !t.backend.dead) lost(s, t.backend);
    throw e;
  }
}

/** A node failed: end the COPY everywhere and pass the first node error on. */
async function abort(targets: readonly Target[], reason: string): Promise<Error> {
  for (const t of targets)
    if (!t.failed) t.backend.write(writeCopyFail(new Writer(64), reason).flush());
  await Promise.allSettled(targets.map((t) => t.done));
  const err = targets
    .map((t) => t.result?.error ?? t.result?.quietError)
    .find((x) => x !== undefined);
  if (err) return new BackendError(err);
  return new RouterError(SQLSTATE.connectionFailure, `COPY failed: ${reason}`);
}

/** Position of the key column in the COPY's column list (or the table's, asked of a node). */
async function keyColumnIndex(
  s: Session,
  a: CopyFromAnalysis,
  keyColumn: string,
  node: string,
  schema: string,
  table: string,
): Promise<number> {
  let columns = a.columns;
  if (columns === undefined) {
    const sql =
      'SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = ' +
      `${quoteLiteral(quoteQualified(schema, table))}::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`;
    const e = await engage(s, node, s.catalog());
    e.messages.push(q(sql));
    e.expect.push({ t: 'query', ready: false });
    const out = new HeldOut(true);
    const res = await run1(s, e.backend, e.messages, e.expect, false, out);
    settle(s, node);
    if (res.error) {
      s.services.metrics.error(res.error.code);
      throw new RouterError(res.error.code, res.error.message);
    }
    const reader = new FrameReader();
    const names: string[] = [];
    for (const p of out.pieces) reader.push(Buffer.from(p));
    for (let f = reader.next(); f; f = reader.next()) {
      if (f.code === BackendCode.DataRow) names.push(decodeDataRow(f.body)[0]!.toString('utf8'));
    }
    columns = names;
  }
  const i = columns.indexOf(keyColumn);
  if (i < 0)
    throw unsupported(
      `COPY into sharded table ${schema}.${table} must include its key column "${keyColumn}"`,
    );
  return i;
}
