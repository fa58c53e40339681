// Limit: skips `offset` rows, passes `count`, then closes its input at once, so the nodes' queries
// are cancelled while the client still reads. Values come from constants or bind parameters and
// are checked as Postgres checks them (negative is an error, NULL means no limit / no offset).
import type { Limit, LimitValue } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import {
  MergeError,
  SQLSTATE_INVALID_ROW_COUNT_IN_LIMIT,
  SQLSTATE_INVALID_ROW_COUNT_IN_OFFSET,
  SQLSTATE_INVALID_TEXT_REPRESENTATION,
} from './errors.js';

type Params = readonly (string | Buffer | null)[];

function valueOf(v: LimitValue | undefined, params: Params): bigint | undefined {
  if (v === undefined) return undefined;
  if (v.kind === 'const') return BigInt(v.value);
  const p = params[v.index];
  if (p === null) return undefined;
  if (p === undefined)
    throw new MergeError('08P01', `bind message supplies no value for parameter $${v.index + 1}`);
  const text = (typeof p === 'string' ? p : p.toString('latin1')).trim();
  if (!/^[-+]?\d+$/.test(text))
    throw new MergeError(
      SQLSTATE_INVALID_TEXT_REPRESENTATION,
      `invalid input syntax for type bigint: "${text}"`,
    );
  return BigInt(text);
}

export class LimitSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly node: Limit;
  private readonly params: Params;
  private started = false;
  private remaining: bigint | undefined;
  private skip = 0n;

  constructor(input: RowSource, node: Limit, params: Params) {
    this.input = input;
    this.fields = input.fields;
    this.node = node;
    this.params = params;
  }

  /** Read at the first pull, as Postgres's ExecLimit does: its errors follow the RowDescription. */
  private start(): void {
    this.started = true;
    const count = valueOf(this.node.count, this.params);
    const offset = valueOf(this.node.offset, this.params);
    if (count !== undefined && count < 0n)
      throw new MergeError(SQLSTATE_INVALID_ROW_COUNT_IN_LIMIT, 'LIMIT must not be negative');
    if (offset !== undefined && offset < 0n)
      throw new MergeError(SQLSTATE_INVALID_ROW_COUNT_IN_OFFSET, 'OFFSET must not be negative');
    this.remaining = count;
    this.skip = offset ?? 0n;
  }

  async next(): Promise<Row | undefined> {
    if (!this.started) this.start();
    if (this.remaining === 0n) {
      await this.input.close();
      return undefined;
    }
    for (;;) {
      const row = await this.input.next();
      if (row === undefined) return undefined;
      if (this.skip > 0n) {
        this.skip--;
        continue;
      }
      if (this.remaining !== undefined) {
        this.remaining--;
        if (this.remaining === 0n) await this.input.close();
      }
      return row;
    }
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
