// Client messages: encode with our writers, frame with FrameReader, decode, compare; plus the
// exact bytes of a few messages as the protocol docs lay them out.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writer } from './writer.js';
import { FrameReader, type Frame } from './frame-reader.js';
import { FrontendCode } from './codes.js';
import { ProtocolError } from './errors.js';
import { parseStartup } from './startup.js';
import {
  writeBind,
  writeCancelRequest,
  writeClose,
  writeCopyData,
  writeCopyDone,
  writeCopyFail,
  writeDescribe,
  writeExecute,
  writeFlush,
  writeParse,
  writePasswordMessage,
  writeQuery,
  writeSASLInitialResponse,
  writeSASLResponse,
  writeSSLRequest,
  writeStartupMessage,
  writeSync,
  writeTerminate,
} from './frontend-encode.js';
import {
  bindParam,
  bindPortalName,
  bindStatementName,
  BindStatementNames,
  decodeBind,
  decodeClose,
  decodeCopyFail,
  decodeDescribe,
  decodeExecute,
  decodeParse,
  decodePassword,
  decodeQuery,
  decodeSASLInitialResponse,
} from './frontend-decode.js';

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

test('Query bytes and round trip', () => {
  const w = new Writer();
  writeQuery(w, 'select 1');
  assert.equal(w.flush().toString('hex'), '510000000d73656c656374203100');
  assert.equal(
    decodeQuery(one(writeQuery(new Writer(), 'select ünïcode'), FrontendCode.Query)),
    'select ünïcode',
  );
  assert.throws(() => decodeQuery(Buffer.from('no terminator')), ProtocolError);
  assert.throws(() => decodeQuery(Buffer.from('a\0b\0')), ProtocolError);
});

test('StartupMessage, SSLRequest, GSSENC and CancelRequest', () => {
  const r = new FrameReader();
  const w = new Writer();
  writeStartupMessage(
    w,
    new Map([
      ['user', 'bob'],
      ['database', 'db'],
      ['application_name', 'x'],
    ]),
  );
  writeSSLRequest(w);
  writeCancelRequest(w, 1234, -99);
  w.begin().int32(80877104).end();
  r.push(w.flush());
  const s = parseStartup(r.readStartup()!);
  assert.deepEqual(s, {
    kind: 'startup',
    version: 196608,
    major: 3,
    minor: 0,
    params: new Map([
      ['user', 'bob'],
      ['database', 'db'],
      ['application_name', 'x'],
    ]),
  });
  assert.deepEqual(parseStartup(r.readStartup()!), { kind: 'ssl' });
  assert.deepEqual(parseStartup(r.readStartup()!), { kind: 'cancel', pid: 1234, secret: -99 });
  assert.deepEqual(parseStartup(r.readStartup()!), { kind: 'gssenc' });
});

test('parseStartup: minor versions accepted, other majors refused with 0A000, bad layouts with 08P01', () => {
  const v = (code: number, rest: number[] = [0]) => {
    const b = Buffer.alloc(4 + rest.length);
    b.writeInt32BE(code, 0);
    Buffer.from(rest).copy(b, 4);
    return b;
  };
  const p = parseStartup(v((3 << 16) | 2));
  assert.equal(p.kind === 'startup' && p.minor, 2);
  assert.throws(
    () => parseStartup(v(2 << 16)),
    (e: unknown) => e instanceof ProtocolError && e.sqlstate === '0A000',
  );
  assert.throws(
    () => parseStartup(v(4 << 16)),
    (e: unknown) => e instanceof ProtocolError && e.sqlstate === '0A000',
  );
  // name without value, missing final terminator, trailing bytes, SSLRequest with extra bytes
  for (const body of [
    v(196608, [0x61, 0]),
    v(196608, [0x61, 0, 0x62, 0]),
    v(196608, [0, 1]),
    v(80877103, [1]),
  ]) {
    assert.throws(
      () => parseStartup(body),
      (e: unknown) => e instanceof ProtocolError && e.sqlstate === '08P01',
    );
  }
});

test('Parse round trip with OIDs above 2^31', () => {
  const body = one(
    writeParse(new Writer(), 's1', 'select $1, $2', [23, 0xfffffff0]),
    FrontendCode.Parse,
  );
  assert.deepEqual(decodeParse(body), {
    name: 's1',
    sql: 'select $1, $2',
    paramTypes: [23, 0xfffffff0],
  });
  assert.deepEqual(decodeParse(one(writeParse(new Writer(), '', 'select 1'), FrontendCode.Parse)), {
    name: '',
    sql: 'select 1',
    paramTypes: [],
  });
});

