// COPY FROM STDIN into a table on several nodes: every node starts its COPY inside one
// transaction across the nodes (the client's, or an implicit one committed with two-phase commit);
// the client's data is split by row owner (or sent whole to every node for a reference table).
// All the rows land or none. The client sees one COPY N.
import {
  BackendCode,
  COPY_DONE,
  FrameReader,
  FrontendCode,
  Writer,
  commandRowCount,
  decodeDataRow,
  writeCommandComplete,
  writeCopyDataPieces,
  writeCopyFail,
  writeCopyInResponse,
  writeQuery,
  type NoticeFields,
} from '@tessera/pg-wire';
import { hashKeyText } from '@tessera/pg-hash';
import type { Snapshot } from '@tessera/keyspace';
import { quoteLiteral, quoteQualified, type Analysis, type CopyFromAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { CopyRoute } from '../routing/route-types.js';
import { BackendError, type Backend } from '../pool/backend.js';
import { CopyRowSplitter } from '../copy/copy-rows.js';
import { HeldOut } from '../session/client-out.js';
import type { ExchangeResult } from './exchange.js';
import { engage, lost, settle } from './backends.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';
import type { InMsg } from '../session/client-in.js';
import { atomically } from './cross-node.js';

/** Rows gathered per node before they go out as one CopyData. */
const BATCH_BYTES = 64 * 1024;

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();
const copyFail = (reason: string): Buffer => writeCopyFail(new Writer(64), reason).flush();

interface Target {
  readonly node: string;
  readonly backend: Backend;
  done: Promise<ExchangeResult>;
  ready: Promise<void>;
  pieces: Buffer[];
  size: number;
  result: ExchangeResult | undefined;
  failed: boolean;
  /** The client's line number of each row sent to this node, in order (split COPY only). */
  lines: number[] | undefined;
  /** Lines sent before the rows: the header, if the format has one. */
  headerLines: number;
}

export async function runCopySplit(
  s: Session,
  r: CopyRoute,
  a: Analysis,
  catalog: Snapshot,
): Promise<void> {
  if (a.kind !== 'copy_from' || r.mode === 'node')
    throw new Error('runCopySplit needs a COPY FROM split or broadcast route');
  let total = 0;
  // One transaction over every node (the client's, or an implicit one committed with two-phase
  // commit): all the rows land, or none.
  await atomically(s, async () => {
    const copied = await new CopySplit(s, r, a, catalog).run();
    if (copied instanceof Error) return copied;
    total = copied;
    return undefined;
  });
  s.out.push(writeCommandComplete(new Writer(32), `COPY ${total}`).flush());
}

/** One COPY across nodes: starts it on every node, feeds each its rows, gathers the counts. */
class CopySplit {
  private readonly targets: Target[] = [];
  private readonly byNode = new Map<string, Target>();
  private anyFailed = false;
  private splitter: CopyRowSplitter | undefined;
  private headerSent = false;
  /** Rows the splitter handed out so far: the client's line count, less a header line. */
  private rowsSeen = 0;

  constructor(
    private readonly s: Session,
    private readonly r: CopyRoute & { mode: 'all' | 'split' },
    private readonly a: CopyFromAnalysis,
    private readonly catalog: Snapshot,
  ) {}

  /** The row count, or the error the COPY ended with (thrown: the client or a node is lost). */
  async run(): Promise<number | Error> {
    const { s, r, a, targets } = this;
    const nodes = [...r.nodes].sort();
    const key =
      r.mode === 'split'
        ? await keyColumn(s, a, r, nodes[0]!, this.catalog)
        : { index: -1, columns: a.columns ?? [] };
    try {
      for (const node of nodes) await this.start(node);
      await Promise.all(targets.map((t) => t.ready));
      if (this.anyFailed) return await abort(targets, 'another node failed to start the COPY');
      if (r.mode === 'split') this.splitter = this.rowSplitter(r, key.index, key.columns);
      // Every node is in COPY IN: the client may send its data.
      s.out.push(
        writeCopyInResponse(
          new Writer(16),
          0,
          key.columns.map(() => 0),
        ).flush(),
      );
      s.out.flushForInput();
      const ended = await this.feed();
      if (ended !== undefined) return ended;
      return await this.total();
    } catch (e) {
      // A node still in COPY IN cannot be used again: its part of the transaction is lost.
      for (const t of targets) if (t.result === undefined && !t.backend.dead) lost(s, t.backend);
      throw e;
    }
  }

  /** The COPY started on `node`, inside the transaction; ready once the node is in COPY IN. */
  private async start(node: string): Promise<void> {
    const s = this.s;
    const e = await engage(s, node, this.catalog);
    s.txn.wrote(node, true);
    e.messages.push(q(this.a.sql));
    e.expect.push({ t: 'query', ready: false });
    let markReady!: () => void;
    const t: Target = {
      node,
      backend: e.backend,
      pieces: [],
      size: 0,
      result: undefined,
      failed: false,
      lines: this.r.mode === 'split' ? [] : undefined,
      headerLines: 0,
      ready: new Promise<void>((res) => (markReady = res)),
      done: Promise.resolve(undefined as unknown as ExchangeResult),
    };
    const out = new HeldOut(false);
    t.done = run1(s, e.backend, e.messages, e.expect, true, out, markReady).then((res) => {
      t.result = res;
      if (res.error || res.quietError) t.failed = this.anyFailed = true;
      markReady();
      return res;
    });
    t.done.catch(() => {
      t.failed = this.anyFailed = true;
      markReady();
    });
    this.targets.push(t);
    this.byNode.set(node, t);
  }

  private rowSplitter(
    r: CopyRoute & { mode: 'split' },
    keyIndex: number,
    columns: readonly string[],
  ): CopyRowSplitter {
    const ks = r.keyspace;
    return new CopyRowSplitter(
      this.a.options as never,
      keyIndex,
      (row, key) => {
        const node =
          key === null ? ks.ownerOf(0n) : ks.ownerOf(hashKeyText(ks.keyType, key, ks.seed));
        const t = this.byNode.get(node)!;
        t.pieces.push(row);
        t.size += row.length;
        // A header line, sent to every node as its own first line, is the client's first too.
        t.lines!.push(++this.rowsSeen + (this.splitter?.header !== undefined ? 1 : 0));
      },
      columns,
    );
  }

  /** The client's messages until its CopyDone; an Error when the COPY ended otherwise. */
  private async feed(): Promise<Error | undefined> {
    const { s, targets } = this;
    for (;;) {
      const m = await s.input.nextMessage();
      if (m === undefined) return await abort(targets, 'the client went away');
      const copying =
        m.code === FrontendCode.CopyData ||
        m.code === FrontendCode.CopyDone ||
        m.code === FrontendCode.CopyFail;
      if (this.anyFailed) {
        // The node's error goes to the client now; the rest of its COPY data is dropped later.
        if (!copying) s.input.unshift(m);
        return await abort(targets, 'another node failed during the COPY');
      }
      switch (m.code) {
        case FrontendCode.CopyData:
          await this.rows(m);
          continue;
        case FrontendCode.CopyDone:
          this.splitter?.end();
          await this.send(true);
          for (const t of targets) t.backend.write(COPY_DONE);
          return undefined;
        case FrontendCode.CopyFail: {
          const reason = m.body.toString('utf8', 0, Math.max(0, m.body.length - 1));
          for (const t of targets) t.backend.write(copyFail(reason));
          await Promise.allSettled(targets.map((t) => t.done));
          return new RouterError(SQLSTATE.queryCanceled, `COPY from stdin failed: ${reason}`);
        }
        case FrontendCode.Flush:
        case FrontendCode.Sync:
          continue;
        default:
          s.input.unshift(m);
          for (const t of targets) t.backend.write(copyFail('unexpected message type during COPY'));
          await Promise.allSettled(targets.map((t) => t.done));
          return new RouterError(
            SQLSTATE.protocolViolation,
            'unexpected message type during COPY from stdin',
          );
      }
    }
  }

  /** One CopyData: split by row owner, or the same to every node (a reference table). */
  private async rows(m: InMsg): Promise<void> {
    if (this.splitter !== undefined) {
      this.splitter.push(m.body);
      return this.send(false);
    }
    for (const t of this.targets) if (!t.backend.write(m.raw)) await t.backend.drained();
  }

  /** Each node's gathered rows as one CopyData once they are enough (or `force`). */
  private async send(force: boolean): Promise<void> {
    const header = this.splitter?.header;
    if (header !== undefined && !this.headerSent) {
      this.headerSent = true;
      for (const t of this.targets) {
        t.pieces.unshift(header);
        t.size += header.length;
        t.headerLines = 1;
      }
    }
    for (const t of this.targets) {
      if (t.size === 0 || (!force && t.size < BATCH_BYTES)) continue;
      const ok = t.backend.write(writeCopyDataPieces(new Writer(t.size + 8), t.pieces).flush());
      t.pieces = [];
      t.size = 0;
      if (!ok) await t.backend.drained();
    }
  }

  /** Every node's COPY N, added up (a reference table's rows are counted once). */
  private async total(): Promise<number | Error> {
    const results = await Promise.all(this.targets.map((t) => t.done));
    const i = results.findIndex((res) => res.error ?? res.quietError);
    if (i >= 0) {
      const failed = results[i]!;
      return new BackendError(
        clientContext(this.targets[i]!, (failed.error ?? failed.quietError)!),
      );
    }
    let total = 0;
    for (const res of results) total += commandRowCount(res.tags[res.tags.length - 1] ?? '') ?? 0;
    return this.r.mode === 'all' ? total / this.targets.length : total;
  }
}

/** A node failed: end the COPY everywhere and pass the first node error on. */
async function abort(targets: readonly Target[], reason: string): Promise<Error> {
  for (const t of targets) if (!t.failed) t.backend.write(copyFail(reason));
  await Promise.allSettled(targets.map((t) => t.done));
  for (const t of targets) {
    const err = t.result?.error ?? t.result?.quietError;
    if (err !== undefined) return new BackendError(clientContext(t, err));
  }
  return new RouterError(SQLSTATE.connectionFailure, `COPY failed: ${reason}`);
}

/**
 * A node's error with its CONTEXT's line number turned into the client's: the node counts the
 * lines of its part of the stream (`COPY t, line 3, column id: "x"`), the client all of them.
 */
function clientContext(t: Target, fields: NoticeFields): NoticeFields {
  const where = fields.where;
  const lines = t.lines;
  if (where === undefined || lines === undefined) return fields;
  const m = COPY_LINE.exec(where);
  if (m === null) return fields;
  const nodeLine = Number(m[2]);
  const header = t.headerLines;
  const line = nodeLine <= header ? nodeLine : lines[nodeLine - header - 1];
  if (line === undefined) return fields;
  return { ...fields, where: where.replace(COPY_LINE, `$1${line}`) };
}

/** The line number in the CONTEXT of an error in COPY FROM data (copyfrom.c CopyFromErrorCallback). */
const COPY_LINE = /^(COPY [^\n]*?, line )(\d+)/;

/** Position of the key column in the COPY's column list (or the table's, asked of a node). */
async function keyColumn(
  s: Session,
  a: CopyFromAnalysis,
  r: CopyRoute & { mode: 'split' },
  node: string,
  catalog: Snapshot,
): Promise<{ index: number; columns: readonly string[] }> {
  const { keyColumn, schema, table } = r;
  let columns = a.columns;
  if (columns === undefined) {
    const sql =
      'SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = ' +
      `${quoteLiteral(quoteQualified(schema, table))}::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`;
    const e = await engage(s, node, catalog);
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
  return { index: i, columns };
}
