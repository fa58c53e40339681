// Hostile input, deterministically: a sample conversation split at every byte offset (and every
// pair of offsets) frames identically; truncated bodies, lying lengths and seeded random bytes
// only ever produce ProtocolError, never RangeError or a huge allocation.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writer } from './writer.js';
import { FrameReader } from './frame-reader.js';
import { ProtocolError } from './errors.js';
import { BackendCode, FrontendCode } from './codes.js';
import { parseStartup } from './startup.js';
import * as fe from './frontend-encode.js';
import * as be from './backend-encode.js';
import * as fd from './frontend-decode.js';
import * as bd from './backend-decode.js';
import {
  decodeErrorResponse,
  decodeNoticeResponse,
  writeErrorResponse,
  writeNoticeResponse,
} from './notice-fields.js';

/** mulberry32: small, seeded, good enough to spread test inputs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function clientConversation(): Buffer {
  const w = new Writer();
  fe.writeStartupMessage(w, { user: 'u', database: 'd' });
  fe.writeSASLInitialResponse(w, 'SCRAM-SHA-256', 'n,,n=,r=abc');
  fe.writeSASLResponse(w, 'c=biws,r=abcdef,p=xyz');
  fe.writeQuery(w, 'select 1');
  fe.writeParse(w, 's', 'select $1::int8', [20]);
  fe.writeBind(w, {
    statement: 's',
    paramFormats: [1],
    params: [Buffer.from([0, 0, 0, 0, 0, 0, 0, 42]), null],
    resultFormats: [0],
  });
  fe.writeDescribe(w, 'P', '');
  fe.writeExecute(w, '', 10);
  fe.writeClose(w, 'S', 's');
  fe.writeSync(w);
  fe.writeFlush(w);
  fe.writeCopyData(w, Buffer.from('1\t2\n'));
  fe.writeCopyDone(w);
  fe.writeCopyFail(w, 'x');
  fe.writePasswordMessage(w, 'pw');
  fe.writeTerminate(w);
  return w.flush();
}

function serverConversation(): Buffer {
  const w = new Writer();
  be.writeAuthenticationSASL(w, ['SCRAM-SHA-256']);
  be.writeAuthenticationSASLContinue(w, 'r=abc,s=c2FsdA==,i=4096');
  be.writeAuthenticationSASLFinal(w, 'v=sig');
  be.writeAuthenticationOk(w);
  be.writeParameterStatus(w, 'server_version', '15.0');
  be.writeBackendKeyData(w, 1, 2);
  be.writeReadyForQuery(w, 'I');
  be.writeRowDescription(w, [
    { name: 'a', typeOid: 23 },
    { name: 'b', typeOid: 25 },
  ]);
  be.writeDataRow(w, ['1', null]);
  be.writeDataRow(w, ['2', 'two']);
  be.writeCommandComplete(w, 'SELECT 2');
  writeErrorResponse(w, {
    severity: 'ERROR',
    code: '22012',
    message: 'division by zero',
    position: '10',
  });
  writeNoticeResponse(w, { severity: 'NOTICE', code: '00000', message: 'n' });
  be.writeParseComplete(w);
  be.writeBindComplete(w);
  be.writeParameterDescription(w, [20]);
  be.writeNoData(w);
  be.writeCopyOutResponse(w, 0, [0, 0]);
  fe.writeCopyData(w, Buffer.from('a\tb\n'));
  fe.writeCopyDone(w);
  be.writeNotificationResponse(w, 5, 'c', 'p');
  be.writeNegotiateProtocolVersion(w, 196608, ['_pq_.a']);
  be.writeEmptyQueryResponse(w);
  be.writeReadyForQuery(w, 'T');
  return w.flush();
}

/** Runs every decoder that applies to a frame of this code, from the given side. */
function decodeFrame(fromClient: boolean, code: number, body: Buffer): unknown {
  if (fromClient) {
    switch (code) {
      case FrontendCode.Query:
        return fd.decodeQuery(body);
      case FrontendCode.Parse:
        return fd.decodeParse(body);
      case FrontendCode.Bind:
        return [
          fd.decodeBind(body),
          fd.bindParam(body, 0),
          fd.bindParam(body, 1),
          fd.bindStatementName(body),
        ];
      case FrontendCode.Describe:
        return fd.decodeDescribe(body);
      case FrontendCode.Close:
        return fd.decodeClose(body);
      case FrontendCode.Execute:
        return fd.decodeExecute(body);
      case FrontendCode.PasswordMessage:
        // 'p' means PasswordMessage, SASLInitialResponse or SASLResponse depending on the
        // authentication state; the sample conversation's bodies tell them apart by shape.
        if (body[0] === 0x53) return fd.decodeSASLInitialResponse(body);
        return body.indexOf(0) >= 0 ? fd.decodePassword(body) : fd.decodeSASLResponse(body);
      case FrontendCode.CopyFail:
        return fd.decodeCopyFail(body);
      default:
        return body;
    }
  }
  switch (code) {
    case BackendCode.Authentication:
      return bd.decodeAuthentication(body);
    case BackendCode.BackendKeyData:
      return bd.decodeBackendKeyData(body);
    case BackendCode.ParameterStatus:
      return bd.decodeParameterStatus(body);
    case BackendCode.ReadyForQuery:
      return bd.decodeReadyForQuery(body);
    case BackendCode.ErrorResponse:
      return decodeErrorResponse(body);
    case BackendCode.NoticeResponse:
      return decodeNoticeResponse(body);
    case BackendCode.NotificationResponse:
      return bd.decodeNotificationResponse(body);
    case BackendCode.RowDescription:
      return bd.decodeRowDescription(body);
    case BackendCode.DataRow:
      return bd.decodeDataRow(body);
    case BackendCode.CommandComplete:
      return bd.decodeCommandComplete(body);
    case BackendCode.ParameterDescription:
      return bd.decodeParameterDescription(body);
    case BackendCode.CopyInResponse:
    case BackendCode.CopyOutResponse:
    case BackendCode.CopyBothResponse:
      return bd.decodeCopyResponse(body);
    case BackendCode.NegotiateProtocolVersion:
      return bd.decodeNegotiateProtocolVersion(body);
    default:
      return body;
  }
}

