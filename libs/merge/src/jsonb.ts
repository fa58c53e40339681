// jsonb values for ordering and equality across nodes: jsonb_out's canonical text (the binary
// form, jsonb_send, is a version byte 1 and that text) read into a tree, compared token by token
// as compareJsonbContainers does: at each step types in their order (null < string < number <
// bool < array < object), containers by their number of elements or pairs first, scalars by value,
// numbers as numerics (1.0 = 1.00), strings by the collation (bytewise here; the caller checks).
import { compareDecimal, decimalKey, parseDecimal } from './decimal.js';
import type { Decimal } from './decimal.js';
import { internal } from './errors.js';

export type Json =
  | { readonly t: 'null' }
  | { readonly t: 'string'; readonly bytes: Buffer }
  | { readonly t: 'number'; readonly value: Decimal }
  | { readonly t: 'bool'; readonly value: boolean }
  | { readonly t: 'array'; readonly items: readonly Json[]; readonly rawScalar: boolean }
  | { readonly t: 'object'; readonly pairs: readonly (readonly [Buffer, Json])[] };

/** jsonb's enum jbvType order. */
const RANK = { null: 0, string: 1, number: 2, bool: 3, array: 16, object: 17 } as const;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

class Reader {
  at = 0;
  constructor(readonly text: string) {}

  fail(): never {
    throw internal(`a node sent jsonb text the router cannot read at ${this.at}`);
  }

  space(): void {
    while (this.text[this.at] === ' ') this.at++;
  }

  match(re: RegExp): string {
    re.lastIndex = this.at;
    const m = re.exec(this.text);
    if (m === null) this.fail();
    this.at += m[0].length;
    return m[0];
  }

  expect(s: string): void {
    if (!this.text.startsWith(s, this.at)) this.fail();
    this.at += s.length;
  }

  value(): Json {
    this.space();
    const c = this.text[this.at];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return { t: 'string', bytes: this.string() };
    for (const [word, v] of [
      ['null', { t: 'null' }],
      ['true', { t: 'bool', value: true }],
      ['false', { t: 'bool', value: false }],
    ] as const)
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return v;
      }
    return { t: 'number', value: numberValue(this.match(NUMBER)) };
  }

  string(): Buffer {
    return Buffer.from(JSON.parse(this.match(STRING)) as string, 'utf8');
  }

  array(): Json {
    this.expect('[');
    const items: Json[] = [];
    this.space();
    if (this.text[this.at] === ']') this.at++;
    else
      for (;;) {
        items.push(this.value());
        this.space();
        if (this.text[this.at++] === ']') break;
        if (this.text[this.at - 1] !== ',') this.fail();
      }
    return { t: 'array', items, rawScalar: false };
  }

  object(): Json {
    this.expect('{');
    const pairs: (readonly [Buffer, Json])[] = [];
    this.space();
    if (this.text[this.at] === '}') this.at++;
    else
      for (;;) {
        this.space();
        const key = this.string();
        this.space();
        this.expect(':');
        pairs.push([key, this.value()]);
        this.space();
        if (this.text[this.at++] === '}') break;
        if (this.text[this.at - 1] !== ',') this.fail();
      }
    return { t: 'object', pairs };
  }
}

/** A JSON number as an exact decimal (jsonb_out prints numeric_out's text, without exponent). */
function numberValue(text: string): Decimal {
  const e = /[eE]/.exec(text);
  if (e === null) return parseDecimal(text);
  const base = parseDecimal(text.slice(0, e.index));
  const exponent = Number(text.slice(e.index + 1));
  if (base.kind !== 'finite') return base;
  if (exponent >= 0)
    return { kind: 'finite', digits: base.digits * 10n ** BigInt(exponent), scale: base.scale };
  return { kind: 'finite', digits: base.digits, scale: base.scale - exponent };
}

/** jsonb text (jsonb_out) as a tree; a scalar on its own is jsonb's raw-scalar pseudo array. */
export function parseJsonb(text: string): Json {
  const r = new Reader(text);
  const v = r.value();
  r.space();
  if (r.at !== text.length) r.fail();
  return v.t === 'array' || v.t === 'object' ? v : { t: 'array', items: [v], rawScalar: true };
}