test('Bind round trip; bindParam fetches one parameter and its format without decoding the rest', () => {
  const params = [Buffer.from('42'), null, Buffer.from([0, 0, 0, 7]), Buffer.alloc(0)];
  const body = one(
    writeBind(new Writer(), {
      portal: 'p',
      statement: 's',
      paramFormats: [0, 0, 1, 0],
      params,
      resultFormats: [1],
    }),
    FrontendCode.Bind,
  );
  const d = decodeBind(body);
  assert.equal(d.portal, 'p');
  assert.equal(d.statement, 's');
  assert.deepEqual(d.paramFormats, [0, 0, 1, 0]);
  assert.deepEqual(d.params, params);
  assert.deepEqual(d.resultFormats, [1]);
  // Views into the body, not copies.
  assert.equal(d.params[0]!.buffer, body.buffer);
  assert.equal(d.params[0]!.byteOffset, body.byteOffset + body.indexOf('42'));
  assert.deepEqual(bindParam(body, 0), { value: Buffer.from('42'), format: 0 });
  assert.deepEqual(bindParam(body, 1), { value: null, format: 0 });
  assert.deepEqual(bindParam(body, 2), { value: Buffer.from([0, 0, 0, 7]), format: 1 });
  assert.deepEqual(bindParam(body, 3), { value: Buffer.alloc(0), format: 0 });
  assert.equal(bindParam(body, 4), undefined);
  assert.equal(bindParam(body, -1), undefined);
  assert.equal(bindStatementName(body), 's');
  assert.equal(bindPortalName(body), d.portal);

  // One format code applies to every parameter; none means text.
  const all = one(
    writeBind(new Writer(), { paramFormats: [1], params: ['a', 'b'] }),
    FrontendCode.Bind,
  );
  assert.equal(bindParam(all, 1)?.format, 1);
  const none = one(writeBind(new Writer(), { params: ['a', 'b'] }), FrontendCode.Bind);
  assert.deepEqual(bindParam(none, 1), { value: Buffer.from('b'), format: 0 });
  assert.deepEqual(decodeBind(none).paramFormats, []);

  // Format count neither 0, 1 nor the parameter count is a protocol violation.
  const bad = one(
    writeBind(new Writer(), { paramFormats: [0, 1], params: ['a', 'b', 'c'] }),
    FrontendCode.Bind,
  );
  assert.throws(() => decodeBind(bad), ProtocolError);
  assert.throws(() => bindParam(bad, 0), ProtocolError);
});

test('Describe, Close, Execute', () => {
  assert.deepEqual(
    decodeDescribe(one(writeDescribe(new Writer(), 'S', 'st'), FrontendCode.Describe)),
    { target: 'S', name: 'st' },
  );
  assert.deepEqual(
    decodeDescribe(one(writeDescribe(new Writer(), 'P', ''), FrontendCode.Describe)),
    { target: 'P', name: '' },
  );
  assert.deepEqual(decodeClose(one(writeClose(new Writer(), 'P', 'c1'), FrontendCode.Close)), {
    target: 'P',
    name: 'c1',
  });
  assert.deepEqual(decodeExecute(one(writeExecute(new Writer(), 'c1', 50), FrontendCode.Execute)), {
    portal: 'c1',
    maxRows: 50,
  });
  assert.deepEqual(decodeExecute(one(writeExecute(new Writer()), FrontendCode.Execute)), {
    portal: '',
    maxRows: 0,
  });
  assert.throws(() => decodeDescribe(Buffer.from('X\0')), ProtocolError);
});

test('fixed frames: Sync, Flush, Terminate, CopyDone', () => {
  const w = new Writer();
  writeSync(w);
  writeFlush(w);
  writeTerminate(w);
  writeCopyDone(w);
  assert.deepEqual(
    frames(w).map((f) => [f.code, f.body.length]),
    [
      [0x53, 0],
      [0x48, 0],
      [0x58, 0],
      [0x63, 0],
    ],
  );
});

