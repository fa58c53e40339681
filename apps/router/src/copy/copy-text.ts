// Rows written the way COPY TO writes them in text and CSV format (Postgres's copyto.c:
// CopyAttributeOutText and CopyAttributeOutCSV), from the text values of rows merged at the
// router. Byte for byte: the client encoding must not embed ASCII bytes in multibyte characters
// (UTF8 and the other server encodings do not). Pure.

export interface CopyTextOptions {
  readonly format: 'text' | 'csv';
  /** One-byte characters, as Postgres requires them. */
  readonly delimiter: string;
  readonly null: string;
  readonly quote: string;
  readonly escape: string;
  /** CSV: FORCE_QUOTE, per column. */
  readonly forceQuote: readonly boolean[];
}

const NL = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

/** The backslash escapes of control characters COPY's text format writes (\b \f \n \r \t \v). */
const CONTROL_ESCAPES: Readonly<Record<number, number>> = {
  0x08: 0x62,
  0x0c: 0x66,
  0x0a: 0x6e,
  0x0d: 0x72,
  0x09: 0x74,
  0x0b: 0x76,
};

export class CopyTextEncoder {
  private readonly delim: number;
  private readonly quote: number;
  private readonly escape: number;
  private readonly nullBytes: Buffer;

  constructor(
    private readonly o: CopyTextOptions,
    private readonly columns: number,
  ) {
    this.delim = o.delimiter.charCodeAt(0);
    this.quote = o.quote.charCodeAt(0);
    this.escape = o.escape.charCodeAt(0);
    this.nullBytes = Buffer.from(o.null, 'utf8');
  }

  /** One row's line, its line end included. */
  row(values: readonly (Buffer | null)[]): Buffer {
    const out: number[] = [];
    const csv = this.o.format === 'csv';
    for (let i = 0; i < values.length; i++) {
      if (i > 0) out.push(this.delim);
      const v = values[i];
      if (v === null || v === undefined) pushAll(out, this.nullBytes);
      else if (csv) this.csvField(out, v, this.o.forceQuote[i] === true);
      else this.textField(out, v);
    }
    out.push(NL);
    return Buffer.from(out);
  }

  /** CopyAttributeOutText: control characters, backslash and the delimiter escaped. */
  private textField(out: number[], v: Buffer): void {
    for (const c of v) {
      if (c < 0x20) {
        const letter = CONTROL_ESCAPES[c];
        if (letter !== undefined) out.push(BACKSLASH, letter);
        else if (c === this.delim) out.push(BACKSLASH, c);
        else out.push(c);
      } else if (c === BACKSLASH || c === this.delim) {
        out.push(BACKSLASH, c);
      } else {
        out.push(c);
      }
    }
  }

  /**
   * CopyAttributeOutCSV: quoted when forced, when equal to the NULL string, when it is `\.` alone
   * in a one-column row, or when it holds the delimiter, the quote, CR or LF; inside quotes, the
   * quote and the escape character are escaped.
   */
  private csvField(out: number[], v: Buffer, force: boolean): void {
    let quoted = force || v.equals(this.nullBytes);
    if (!quoted) {
      if (this.columns === 1 && v.length === 2 && v[0] === BACKSLASH && v[1] === 0x2e)
        quoted = true;
      else
        for (const c of v)
          if (c === this.delim || c === this.quote || c === NL || c === CR) {
            quoted = true;
            break;
          }
    }
    if (!quoted) return pushAll(out, v);
    out.push(this.quote);
    for (const c of v) {
      if (c === this.quote || c === this.escape) out.push(this.escape);
      out.push(c);
    }
    out.push(this.quote);
  }
}

function pushAll(out: number[], b: Buffer): void {
  for (const c of b) out.push(c);
}
