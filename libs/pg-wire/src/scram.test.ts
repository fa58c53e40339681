// SCRAM-SHA-256 without a server: the RFC 7677 example exchange, both roles against each other,
// wrong passwords and tampering refused, verifier strings, SASLprep.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  createScramVerifier,
  deriveScramVerifier,
  formatScramVerifier,
  mockScramVerifier,
  parseScramVerifier,
  ScramError,
} from './scram-common.js';
import { ScramServer } from './scram-server.js';
import { ScramClient } from './scram-client.js';
import { saslprep } from './saslprep.js';

test('server role reproduces the RFC 7677 example exchange', () => {
  const verifier = deriveScramVerifier(
    'pencil',
    Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
    4096,
  );
  const server = new ScramServer(verifier, '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
  assert.equal(
    server.receiveClientFirst('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'),
    'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  );
  assert.equal(
    server.receiveClientFinal(
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    ),
    'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
  );
});

function exchange(serverPassword: string, clientPassword: string): void {
  const verifier = parseScramVerifier(createScramVerifier(serverPassword, { iterations: 64 }));
  assert.ok(verifier);
  const server = new ScramServer(verifier!);
  const client = new ScramClient(clientPassword);
  const serverFirst = server.receiveClientFirst(Buffer.from(client.clientFirstMessage()));
  const clientFinal = client.receiveServerFirst(Buffer.from(serverFirst));
  const serverFinal = server.receiveClientFinal(clientFinal);
  client.receiveServerFinal(serverFinal);
}

test('client and server roles authenticate each other', () => {
  exchange('correct horse', 'correct horse');
  exchange('pässwörd ☃', 'pässwörd ☃');
});

test('a wrong password fails with 28P01 on the server side', () => {
  assert.throws(
    () => exchange('right', 'wrong'),
    (e: unknown) => e instanceof ScramError && e.sqlstate === '28P01',
  );
});

test('the client refuses a server that does not know the password', () => {
  const client = new ScramClient('secret');
  // An impostor with a verifier for another password but the same salt and nonce flow.
  const impostor = new ScramServer(
    parseScramVerifier(createScramVerifier('other', { iterations: 16 }))!,
  );
  const first = impostor.receiveClientFirst(client.clientFirstMessage());
  client.receiveServerFirst(first);
  assert.throws(
    () => client.receiveServerFinal('v=' + Buffer.alloc(32).toString('base64')),
    ScramError,
  );
  assert.throws(() => new ScramClient('x').receiveServerFinal('v=abc'), ScramError);
  const c2 = new ScramClient('x');
  c2.receiveServerFirst(
    new ScramServer(mockScramVerifier('u', Buffer.from('k'))).receiveClientFirst(
      c2.clientFirstMessage(),
    ),
  );
  assert.throws(
    () => c2.receiveServerFinal('e=invalid-proof'),
    (e: unknown) => e instanceof ScramError && e.sqlstate === '28P01',
  );
});

test('channel binding, authzid, extensions and tampering are refused with ScramError', () => {
  const v = parseScramVerifier(createScramVerifier('pw', { iterations: 16 }))!;
  const first = (msg: string) => () => new ScramServer(v).receiveClientFirst(msg);
  assert.throws(first('p=tls-server-end-point,,n=,r=abc'), ScramError);
  assert.throws(first('n,a=admin,n=,r=abc'), ScramError);
  assert.throws(first('n,,m=ext,n=,r=abc'), ScramError);
  assert.throws(first('x,,n=,r=abc'), ScramError);
  assert.throws(first('n,,r=abc'), ScramError);
  assert.throws(first(''), ScramError);
  // 'y': the client could bind but believes we cannot; fine when we do not offer -PLUS.
  assert.doesNotThrow(first('y,,n=,r=abc'));

  const run = (mutate: (clientFinal: string) => string) => () => {
    const server = new ScramServer(v);
    const client = new ScramClient('pw');
    const clientFinal = client.receiveServerFirst(
      server.receiveClientFirst(client.clientFirstMessage()),
    );
    server.receiveClientFinal(mutate(clientFinal));
  };
  assert.doesNotThrow(run((m) => m));
  assert.throws(
    run((m) => m.replace('c=biws', 'c=eSws')),
    ScramError,
  ); // binding flag changed
  assert.throws(
    run((m) => m.replace(',r=', ',r=X')),
    ScramError,
  ); // nonce changed
  assert.throws(
    run((m) => m.slice(0, m.indexOf(',p='))),
    ScramError,
  ); // proof missing
  assert.throws(
    run((m) => m.slice(0, -4) + 'AAA='),
    ScramError,
  ); // proof changed
  assert.throws(
    run((m) => m + 'garbage'),
    ScramError,
  );
  // Messages out of order.
  assert.throws(() => new ScramServer(v).receiveClientFinal('c=biws,r=a,p=b'), ScramError);
});

test('verifier strings: format, parse, and rejection of non-SCRAM values', () => {
  const salt = Buffer.from('0123456789abcdef');
  const text = createScramVerifier('pw', { iterations: 4096, salt });
  assert.match(text, /^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
  const v = parseScramVerifier(text)!;
  assert.deepEqual(v.salt, salt);
  assert.equal(v.iterations, 4096);
  assert.equal(formatScramVerifier(v), text);
  assert.equal(createScramVerifier('pw', { iterations: 4096, salt }), text);
  for (const bad of [
    'md5abc',
    '',
    'SCRAM-SHA-256$0:c2FsdA==$a:b',
    'SCRAM-SHA-256$4096:c2FsdA==$c2FsdA==:c2FsdA==',
    'SCRAM-SHA-256$x:s$a:b',
  ]) {
    assert.equal(parseScramVerifier(bad), undefined, bad);
  }
});

test('SASLprep maps, normalizes, and falls back to the raw password like Postgres', () => {
  assert.equal(saslprep('plain ascii'), 'plain ascii');
  assert.equal(saslprep('I\u00ADX'), 'IX'); // soft hyphen mapped to nothing
  assert.equal(saslprep('a\u00A0b'), 'a b'); // non-ASCII space mapped to space
  assert.equal(saslprep('\u2168'), 'IX'); // NFKC
  assert.equal(saslprep('\u00AA'), 'a');
  assert.equal(saslprep('bell\u0007'), 'bell\u0007'); // prohibited: used raw
  assert.equal(saslprep('\u0627\u0031'), '\u0627\u0031'); // RandAL not at both ends: raw
  assert.equal(saslprep('\u0627\u0031\u0628'), '\u0627\u0031\u0628');
});
