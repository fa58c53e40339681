// Server messages: encode with our writers, frame, decode, compare; exact bytes of the fixed ones.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writer } from './writer.js';
import { FrameReader, type Frame } from './frame-reader.js';
import { BackendCode } from './codes.js';
import { ProtocolError } from './errors.js';
import {
  writeAuthenticationCleartextPassword,
  writeAuthenticationMD5Password,
  writeAuthenticationOk,
  writeAuthenticationSASL,
  writeAuthenticationSASLContinue,
  writeAuthenticationSASLFinal,
  writeBackendKeyData,
  writeBindComplete,
  writeCloseComplete,
  writeCommandComplete,
  writeCopyInResponse,
  writeCopyOutResponse,
  writeDataRow,
  writeEmptyQueryResponse,
  writeNegotiateProtocolVersion,
  writeNoData,
  writeNotificationResponse,
  writeParameterDescription,
  writeParameterStatus,
  writeParseComplete,
  writePortalSuspended,
  writeReadyForQuery,
  writeRowDescription,
} from './backend-encode.js';
import {
  commandRowCount,
  decodeAuthentication,
  decodeBackendKeyData,
  decodeCommandComplete,
  decodeCopyResponse,
  decodeDataRow,
  decodeNegotiateProtocolVersion,
  decodeNotificationResponse,
  decodeParameterDescription,
  decodeParameterStatus,
  decodeReadyForQuery,
  readyForQueryStatus,
  decodeRowDescription,
} from './backend-decode.js';
import {
  decodeErrorResponse,
  decodeNoticeResponse,
  writeErrorResponse,
  writeNoticeResponse,
} from './notice-fields.js';

function frames(w: Writer): Frame[] {
  const r = new FrameReader();
  r.push(w.flush());
  const out: Frame[] = [];
  for (let f = r.next(); f; f = r.next()) out.push(f);
  assert.equal(r.buffered, 0);
  return out;
}

function one(w: Writer, code: number): Buffer {
  const [f, ...rest] = frames(w);
  assert.equal(rest.length, 0);
  assert.equal(f?.code, code);
  return f!.body;
}

test('Authentication requests', () => {
  assert.equal(writeAuthenticationOk(new Writer()).flush().toString('hex'), '520000000800000000');
  assert.deepEqual(
    decodeAuthentication(one(writeAuthenticationOk(new Writer()), BackendCode.Authentication)),
    { type: 'Ok' },
  );
  assert.deepEqual(
    decodeAuthentication(
      one(writeAuthenticationCleartextPassword(new Writer()), BackendCode.Authentication),
    ),
    {
      type: 'CleartextPassword',
    },
  );
  const md5 = decodeAuthentication(
    one(
      writeAuthenticationMD5Password(new Writer(), Buffer.from([1, 2, 3, 4])),
      BackendCode.Authentication,
    ),
  );
  assert.deepEqual(md5, { type: 'MD5Password', salt: Buffer.from([1, 2, 3, 4]) });
  const sasl = decodeAuthentication(
    one(
      writeAuthenticationSASL(new Writer(), ['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256']),
      BackendCode.Authentication,
    ),
  );
  assert.deepEqual(sasl, { type: 'SASL', mechanisms: ['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256'] });
  const cont = decodeAuthentication(
    one(writeAuthenticationSASLContinue(new Writer(), 'r=x,s=y,i=1'), BackendCode.Authentication),
  );
  assert.equal(cont.type === 'SASLContinue' && cont.data.toString(), 'r=x,s=y,i=1');
  const fin = decodeAuthentication(
    one(
      writeAuthenticationSASLFinal(new Writer(), Buffer.from('v=abc')),
      BackendCode.Authentication,
    ),
  );
  assert.equal(fin.type === 'SASLFinal' && fin.data.toString(), 'v=abc');
  const gss = Buffer.from([0, 0, 0, 7]);
  assert.deepEqual(decodeAuthentication(gss), {
    type: 'Unsupported',
    code: 7,
    data: Buffer.alloc(0),
  });
});

