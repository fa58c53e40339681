// CountRows: `select count(*) from (<query>) s` when the subquery's rows are merged at the router
// (DISTINCT, GROUP BY, LIMIT across nodes): counts its input and gives one int8 row, as Postgres;
// or `select [not] exists (<query>)`: one bool row, whether the input has a row.
import type { CountRows } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { OID } from './compare.js';

export class CountRowsSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly exists: CountRows['exists'];
  private done = false;

  constructor(input: RowSource, node: CountRows) {
    this.input = input;
    this.exists = node.exists;
    const bool = node.exists !== undefined;
    this.fields = [
      {
        name: node.name,
        tableOid: 0,
        columnAttr: 0,
        typeOid: bool ? OID.bool : OID.int8,
        typeSize: bool ? 1 : 8,
        typeModifier: -1,
        format: 0,
      },
    ];
  }

  async next(): Promise<Row | undefined> {
    if (this.done) return undefined;
    this.done = true;
    if (this.exists !== undefined) {
      const found = (await this.input.next()) !== undefined;
      await this.input.close();
      return [Buffer.from(found === (this.exists === 'exists') ? 't' : 'f')];
    }
    let n = 0n;
    while ((await this.input.next()) !== undefined) n++;
    await this.input.close();
    return [Buffer.from(n.toString())];
  }

  async close(): Promise<void> {
    this.done = true;
    await this.input.close();
  }
}