/** Pulls everything complete; snapshots bodies as hex because views die at the next push. */
function drain(r: FrameReader, out: string[], state: { startup: boolean }): void {
  while (true) {
    if (state.startup) {
      const s = r.readStartup();
      if (!s) return;
      state.startup = false;
      out.push('startup:' + s.toString('hex'));
      continue;
    }
    const f = r.next();
    if (!f) return;
    out.push(`${f.code}:${f.body.toString('hex')}`);
  }
}

function frameAll(chunks: Buffer[], startup: boolean): string[] {
  const r = new FrameReader();
  const out: string[] = [];
  const state = { startup };
  for (const c of chunks) {
    r.push(c);
    drain(r, out, state);
  }
  assert.equal(r.buffered, 0);
  return out;
}

for (const [side, bytes, startup] of [
  ['client', clientConversation(), true],
  ['server', serverConversation(), false],
] as const) {
  test(`${side} conversation: every split point, and every pair of split points, frames identically`, () => {
    const reference = frameAll([bytes], startup);
    assert.ok(reference.length > 10);
    for (let i = 0; i <= bytes.length; i++) {
      assert.deepEqual(
        frameAll([bytes.subarray(0, i), bytes.subarray(i)], startup),
        reference,
        `split at ${i}`,
      );
    }
    for (let i = 1; i < bytes.length; i += 3) {
      for (let j = i; j <= bytes.length; j++) {
        const got = frameAll(
          [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)],
          startup,
        );
        if (got.length !== reference.length || got.some((g, k) => g !== reference[k]))
          assert.fail(`split at ${i},${j}`);
      }
    }
    const single: Buffer[] = [];
    for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
    assert.deepEqual(frameAll(single, startup), reference);
  });

  test(`${side} conversation: every frame decodes; every strict prefix of a body throws ProtocolError`, () => {
    const r = new FrameReader();
    r.push(bytes);
    if (startup) parseStartup(r.readStartup()!);
    let checked = 0;
    for (let f = r.next(); f; f = r.next()) {
      decodeFrame(side === 'client', f.code, f.body);
      // Bodies whose last field is "the rest of the message" have no invalid prefix.
      const open =
        f.code === 0x64 ||
        (side === 'client' &&
          f.code === FrontendCode.PasswordMessage &&
          f.body[0] !== 0x53 &&
          f.body.indexOf(0) < 0) ||
        (side === 'server' && f.code === BackendCode.Authentication && f.body.readInt32BE(0) >= 11);
      if (open) continue;
      for (let n = 0; n < f.body.length; n++) {
        // A fresh copy so a decoder cannot read past the prefix into the next frame.
        const prefix = Buffer.from(f.body.subarray(0, n));
        // 'p' is decided by the full body's shape, not the prefix's.
        const decode =
          side === 'client' && f.code === FrontendCode.PasswordMessage
            ? f.body[0] === 0x53
              ? fd.decodeSASLInitialResponse
              : fd.decodePassword
            : (b: Buffer) => decodeFrame(side === 'client', f.code, b);
        assert.throws(
          () => decode(prefix),
          (e: unknown) => e instanceof ProtocolError,
          `${String.fromCharCode(f.code)} prefix ${n}/${f.body.length}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 50);
  });
}

test('truncated startup packets throw ProtocolError', () => {
  const w = new Writer();
  fe.writeStartupMessage(w, { user: 'u', database: 'd' });
  const body = w.flush().subarray(4);
  for (let n = 0; n < body.length; n++) {
    assert.throws(
      () => parseStartup(Buffer.from(body.subarray(0, n))),
      ProtocolError,
      `prefix ${n}`,
    );
  }
});

test('lying inner lengths and counts throw ProtocolError without large allocations', () => {
  // DataRow claiming 65535 columns, a column of 2^31-1 bytes, a negative length.
  assert.throws(() => bd.decodeDataRow(Buffer.from([0xff, 0xff])), ProtocolError);
  assert.throws(
    () => bd.decodeDataRow(Buffer.from([0, 1, 0x7f, 0xff, 0xff, 0xff, 1])),
    ProtocolError,
  );
  assert.throws(() => bd.decodeDataRow(Buffer.from([0, 1, 0x80, 0, 0, 0])), ProtocolError);
  // Bind with a parameter of 2^31-1 bytes.
  const bind = Buffer.from([0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 0, 0]);
  assert.throws(() => fd.decodeBind(bind), ProtocolError);
  assert.throws(() => fd.bindParam(bind, 0), ProtocolError);
  // Parse claiming 65535 parameter types, RowDescription claiming 65535 fields.
  assert.throws(() => fd.decodeParse(Buffer.from([0, 0x61, 0, 0xff, 0xff])), ProtocolError);
  assert.throws(() => bd.decodeRowDescription(Buffer.from([0xff, 0xff, 0x61, 0])), ProtocolError);
  // NegotiateProtocolVersion claiming 2^31-1 options.
  assert.throws(
    () => bd.decodeNegotiateProtocolVersion(Buffer.from([0, 3, 0, 0, 0x7f, 0xff, 0xff, 0xff])),
    ProtocolError,
  );
});

function onlyProtocolErrors(fn: () => void, what: string): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ProtocolError)) assert.fail(`${what}: ${String(e)}`);
  }
}

test('seeded random bytes: framing and every decoder throw nothing but ProtocolError', () => {
  const rnd = prng(20240601);
  const codes = [...new Set([...Object.values(FrontendCode), ...Object.values(BackendCode)])];
  let frames = 0;
  for (let iter = 0; iter < 3000; iter++) {
    // Half the time raw noise, half the time well-framed messages with noisy bodies (so the
    // decoders, not only the framer, see the garbage).
    const parts: Buffer[] = [];
    if (iter % 2 === 0) {
      const b = Buffer.alloc(Math.floor(rnd() * 300));
      for (let i = 0; i < b.length; i++) b[i] = rnd() < 0.3 ? 0 : Math.floor(rnd() * 256);
      parts.push(b);
    } else {
      for (let m = 0; m < 5; m++) {
        const body = Buffer.alloc(Math.floor(rnd() * 40));
        for (let i = 0; i < body.length; i++)
          body[i] = rnd() < 0.4 ? 0 : rnd() < 0.5 ? Math.floor(rnd() * 4) : Math.floor(rnd() * 256);
        const w = new Writer();
        w.begin(codes[Math.floor(rnd() * codes.length)])
          .bytes(body)
          .end();
        parts.push(w.flush());
      }
    }
    const bytes = Buffer.concat(parts);
    for (const fromClient of [true, false]) {
      const r = new FrameReader({ maxFrameLength: 1 << 20 });
      onlyProtocolErrors(() => {
        for (let at = 0; at < bytes.length;) {
          const step = 1 + Math.floor(rnd() * 50);
          r.push(bytes.subarray(at, at + step));
          at += step;
          for (let f = r.next(); f; f = r.next()) {
            frames++;
            onlyProtocolErrors(() => decodeFrame(fromClient, f.code, f.body), `decode ${f.code}`);
          }
        }
      }, 'framing');
      onlyProtocolErrors(() => {
        const s = new FrameReader();
        s.push(bytes);
        const body = s.readStartup();
        if (body) parseStartup(body);
      }, 'startup');
      onlyProtocolErrors(() => parseStartup(bytes), 'startup body');
    }
  }
  assert.ok(frames > 5000, `only ${frames} frames decoded`);
});

test('seeded mutations of valid conversations throw nothing but ProtocolError', () => {
  const rnd = prng(7);
  for (const [fromClient, base] of [
    [true, clientConversation()],
    [false, serverConversation()],
  ] as const) {
    for (let iter = 0; iter < 2000; iter++) {
      const bytes = Buffer.from(base);
      const flips = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < flips; k++)
        bytes[Math.floor(rnd() * bytes.length)] = rnd() < 0.5 ? 0 : Math.floor(rnd() * 256);
      const r = new FrameReader({ maxFrameLength: 1 << 20 });
      r.push(bytes);
      onlyProtocolErrors(() => {
        if (fromClient) {
          const s = r.readStartup();
          if (s) onlyProtocolErrors(() => parseStartup(s), 'startup');
        }
        for (let f = r.next(); f; f = r.next())
          onlyProtocolErrors(() => decodeFrame(fromClient, f.code, f.body), 'decode');
      }, 'framing');
    }
  }
});
