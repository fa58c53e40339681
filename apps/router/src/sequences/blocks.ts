// Blocks of cluster-wide sequence values (docs/architecture.md, "Sequences"): the router reserves
// values from the coordinator (TxnService.AllocateSequence, durable before it answers) a block at
// a time and hands them out itself, so a statement waits on gRPC only when its sequence's block
// is empty; the next block is asked for as soon as half of the current one is used.
import { RouterError, SQLSTATE } from '../errors.js';

/** A sequence as the nodes define it (pg_sequence), named across the cluster. */
export interface SequenceDef {
  /** database.schema.name: one allocation per sequence per database. */
  readonly key: string;
  /** schema.name, quoted as needed (for messages, as Postgres names it). */
  readonly name: string;
  readonly start: bigint;
  readonly increment: bigint;
  readonly minValue: bigint;
  readonly maxValue: bigint;
  readonly cycle: boolean;
  /** The node's own sequence's next value when the router first saw it (values it gave before). */
  readonly floor: bigint;
}

/** The coordinator call that reserves a block (grpc in the router; a fake only where none runs). */
export type ReserveBlock = (
  def: SequenceDef,
  count: bigint,
) => Promise<{ readonly first: bigint; readonly count: bigint }>;

interface Block {
  next: bigint;
  left: bigint;
}

interface SequenceState {
  def: SequenceDef;
  blocks: Block[];
  /** Values in the blocks not handed out yet. */
  left: bigint;
  /** The reservation under way, if any. */
  pending: Promise<void> | undefined;
  /** The last reservation's error, thrown to the next caller that finds the blocks empty. */
  failed: unknown;
  exhausted: boolean;
}

export class SequenceBlocks {
  private readonly seqs = new Map<string, SequenceState>();

  constructor(
    private readonly reserve: ReserveBlock,
    /** Values per reservation. */
    readonly blockSize = 1000n,
  ) {}

  /**
   * `n` values of `def`, in order; an array now when the blocks hold them, else a promise (one
   * reservation for every caller waiting on the same sequence).
   */
  take(def: SequenceDef, n: number): bigint[] | Promise<bigint[]> {
    const st = this.state(def);
    const want = BigInt(n);
    if (st.left >= want) {
      const out = this.draw(st, n);
      if (st.left * 2n < this.blockSize && st.pending === undefined && !st.exhausted)
        this.refill(st, this.blockSize);
      return out;
    }
    return this.takeSlow(st, n);
  }

  private async takeSlow(st: SequenceState, n: number): Promise<bigint[]> {
    const want = BigInt(n);
    while (st.left < want) {
      if (st.exhausted) throw exhausted(st.def);
      if (st.pending === undefined) {
        st.failed = undefined;
        this.refill(st, want - st.left > this.blockSize ? want - st.left : this.blockSize);
      }
      await st.pending;
      if (st.failed !== undefined && st.left < want) {
        const e = st.failed;
        st.failed = undefined;
        throw reserveFailed(st.def, e);
      }
    }
    return this.draw(st, n);
  }

  private refill(st: SequenceState, count: bigint): void {
    st.pending = this.reserve(st.def, count).then(
      (b) => {
        st.pending = undefined;
        if (b.count <= 0n) {
          st.exhausted = true;
          return;
        }
        st.blocks.push({ next: b.first, left: b.count });
        st.left += b.count;
      },
      (e: unknown) => {
        st.pending = undefined;
        st.failed = e;
      },
    );
  }

  private draw(st: SequenceState, n: number): bigint[] {
    const inc = st.def.increment;
    const out = new Array<bigint>(n);
    for (let i = 0; i < n; i++) {
      const b = st.blocks[0]!;
      out[i] = b.next;
      b.next += inc;
      if (--b.left === 0n) st.blocks.shift();
    }
    st.left -= BigInt(n);
    return out;
  }

  private state(def: SequenceDef): SequenceState {
    let st = this.seqs.get(def.key);
    // A sequence created again under the same name (other parameters) starts afresh here; the
    // coordinator's record still never gives a value twice.
    if (st === undefined || !sameDef(st.def, def)) {
      st = {
        def,
        blocks: [],
        left: 0n,
        pending: undefined,
        failed: undefined,
        exhausted: false,
      };
      this.seqs.set(def.key, st);
    }
    return st;
  }
}

function sameDef(a: SequenceDef, b: SequenceDef): boolean {
  return (
    a.increment === b.increment &&
    a.minValue === b.minValue &&
    a.maxValue === b.maxValue &&
    a.start === b.start
  );
}

/** As Postgres says it when a sequence without CYCLE runs out (2200H). */
function exhausted(def: SequenceDef): RouterError {
  if (def.cycle)
    return new RouterError(
      SQLSTATE.featureNotSupported,
      `sequence ${def.name} reached its bound; CYCLE is not supported for cluster-wide sequences (values would repeat across nodes)`,
    );
  return new RouterError(
    '2200H',
    def.increment > 0n
      ? `nextval: reached maximum value of sequence "${def.name}" (${def.maxValue})`
      : `nextval: reached minimum value of sequence "${def.name}" (${def.minValue})`,
  );
}

function reserveFailed(def: SequenceDef, cause: unknown): RouterError {
  const e = new RouterError(
    SQLSTATE.connectionFailure,
    `the router could not reserve values of sequence ${def.name} from the coordinator; retry shortly`,
  );
  (e as { cause?: unknown }).cause = cause;
  return e;
}
