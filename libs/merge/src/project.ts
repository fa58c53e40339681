// Project: drops the trailing hidden columns (sort keys, HAVING inputs) the client did not ask for.
import type { Project } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';

export class ProjectSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly keep: number;

  constructor(input: RowSource, node: Project) {
    this.input = input;
    this.keep = Math.max(0, input.fields.length - node.dropTrailing);
    this.fields = input.fields.slice(0, this.keep);
  }

  async next(): Promise<Row | undefined> {
    const row = await this.input.next();
    return row === undefined ? undefined : row.slice(0, this.keep);
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
