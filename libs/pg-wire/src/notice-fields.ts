// ErrorResponse and NoticeResponse share one body: (field type byte, string) pairs ending with a
// zero byte. Field letters are mapped to the names used in the Postgres docs, both ways.
import { BodyReader } from './body-reader.js';
import { BackendCode } from './codes.js';
import type { Writer } from './writer.js';

export interface NoticeFields {
  /** S: ERROR, FATAL, PANIC, WARNING, NOTICE, ... possibly localized. */
  severity: string;
  /** V: the same, never localized (servers 9.6+). */
  severityNonLocalized?: string;
  /** C: SQLSTATE. */
  code: string;
  /** M */
  message: string;
  /** D */
  detail?: string;
  /** H */
  hint?: string;
  /** P: 1-based character index into the query, as decimal text. */
  position?: string;
  /** p */
  internalPosition?: string;
  /** q */
  internalQuery?: string;
  /** W */
  where?: string;
  /** s */
  schema?: string;
  /** t */
  table?: string;
  /** c */
  column?: string;
  /** d */
  dataType?: string;
  /** n */
  constraint?: string;
  /** F */
  file?: string;
  /** L */
  line?: string;
  /** R */
  routine?: string;
}

type FieldName = keyof NoticeFields;

/** In the order Postgres itself sends them. */
const FIELDS: readonly (readonly [number, FieldName])[] = [
  [0x53, 'severity'], // S
  [0x56, 'severityNonLocalized'], // V
  [0x43, 'code'], // C
  [0x4d, 'message'], // M
  [0x44, 'detail'], // D
  [0x48, 'hint'], // H
  [0x50, 'position'], // P
  [0x70, 'internalPosition'], // p
  [0x71, 'internalQuery'], // q
  [0x57, 'where'], // W
  [0x73, 'schema'], // s
  [0x74, 'table'], // t
  [0x63, 'column'], // c
  [0x64, 'dataType'], // d
  [0x6e, 'constraint'], // n
  [0x46, 'file'], // F
  [0x4c, 'line'], // L
  [0x52, 'routine'], // R
];

const NAME_BY_LETTER: (FieldName | undefined)[] = [];
for (const [letter, name] of FIELDS) NAME_BY_LETTER[letter] = name;

/** Decodes an ErrorResponse body. Unknown field letters are skipped, as the docs ask. */
export function decodeErrorResponse(body: Buffer): NoticeFields {
  return decodeFields(body, 'ErrorResponse');
}

/** Decodes a NoticeResponse body (same layout as ErrorResponse). */
export function decodeNoticeResponse(body: Buffer): NoticeFields {
  return decodeFields(body, 'NoticeResponse');
}

function decodeFields(body: Buffer, what: string): NoticeFields {
  const r = new BodyReader(body, what);
  // Always-present fields start empty so a broken server cannot leave them undefined.
  const fields: NoticeFields = { severity: '', code: '', message: '' };
  while (true) {
    const letter = r.byte();
    if (letter === 0) break;
    const value = r.cstring();
    const name = NAME_BY_LETTER[letter];
    if (name !== undefined) fields[name] = value;
  }
  r.done();
  return fields;
}

/** Appends an ErrorResponse. `severityNonLocalized` defaults to `severity`. */
export function writeErrorResponse(w: Writer, fields: NoticeFields): Writer {
  return writeFields(w, BackendCode.ErrorResponse, fields);
}

/** Appends a NoticeResponse. */
export function writeNoticeResponse(w: Writer, fields: NoticeFields): Writer {
  return writeFields(w, BackendCode.NoticeResponse, fields);
}

function writeFields(w: Writer, code: number, fields: NoticeFields): Writer {
  w.begin(code);
  for (const [letter, name] of FIELDS) {
    const value =
      name === 'severityNonLocalized'
        ? (fields.severityNonLocalized ?? fields.severity)
        : fields[name];
    if (value === undefined) continue;
    w.int8(letter).cstring(value);
  }
  return w.int8(0).end();
}
