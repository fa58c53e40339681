// CountRows: `select count(*) from (<query>) s` when the subquery's rows are merged at the router
// (DISTINCT, GROUP BY, LIMIT across nodes): counts its input and gives one int8 row, as Postgres.
import type { CountRows } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { OID } from './compare.js';

export class CountRowsSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private done = false;

  constructor(input: RowSource, node: CountRows) {
    this.input = input;
    this.fields = [
      {
        name: node.name,
        tableOid: 0,
        columnAttr: 0,
        typeOid: OID.int8,
        typeSize: 8,
        typeModifier: -1,
        format: 0,
      },
    ];
  }

  async next(): Promise<Row | undefined> {
    if (this.done) return undefined;
    this.done = true;
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
