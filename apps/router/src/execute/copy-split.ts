// COPY FROM STDIN into a table on several nodes: every node starts its COPY inside one
// transaction across the nodes (the client's, or an implicit one committed with two-phase commit);
// the client's data is split by row owner (text and CSV rows, binary tuples), or sent whole to
// every node for a reference table. All the rows land or none. The client sees one COPY N.
import {
  BackendCode,
  COPY_DONE,
  FrameReader,
  frameBytes,
  FrontendCode,
  Writer,
  commandRowCount,
  writeCommandComplete,
  writeCopyDataPieces,
  writeCopyFail,
  writeCopyInResponse,
  writeQuery,
} from '@tessera/pg-wire';
import { hashKeyText } from '@tessera/pg-hash';
import type { Snapshot } from '@tessera/keyspace';
import type { Analysis, CopyFromAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import type { CopyRoute } from '../routing/route-types.js';
import { CopyRowSplitter } from '../copy/copy-rows.js';
import { BinaryCopySplitter } from '../copy/copy-binary.js';
import { HeldOut } from '../session/client-out.js';
import type { ExchangeResult } from './exchange.js';
import { abort, firstError, type Target } from './copy-split-end.js';
import { engage, lost } from './backends.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';
import type { InMsg } from '../session/client-in.js';
import { atomically } from './cross-node.js';
import { copyColumns, type CopyColumns } from './copy-columns.js';

/** Rows gathered per node before they go out as one CopyData. */
const BATCH_BYTES = 64 * 1024;

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();
const copyFail = (reason: string): Buffer => writeCopyFail(new Writer(64), reason).flush();

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

/** The client's data on its way to the nodes: split by row owner. */
interface Splitter {
  push(data: Buffer): void;
  end(): void;
}

/** One COPY across nodes: starts it on every node, feeds each its rows, gathers the counts. */
class CopySplit {
  private readonly targets: Target[] = [];
  private readonly byNode = new Map<string, Target>();
  private anyFailed = false;
  private splitter: Splitter | undefined;
  /** What the first node answered its COPY with (the client's CopyInResponse). */
  private firstOut: HeldOut | undefined;

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
      r.mode === 'split' ? await copyColumns(s, a, r, nodes[0]!, this.catalog) : undefined;
    try {
      for (const node of nodes) await this.start(node);
      await Promise.all(targets.map((t) => t.ready));
      if (this.anyFailed) return await abort(targets, 'another node failed to start the COPY');
      if (r.mode === 'split') this.splitter = this.makeSplitter(r, key!);
      // Every node is in COPY IN: the client may send its data.
      s.out.push(this.copyInResponse(key));
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

  /** The first node's own CopyInResponse (format and columns as Postgres says them). */
  private copyInResponse(key: CopyColumns | undefined): Buffer {
    const reader = new FrameReader();
    for (const p of this.firstOut?.pieces ?? []) reader.push(Buffer.from(p));
    for (let f = reader.next(); f; f = reader.next())
      if (f.code === BackendCode.CopyInResponse) return Buffer.from(frameBytes(f));
    const binary = this.a.options.format === 'binary' ? 1 : 0;
    const columns = key?.columns ?? this.a.columns ?? [];
    return writeCopyInResponse(
      new Writer(16),
      binary,
      columns.map(() => binary),
    ).flush();
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
    const out = new HeldOut(this.firstOut === undefined);
    this.firstOut ??= out;
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

  private makeSplitter(r: CopyRoute & { mode: 'split' }, key: CopyColumns): Splitter {
    const ks = r.keyspace;
    // A NULL key fails the key's NOT NULL on any node; a malformed tuple fails anywhere: one node.
    const fallback = this.byNode.get(ks.ownerOf(0n))!;
    const place = (t: Target, bytes: Buffer, line: number | undefined): void => {
      t.pieces.push(bytes);
      t.size += bytes.length;
      if (line !== undefined) t.lines!.push(line);
    };
    const everyNode = (bytes: Buffer): void => {
      for (const t of this.targets) place(t, bytes, undefined);
    };
    if (key.hashBinary !== undefined) {
      const hash = key.hashBinary;
      return new BinaryCopySplitter(key.columns.length, key.index, {
        all: everyNode,
        tuple: (bytes, value, line) => {
          let target = fallback;
          if (value !== null) {
            try {
              target = this.byNode.get(ks.ownerOf(hash(value)))!;
            } catch {
              return false;
            }
          }
          place(target, bytes, line);
          return true;
        },
        rest: (bytes, line) => place(fallback, bytes, line),
      });
    }
    let line = 0;
    const splitter: CopyRowSplitter = new CopyRowSplitter(
      this.a.options as never,
      key.index,
      (row, value) => {
        if (line === 0 && splitter.header !== undefined) {
          // A header line, sent to every node as its own first line, is the client's first too.
          everyNode(splitter.header);
          for (const t of this.targets) t.headerLines = 1;
          line = 1;
        }
        const node =
          value === null ? ks.ownerOf(0n) : ks.ownerOf(hashKeyText(ks.keyType, value, ks.seed));
        place(this.byNode.get(node)!, row, ++line);
      },
      key.columns,
    );
    return {
      push: (data) => splitter.push(data),
      end: () => {
        splitter.end();
        if (line === 0 && splitter.header !== undefined) everyNode(splitter.header);
      },
    };
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
    const failed = firstError(this.targets);
    if (failed !== undefined) return failed;
    let total = 0;
    for (const res of results) total += commandRowCount(res.tags[res.tags.length - 1] ?? '') ?? 0;
    return this.r.mode === 'all' ? total / this.targets.length : total;
  }
}
