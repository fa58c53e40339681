// The wire edge for errors (STYLE.md principle 9): whatever was thrown inside becomes the fields
// of one ErrorResponse with a SQLSTATE; a node's own error passes through with all its fields.
import {
  ProtocolError,
  Writer,
  writeErrorResponse,
  writeNoticeResponse,
  type NoticeFields,
} from '@tessera/pg-wire';
import { BackendError } from '../pool/backend.js';
import { RouterError, SQLSTATE, sqlstateOf } from '../errors.js';

/**
 * The ErrorResponse fields of anything thrown. A node's own error keeps all its fields; any error
 * carrying a SQLSTATE (RouterError, the parser's, a key's, COPY data's, the merge's, 2PC's)
 * becomes an ERROR with that code and its message; anything else is XX000, `internal`, and the
 * caller logs it with its stack.
 */
export function errorFields(e: unknown): {
  fields: NoticeFields;
  fatal: boolean;
  internal: boolean;
} {
  if (e instanceof BackendError)
    return { fields: e.fields, fatal: e.fields.severity === 'FATAL', internal: false };
  if (e instanceof RouterError) {
    const fields: NoticeFields = { severity: e.severity, code: e.sqlstate, message: e.message };
    if (e.detail !== undefined) fields.detail = e.detail;
    if (e.hint !== undefined) fields.hint = e.hint;
    return { fields, fatal: e.severity === 'FATAL', internal: false };
  }
  if (e instanceof ProtocolError)
    return {
      fields: { severity: 'FATAL', code: e.sqlstate, message: e.message },
      fatal: true,
      internal: false,
    };
  const code = sqlstateOf(e);
  if (code !== SQLSTATE.internalError && e instanceof Error) {
    const fields: NoticeFields = { severity: 'ERROR', code, message: e.message };
    const position = (e as { position?: unknown }).position;
    if (typeof position === 'number') fields.position = String(position);
    return { fields, fatal: false, internal: false };
  }
  return {
    fields: {
      severity: 'ERROR',
      code: SQLSTATE.internalError,
      message: 'internal error in the router',
    },
    fatal: false,
    internal: true,
  };
}

export function errorFrame(fields: NoticeFields): Buffer {
  return writeErrorResponse(new Writer(256), fields).flush();
}

export function noticeFrame(severity: string, code: string, message: string): Buffer {
  return writeNoticeResponse(new Writer(256), { severity, code, message }).flush();
}
