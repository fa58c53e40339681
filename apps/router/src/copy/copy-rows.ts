// Splitting COPY FROM STDIN data into rows and reading one field of each (the shard key), in text
// or CSV format with the statement's options. Rows are handed on as the bytes they came in;
// only the key field is ever decoded. Pure: no I/O.

export interface CopyTextFormat {
  readonly format: 'text' | 'csv';
  readonly delimiter: string;
  readonly null: string;
  readonly quote: string;
  readonly escape: string;
  readonly header: boolean;
}

const NL = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

/**
 * Feed it CopyData payloads with push(); it calls `onRow(row, key)` for every complete row
 * (`row` includes its line end, `key` is the decoded key field or null for SQL NULL). The first
 * line is kept in `header` when the format has one. A `\.` line ends the data.
 */
export class CopyRowSplitter {
  header: Buffer | undefined;
  ended = false;
  private pending: Buffer = Buffer.alloc(0);
  private scanFrom = 0;
  private inQuote = false;
  private readonly delim: number;
  private readonly quote: number;
  private readonly escape: number;
  private readonly nullBytes: Buffer;
  private wantHeader: boolean;

  /**
   * `columns`: the COPY's columns in order, so a row that ends before the key field is refused
   * as Postgres refuses it (naming the first column it lacks).
   */
  constructor(
    private readonly fmt: CopyTextFormat,
    private readonly keyIndex: number,
    private readonly onRow: (row: Buffer, key: string | null) => void,
    private readonly columns: readonly string[] = [],
  ) {
    this.delim = fmt.delimiter.charCodeAt(0);
    this.quote = fmt.quote.charCodeAt(0);
    this.escape = fmt.escape.charCodeAt(0);
    this.nullBytes = Buffer.from(fmt.null, 'utf8');
    this.wantHeader = fmt.header;
  }

  push(data: Buffer): void {
    if (this.ended || data.length === 0) return;
    const buf = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
    let rowStart = 0;
    let i = this.pending.length === 0 ? 0 : this.scanFrom;
    const csv = this.fmt.format === 'csv';
    for (; i < buf.length; i++) {
      const c = buf[i]!;
      if (csv) {
        if (this.inQuote) {
          if (
            c === this.escape &&
            this.escape !== this.quote &&
            i + 1 < buf.length &&
            (buf[i + 1] === this.quote || buf[i + 1] === this.escape)
          ) {
            i++;
          } else if (c === this.quote) {
            this.inQuote = false;
          }
          continue;
        }
        if (c === this.quote) {
          this.inQuote = true;
          continue;
        }
      } else if (c === BACKSLASH) {
        // An escaped character never ends a row (but a backslash at the chunk end waits for more).
        if (i + 1 >= buf.length) break;
        if (buf[i + 1] !== NL) {
          i++;
          continue;
        }
      }
      if (c !== NL) continue;
      this.row(buf.subarray(rowStart, i + 1));
      rowStart = i + 1;
      if (this.ended) return;
    }
    this.pending = rowStart === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(rowStart));
    this.scanFrom = i - rowStart;
  }

  /** The data ended (CopyDone): a last row without a line end still counts. */
  end(): void {
    if (!this.ended && this.pending.length > 0) this.row(this.pending);
    this.pending = Buffer.alloc(0);
    this.ended = true;
  }

  private row(row: Buffer): void {
    let end = row.length;
    if (end > 0 && row[end - 1] === NL) end--;
    if (end > 0 && row[end - 1] === CR) end--;
    const line = row.subarray(0, end);
    if (line.length === 2 && line[0] === BACKSLASH && line[1] === 0x2e) {
      this.ended = true;
      return;
    }
    if (this.wantHeader) {
      this.wantHeader = false;
      this.header = Buffer.from(row);
      return;
    }
    this.onRow(row, this.fmt.format === 'csv' ? this.csvField(line) : this.textField(line));
  }

  private textField(line: Buffer): string | null {
    let field = 0;
    let start = 0;
    for (let i = 0; i <= line.length; i++) {
      const c = line[i];
      if (i < line.length && c === BACKSLASH) {
        i++;
        continue;
      }
      if (i === line.length || c === this.delim) {
        if (field === this.keyIndex) {
          const raw = line.subarray(start, i);
          return raw.equals(this.nullBytes) ? null : unescapeText(raw);
        }
        field++;
        start = i + 1;
      }
    }
    throw this.missing(field);
  }

  /** A row with `fields` fields, fewer than the key needs. */
  private missing(fields: number): CopyDataError {
    const column = this.columns[fields];
    return new CopyDataError(
      column === undefined
        ? `missing data for the key column (field ${this.keyIndex + 1})`
        : `missing data for column "${column}"`,
    );
  }

  private csvField(line: Buffer): string | null {
    let field = 0;
    let i = 0;
    while (i <= line.length) {
      let value: string | null;
      if (i < line.length && line[i] === this.quote) {
        const parts: Buffer[] = [];
        let from = ++i;
        for (;;) {
          if (i >= line.length) throw new CopyDataError('unterminated CSV quoted field');
          const c = line[i]!;
          if (
            c === this.escape &&
            i + 1 < line.length &&
            (line[i + 1] === this.quote ||
              (this.escape !== this.quote && line[i + 1] === this.escape))
          ) {
            parts.push(line.subarray(from, i));
            from = i + 1;
            i += 2;
            continue;
          }
          if (c === this.quote) break;
          i++;
        }
        parts.push(line.subarray(from, i));
        i++; // closing quote
        value = Buffer.concat(parts).toString('utf8');
        // Quoted values are never NULL; skip to the delimiter.
        while (i < line.length && line[i] !== this.delim) i++;
      } else {
        let j = i;
        while (j < line.length && line[j] !== this.delim) j++;
        const raw = line.subarray(i, j);
        value = raw.equals(this.nullBytes) ? null : raw.toString('utf8');
        i = j;
      }
      if (field === this.keyIndex) return value;
      field++;
      i++; // the delimiter
      if (i > line.length) break;
    }
    throw this.missing(field);
  }
}

