// Filter: HAVING evaluated at the router over final rows, with SQL three-valued logic. A constant is
// read as the type of the column it is compared with (as Postgres resolves an untyped literal);
// comparisons the router cannot make exactly as Postgres would are refused with 0A000.
import type { Filter, Operand, Predicate } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { OID, isNumericFamily, typeOps } from './compare.js';
import { compareDecimal } from './decimal.js';
import { readBool, readDecimal } from './values.js';
import { unsupported } from './errors.js';

type Truth = boolean | null;

function cannot(p: Predicate | Operand): never {
  throw unsupported(
    `this HAVING condition cannot be evaluated across nodes (${JSON.stringify(p)})`,
  );
}

const INTEGER_TEXT = /^\s*[-+]?\d+\s*$/;
const NUMERIC_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$/;

/** A literal read as a value of the column's type, encoded as that type's text. */
function literalAs(o: Operand & { kind: 'const' }, field: FieldDescription): Buffer {
  const text = o.text ?? '';
  const oid = field.typeOid;
  const integer = oid === OID.int2 || oid === OID.int4 || oid === OID.int8;
  // Which float width Postgres resolves `float4 < literal` to is not something to guess at.
  if (oid === OID.float4) cannot(o);
  if (isNumericFamily(oid) || oid === OID.float8) {
    // Numeric-family values are compared as exact decimals, so `count(*) > 1.5` needs no cast.
    const ok =
      o.literal === 'integer' ||
      o.literal === 'numeric' ||
      (o.literal === 'string' && (integer ? INTEGER_TEXT : NUMERIC_TEXT).test(text));
    if (!ok) cannot(o);
    return Buffer.from(text.trim());
  }
  if (oid === OID.bool) {
    if (o.literal === 'boolean') return Buffer.from(text === 'true' ? 't' : 'f');
    cannot(o);
  }
  if (o.literal !== 'string') cannot(o);
  // Postgres reads these literals case-insensitively; only their canonical spelling compares exactly.
  if (
    oid === OID.uuid &&
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(text)
  )
    cannot(o);
  if (oid === OID.bytea && !/^\\x[0-9a-f]*$/.test(text)) cannot(o);
  return Buffer.from(text, 'utf8');
}

export class FilterSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly predicate: Predicate;
  private readonly bytewise: boolean;

  constructor(input: RowSource, node: Filter, textCollationIsBytewise: boolean) {
    this.input = input;
    this.fields = input.fields;
    this.predicate = node.predicate;
    this.bytewise = textCollationIsBytewise;
  }

  private field(index: number): FieldDescription {
    const f = this.fields[index];
    if (f === undefined) throw unsupported(`HAVING refers to a missing column ${index}`);
    return f;
  }

  /** -1 / 0 / 1, or null when either side is NULL. */
  private compare(left: Operand, right: Operand, op: string, row: Row): number | null {
    if (left.kind === 'const' && right.kind === 'const') cannot(left);
    if (left.kind === 'const') {
      const c = this.compare(right, left, op, row);
      return c === null ? null : -c;
    }
    const lf = this.field(left.index);
    const lv = row[left.index] ?? null;
    let rv: Buffer | null;
    let rf: FieldDescription;
    if (right.kind === 'const') {
      if (right.text === null || right.literal === 'null') return null;
      rv = literalAs(right, lf);
      // The literal is text of the column's type (a number of the numeric family as numeric).
      rf = { ...lf, typeOid: isNumericFamily(lf.typeOid) ? OID.numeric : lf.typeOid, format: 0 };
    } else {
      rv = row[right.index] ?? null;
      rf = this.field(right.index);
    }
    if (lv === null || rv === null) return null;
    if (isNumericFamily(lf.typeOid) && isNumericFamily(rf.typeOid))
      return compareDecimal(readDecimal(lv, lf), readDecimal(rv, rf));
    if (lf.typeOid !== rf.typeOid) cannot(left);
    const purpose = op === '=' || op === '<>' ? 'equality' : 'order';
    const lops = typeOps(lf.typeOid, purpose, this.bytewise, lf.format);
    const rops = typeOps(rf.typeOid, purpose, this.bytewise, rf.format);
    const c = lops.compare(lops.decode(lv), rops.decode(rv));
    return purpose === 'equality' ? (c === 0 ? 0 : 1) : c;
  }

  private operandTruth(o: Operand, row: Row): Truth {
    if (o.kind === 'const') {
      if (o.text === null) return null;
      if (o.literal !== 'boolean') cannot(o);
      return o.text === 'true';
    }
    const f = this.field(o.index);
    if (f.typeOid !== OID.bool) cannot(o);
    const v = row[o.index] ?? null;
    return v === null ? null : readBool(v, f);
  }

  private evaluate(p: Predicate, row: Row): Truth {
    switch (p.kind) {
      case 'and': {
        let result: Truth = true;
        for (const a of p.args) {
          const t = this.evaluate(a, row);
          if (t === false) return false;
          if (t === null) result = null;
        }
        return result;
      }
      case 'or': {
        let result: Truth = false;
        for (const a of p.args) {
          const t = this.evaluate(a, row);
          if (t === true) return true;
          if (t === null) result = null;
        }
        return result;
      }
      case 'not': {
        const t = this.evaluate(p.arg, row);
        return t === null ? null : !t;
      }
      case 'is_null': {
        const isNull =
          p.arg.kind === 'const' ? p.arg.text === null : (row[p.arg.index] ?? null) === null;
        return p.negated ? !isNull : isNull;
      }
      case 'operand':
        return this.operandTruth(p.arg, row);
      case 'compare': {
        const c = this.compare(p.left, p.right, p.op, row);
        if (c === null) return null;
        switch (p.op) {
          case '=':
            return c === 0;
          case '<>':
            return c !== 0;
          case '<':
            return c < 0;
          case '<=':
            return c <= 0;
          case '>':
            return c > 0;
          case '>=':
            return c >= 0;
          default:
            return cannot(p);
        }
      }
      default: {
        const never: never = p;
        return cannot(never);
      }
    }
  }

  async next(): Promise<Row | undefined> {
    for (let row = await this.input.next(); row !== undefined; row = await this.input.next())
      if (this.evaluate(this.predicate, row) === true) return row;
    return undefined;
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
