// Compute: each output column is an input column passed on or an expression over the input row's
// values (expression.ts), typed once when the plan is opened so a refusal comes before any row.
import type { Compute, Expr } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { Evaluator, fieldOf } from './expression.js';
import { internal } from './errors.js';

type Column = { readonly input: number } | { readonly expr: Expr };

export class ComputeSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly columns: readonly Column[];
  private readonly evaluator: Evaluator;

  constructor(input: RowSource, node: Compute) {
    this.input = input;
    this.evaluator = new Evaluator(input.fields);
    this.columns = node.columns.map((c) =>
      c.kind === 'input' ? { input: c.index } : { expr: c.expr },
    );
    this.fields = node.columns.map((c): FieldDescription => {
      if (c.kind === 'input') {
        const f = input.fields[c.index];
        if (f === undefined) throw internal(`compute column ${c.index} is not in its input`);
        return f;
      }
      const type = this.evaluator.check(c.expr);
      return fieldOf(type, c.expr.kind === 'cast' ? c.expr.typmod : -1, c.name);
    });
  }

  async next(): Promise<Row | undefined> {
    const row = await this.input.next();
    if (row === undefined) return undefined;
    return this.columns.map((c) =>
      'input' in c ? (row[c.input] ?? null) : this.evaluator.text(c.expr, row),
    );
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