/** Malformed COPY data (SQLSTATE 22P04 bad_copy_file_format). */
export class CopyDataError extends Error {
  override readonly name = 'CopyDataError';
  readonly sqlstate = '22P04';
}

/** The text format's backslash escapes (Postgres COPY docs, "Text Format"). */
export function unescapeText(raw: Buffer): string {
  if (raw.indexOf(BACKSLASH) < 0) return raw.toString('utf8');
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== BACKSLASH || i + 1 >= raw.length) {
      out.push(c);
      continue;
    }
    const n = raw[++i]!;
    switch (n) {
      case 0x62:
        out.push(0x08);
        break; // \b
      case 0x66:
        out.push(0x0c);
        break; // \f
      case 0x6e:
        out.push(0x0a);
        break; // \n
      case 0x72:
        out.push(0x0d);
        break; // \r
      case 0x74:
        out.push(0x09);
        break; // \t
      case 0x76:
        out.push(0x0b);
        break; // \v
      case 0x78: {
        // \xhh
        let v = 0;
        let k = 0;
        while (
          k < 2 &&
          i + 1 < raw.length &&
          /[0-9a-fA-F]/.test(String.fromCharCode(raw[i + 1]!))
        ) {
          v = v * 16 + parseInt(String.fromCharCode(raw[++i]!), 16);
          k++;
        }
        if (k === 0) out.push(0x78);
        else out.push(v & 0xff);
        break;
      }
      default:
        if (n >= 0x30 && n <= 0x37) {
          let v = n - 0x30;
          for (
            let k = 0;
            k < 2 && i + 1 < raw.length && raw[i + 1]! >= 0x30 && raw[i + 1]! <= 0x37;
            k++
          )
            v = v * 8 + (raw[++i]! - 0x30);
          out.push(v & 0xff);
        } else {
          out.push(n);
        }
    }
  }
  return Buffer.from(out).toString('utf8');
}