test('password and SASL messages', () => {
  assert.equal(
    decodePassword(one(writePasswordMessage(new Writer(), 'secret'), FrontendCode.PasswordMessage)),
    'secret',
  );
  const init = decodeSASLInitialResponse(
    one(
      writeSASLInitialResponse(new Writer(), 'SCRAM-SHA-256', 'n,,n=,r=abc'),
      FrontendCode.PasswordMessage,
    ),
  );
  assert.equal(init.mechanism, 'SCRAM-SHA-256');
  assert.equal(init.data?.toString(), 'n,,n=,r=abc');
  const none = decodeSASLInitialResponse(
    one(writeSASLInitialResponse(new Writer(), 'X', null), FrontendCode.PasswordMessage),
  );
  assert.equal(none.data, null);
  assert.equal(
    one(writeSASLResponse(new Writer(), 'c=biws'), FrontendCode.PasswordMessage).toString(),
    'c=biws',
  );
});

test('COPY from the client side', () => {
  const w = new Writer();
  writeCopyData(w, Buffer.from('1\tone\n'));
  writeCopyFail(w, 'nope');
  const [data, fail] = frames(w);
  assert.equal(data?.code, FrontendCode.CopyData);
  assert.equal(data?.body.toString(), '1\tone\n');
  assert.equal(decodeCopyFail(fail!.body), 'nope');
});

test('names decode the same whether short, long, or not ASCII', () => {
  for (const name of [
    '',
    's',
    'P0_12',
    'x'.repeat(31),
    'y'.repeat(33),
    'z'.repeat(200),
    'naïve_名前',
  ]) {
    const body = one(
      writeBind(new Writer(), { portal: name, statement: name, params: ['1'] }),
      FrontendCode.Bind,
    );
    assert.equal(bindStatementName(body), name);
    assert.equal(bindPortalName(body), name);
    const d = decodeBind(body);
    assert.equal(d.portal, name);
    assert.equal(d.statement, name);
    assert.equal(
      decodeDescribe(one(writeDescribe(new Writer(), 'S', name), FrontendCode.Describe)).name,
      name,
    );
  }
  // A name whose NUL is missing (within or beyond the short scan) is a protocol error.
  for (const length of [3, 100]) {
    const body = Buffer.from('n'.repeat(length));
    assert.throws(() => bindStatementName(body), ProtocolError);
  }
});

test('BindStatementNames: the same name as bindStatementName, the same string for a repeated name', () => {
  const names = new BindStatementNames();
  const bind = (portal: string, statement: string): Buffer =>
    one(writeBind(new Writer(), { portal, statement, params: ['1'] }), FrontendCode.Bind);
  const seen: string[] = [];
  for (const [portal, statement] of [
    ['', ''],
    ['', 'P_1'],
    ['p', 'P_1'],
    ['', 'P_2'],
    ['', 'P_'],
    ['', 'P_1x'],
    ['', 'naïve_名前'],
    ['', 'naïve_名前'],
    ['', ''],
  ] as const) {
    const body = bind(portal, statement);
    const name = names.of(body);
    assert.equal(name, bindStatementName(body));
    seen.push(name);
  }
  assert.deepEqual(seen, ['', 'P_1', 'P_1', 'P_2', 'P_', 'P_1x', 'naïve_名前', 'naïve_名前', '']);
  // A Bind without its statement name's NUL is the same protocol error.
  assert.throws(() => names.of(Buffer.from('\0P_1')), ProtocolError);
});

test('BindStatementNames: names in turn, more than it keeps, and back again', () => {
  const names = new BindStatementNames();
  const bind = (statement: string): Buffer =>
    one(writeBind(new Writer(), { portal: '', statement, params: [] }), FrontendCode.Bind);
  // A transaction's statements in order, a loop longer than what is kept, then mixed up.
  const order = [
    ...[1, 2, 3, 1, 2, 3, 3, 2, 1],
    ...Array.from({ length: 40 }, (_, i) => i % 23),
    ...[22, 0, 5, 5, 17, 16, 1, 22],
  ].map((i) => `P_${i}`);
  for (const statement of order) {
    const body = bind(statement);
    assert.equal(names.of(body), statement);
    assert.equal(names.of(body), statement);
  }
  // Same length, one byte apart.
  assert.equal(names.of(bind('P_10')), 'P_10');
  assert.equal(names.of(bind('P_11')), 'P_11');
  assert.equal(names.of(bind('P_10')), 'P_10');
});