test('session status: ParameterStatus, BackendKeyData, ReadyForQuery', () => {
  assert.deepEqual(
    decodeParameterStatus(
      one(writeParameterStatus(new Writer(), 'TimeZone', 'UTC'), BackendCode.ParameterStatus),
    ),
    {
      name: 'TimeZone',
      value: 'UTC',
    },
  );
  assert.deepEqual(
    decodeBackendKeyData(
      one(writeBackendKeyData(new Writer(), 77, -123456), BackendCode.BackendKeyData),
    ),
    {
      pid: 77,
      secret: -123456,
    },
  );
  for (const s of ['I', 'T', 'E'] as const) {
    assert.equal(
      decodeReadyForQuery(one(writeReadyForQuery(new Writer(), s), BackendCode.ReadyForQuery)),
      s,
    );
  }
  assert.equal(writeReadyForQuery(new Writer(), 'I').flush().toString('hex'), '5a0000000549');
  assert.throws(() => decodeReadyForQuery(Buffer.from('X')), ProtocolError);
  assert.throws(() => decodeReadyForQuery(Buffer.alloc(0)), ProtocolError);
  assert.throws(() => decodeReadyForQuery(Buffer.from('TT')), ProtocolError);
  // The form without a body view (FrameReader.nextCode): the frame's size and its status byte.
  assert.equal(readyForQueryStatus(6, 0x45), 'E');
  assert.throws(() => readyForQueryStatus(7, 0x49), ProtocolError);
  assert.throws(() => readyForQueryStatus(6, 0x58), ProtocolError);
});

test('RowDescription, DataRow (views), CommandComplete with row counts', () => {
  const fields = [
    {
      name: 'id',
      tableOid: 16384,
      columnAttr: 1,
      typeOid: 20,
      typeSize: 8,
      typeModifier: -1,
      format: 0,
    },
    {
      name: 'naïve',
      tableOid: 0,
      columnAttr: 0,
      typeOid: 0xfffffffe,
      typeSize: -1,
      typeModifier: 36,
      format: 1,
    },
  ];
  assert.deepEqual(
    decodeRowDescription(
      one(writeRowDescription(new Writer(), fields), BackendCode.RowDescription),
    ),
    fields,
  );
  const defaults = decodeRowDescription(
    one(
      writeRowDescription(new Writer(), [{ name: 'x', typeOid: 25 }]),
      BackendCode.RowDescription,
    ),
  );
  assert.deepEqual(defaults[0], {
    name: 'x',
    tableOid: 0,
    columnAttr: 0,
    typeOid: 25,
    typeSize: -1,
    typeModifier: -1,
    format: 0,
  });

  const row = one(
    writeDataRow(new Writer(), ['1', null, '', Buffer.from([0xff])]),
    BackendCode.DataRow,
  );
  const cols = decodeDataRow(row);
  assert.deepEqual(cols, [Buffer.from('1'), null, Buffer.alloc(0), Buffer.from([0xff])]);
  assert.equal(cols[0]!.buffer, row.buffer);
  assert.deepEqual(decodeDataRow(Buffer.from([0, 0])), []);
  assert.throws(() => decodeDataRow(Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xfe])), ProtocolError);

  assert.equal(
    decodeCommandComplete(
      one(writeCommandComplete(new Writer(), 'INSERT 0 5'), BackendCode.CommandComplete),
    ),
    'INSERT 0 5',
  );
  assert.equal(commandRowCount('INSERT 0 5'), 5);
  assert.equal(commandRowCount('SELECT 3'), 3);
  assert.equal(commandRowCount('UPDATE 0'), 0);
  assert.equal(commandRowCount('DELETE 12'), 12);
  assert.equal(commandRowCount('COPY 100'), 100);
  assert.equal(commandRowCount('MERGE 2'), 2);
  assert.equal(commandRowCount('BEGIN'), undefined);
  assert.equal(commandRowCount('CREATE TABLE'), undefined);
  assert.equal(commandRowCount('SELECT x'), undefined);
});

