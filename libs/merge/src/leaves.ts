// Opens the per-node leaf streams: reads every node's RowDescription, checks the nodes agree on
// types and formats, and wraps each as a RowSource that ends at CommandComplete and returns() its
// iterator when closed (the router's cue to cancel that node's query).
import type { FieldDescription, LeafMessage, LeafStreams, Row, RowSource } from './types.js';
import { internal } from './errors.js';

export class LeafSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  /** Node position in the LeafStreams list. */
  readonly index: number;
  private readonly iterator: AsyncIterator<LeafMessage>;
  private finished = false;
  private closed = false;

  constructor(
    index: number,
    iterator: AsyncIterator<LeafMessage>,
    fields: readonly FieldDescription[],
  ) {
    this.index = index;
    this.iterator = iterator;
    this.fields = fields;
  }

  async next(): Promise<Row | undefined> {
    if (this.finished || this.closed) return undefined;
    const r = await this.iterator.next();
    if (r.done === true) {
      this.finished = true;
      throw internal(`node ${this.index} result ended without CommandComplete`);
    }
    const m = r.value;
    switch (m.kind) {
      case 'DataRow':
        if (m.values.length !== this.fields.length)
          throw internal(
            `node ${this.index} sent a row of ${m.values.length} columns, expected ${this.fields.length}`,
          );
        return m.values;
      case 'CommandComplete':
        this.finished = true;
        return undefined;
      case 'RowDescription':
        throw internal(`node ${this.index} sent a second RowDescription`);
      default:
        throw internal(`node ${this.index} sent an unexpected message`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.iterator.return?.();
  }
}

async function firstMessage(
  index: number,
  it: AsyncIterator<LeafMessage>,
): Promise<readonly FieldDescription[]> {
  const r = await it.next();
  if (r.done === true || r.value.kind !== 'RowDescription')
    throw internal(`node ${index} did not start its result with RowDescription`);
  return r.value.fields;
}

/**
 * Opens every leaf in parallel. On any failure every iterator is returned before the error is
 * rethrown, so no node query is left running.
 */
export async function openLeaves(
  streams: LeafStreams,
  expectedColumns: number | undefined,
): Promise<LeafSource[]> {
  if (streams.length === 0) throw internal('a read across nodes needs at least one node');
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const settled = await Promise.allSettled(iterators.map((it, i) => firstMessage(i, it)));
  try {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    const all = settled.map(
      (s) => (s as PromiseFulfilledResult<readonly FieldDescription[]>).value,
    );
    const first = all[0] ?? [];
    if (expectedColumns !== undefined && first.length !== expectedColumns)
      throw internal(`nodes returned ${first.length} columns, the plan expects ${expectedColumns}`);
    for (const [i, fields] of all.entries()) {
      const agree =
        fields.length === first.length &&
        fields.every(
          (f, c) =>
            f.typeOid === first[c]?.typeOid &&
            f.typeModifier === first[c]?.typeModifier &&
            f.format === first[c]?.format,
        );
      if (!agree)
        throw internal(`node ${i} returned columns of other types than node 0 (schema differs)`);
    }
    return iterators.map((it, i) => new LeafSource(i, it, first));
  } catch (e) {
    await Promise.allSettled(iterators.map((it) => it.return?.()));
    throw e;
  }
}

export async function closeAll(sources: readonly RowSource[]): Promise<void> {
  const results = await Promise.allSettled(sources.map((s) => s.close()));
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}