/** jsonb_send's bytes: version 1, then the text. */
export function jsonbFromBinary(b: Buffer): string {
  if (b.length < 1 || b[0] !== 1) throw internal('a node sent an unknown binary jsonb version');
  return b.toString('utf8', 1);
}

type Token =
  | { readonly k: 'begin'; readonly v: Json & { t: 'array' | 'object' } }
  | { readonly k: 'end' }
  | { readonly k: 'key' | 'elem' | 'value'; readonly v: Json };

/** The tokens JsonbIteratorNext yields without skipping nested containers. */
function* tokens(v: Json & { t: 'array' | 'object' }): Generator<Token> {
  yield { k: 'begin', v };
  if (v.t === 'array')
    for (const item of v.items)
      if (item.t === 'array' || item.t === 'object') yield* tokens(item);
      else yield { k: 'elem', v: item };
  else
    for (const [key, value] of v.pairs) {
      yield { k: 'key', v: { t: 'string', bytes: key } };
      if (value.t === 'array' || value.t === 'object') yield* tokens(value);
      else yield { k: 'value', v: value };
    }
  yield { k: 'end' };
}

function compareScalar(a: Json, b: Json): number {
  if (a.t === 'string' && b.t === 'string') return Buffer.compare(a.bytes, b.bytes);
  if (a.t === 'number' && b.t === 'number') return compareDecimal(a.value, b.value);
  if (a.t === 'bool' && b.t === 'bool') return Number(a.value) - Number(b.value);
  return 0;
}

/** compareJsonbContainers, with strings in bytewise order. */
export function compareJsonb(a: Json, b: Json): number {
  const ia = tokens(a as Json & { t: 'array' | 'object' });
  const ib = tokens(b as Json & { t: 'array' | 'object' });
  for (;;) {
    const ra = ia.next();
    const rb = ib.next();
    if (ra.done === true || rb.done === true) return ra.done === rb.done ? 0 : ra.done ? -1 : 1;
    const x = ra.value;
    const y = rb.value;
    if (x.k === 'end' || y.k === 'end') {
      if (x.k === y.k) continue;
      return x.k === 'end' ? -1 : 1;
    }
    let res = 0;
    if (x.k === y.k && x.v.t === y.v.t) {
      if (x.v.t === 'array' && y.v.t === 'array') {
        // As Postgres: a raw scalar sorts first, but a count that differs decides (its anomaly).
        if (x.v.rawScalar !== y.v.rawScalar) res = x.v.rawScalar ? -1 : 1;
        if (x.v.items.length !== y.v.items.length)
          res = x.v.items.length > y.v.items.length ? 1 : -1;
      } else if (x.v.t === 'object' && y.v.t === 'object') {
        if (x.v.pairs.length !== y.v.pairs.length)
          res = x.v.pairs.length > y.v.pairs.length ? 1 : -1;
      } else res = compareScalar(x.v, y.v);
    } else res = RANK[x.v.t] > RANK[y.v.t] ? 1 : -1;
    if (res !== 0) return res;
  }
}

/** Equal jsonb values (as jsonb's `=`) have equal keys: numbers by value, strings by bytes. */
export function jsonbKey(v: Json): string {
  switch (v.t) {
    case 'null':
      return 'n';
    case 'bool':
      return v.value ? 't' : 'f';
    case 'number':
      return `#${decimalKey(v.value)}`;
    case 'string':
      return `s${v.bytes.length}:${v.bytes.toString('latin1')}`;
    case 'array':
      return `${v.rawScalar ? 'r' : 'a'}${v.items.length}[${v.items.map(jsonbKey).join(',')}]`;
    case 'object':
      return `o${v.pairs.length}{${v.pairs.map(([k, x]) => `${k.length}:${k.toString('latin1')}=${jsonbKey(x)}`).join(',')}}`;
  }
}