test('ErrorResponse and NoticeResponse fields by name', () => {
  const fields = {
    severity: 'ERREUR',
    severityNonLocalized: 'ERROR',
    code: '22012',
    message: 'division by zero',
    detail: 'd',
    hint: 'h',
    position: '8',
    where: 'w',
    schema: 'public',
    table: 't',
    column: 'c',
    dataType: 'int4',
    constraint: 'tessera_owns',
    file: 'int.c',
    line: '841',
    routine: 'int4div',
    internalPosition: '2',
    internalQuery: 'q',
  };
  const body = one(writeErrorResponse(new Writer(), fields), BackendCode.ErrorResponse);
  assert.deepEqual(decodeErrorResponse(body), fields);
  // S before V before C before M, as Postgres orders them.
  assert.equal(body.subarray(0, 8).toString('latin1'), 'SERREUR\0');
  assert.equal(body[8], 0x56);
  const notice = decodeNoticeResponse(
    one(
      writeNoticeResponse(new Writer(), { severity: 'NOTICE', code: '00000', message: 'hi' }),
      BackendCode.NoticeResponse,
    ),
  );
  assert.deepEqual(notice, {
    severity: 'NOTICE',
    severityNonLocalized: 'NOTICE',
    code: '00000',
    message: 'hi',
  });
  // Unknown field letters are skipped.
  assert.deepEqual(decodeErrorResponse(Buffer.from('SERROR\0Zzz\0C0A000\0Mno\0\0')), {
    severity: 'ERROR',
    code: '0A000',
    message: 'no',
  });
  assert.throws(() => decodeErrorResponse(Buffer.from('SERROR\0')), ProtocolError);
});

test('extended-protocol acknowledgements are the fixed 5-byte frames', () => {
  const w = new Writer();
  writeParseComplete(w);
  writeBindComplete(w);
  writeCloseComplete(w);
  writeNoData(w);
  writeEmptyQueryResponse(w);
  writePortalSuspended(w);
  assert.deepEqual(
    frames(w).map((f) => String.fromCharCode(f.code) + f.body.length),
    ['10', '20', '30', 'n0', 'I0', 's0'],
  );
});

test('ParameterDescription, CopyIn/OutResponse, NotificationResponse, NegotiateProtocolVersion', () => {
  assert.deepEqual(
    decodeParameterDescription(
      one(
        writeParameterDescription(new Writer(), [23, 25, 0xffffffff]),
        BackendCode.ParameterDescription,
      ),
    ),
    [23, 25, 0xffffffff],
  );
  assert.deepEqual(
    decodeCopyResponse(
      one(writeCopyInResponse(new Writer(), 0, [0, 0]), BackendCode.CopyInResponse),
    ),
    {
      format: 0,
      columnFormats: [0, 0],
    },
  );
  assert.deepEqual(
    decodeCopyResponse(
      one(writeCopyOutResponse(new Writer(), 1, [1]), BackendCode.CopyOutResponse),
    ),
    {
      format: 1,
      columnFormats: [1],
    },
  );
  assert.deepEqual(
    decodeNotificationResponse(
      one(
        writeNotificationResponse(new Writer(), 9, 'chan', 'pay'),
        BackendCode.NotificationResponse,
      ),
    ),
    {
      pid: 9,
      channel: 'chan',
      payload: 'pay',
    },
  );
  assert.deepEqual(
    decodeNegotiateProtocolVersion(
      one(
        writeNegotiateProtocolVersion(new Writer(), 196608, ['_pq_.x']),
        BackendCode.NegotiateProtocolVersion,
      ),
    ),
    { version: 196608, unrecognized: ['_pq_.x'] },
  );
});
