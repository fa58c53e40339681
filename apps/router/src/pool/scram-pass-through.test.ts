// SCRAM pass-through without sockets: the ClientKey recovered from a client's exchange with the
// router answers a node's challenge for the same verifier, is refused by a node with another
// verifier, and a node that does not hold the verifier cannot fool the router.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  ScramClient,
  ScramError,
  ScramServer,
  createScramVerifier,
  parseScramVerifier,
  type ScramVerifier,
} from '@tessera/pg-wire';
import { RouterError } from '../errors.js';
import {
  PassThroughScramClient,
  recoverClientKey,
  type ScramPassThrough,
} from './scram-pass-through.js';

const verifier = parseScramVerifier(createScramVerifier('s3cret', { iterations: 64 }))!;

/** A client logs in to the "router" with its password; returns what the router learns. */
function clientLogin(v: ScramVerifier, password: string): ScramPassThrough {
  const router = new ScramServer(v);
  const client = new ScramClient(password);
  const clientFirst = Buffer.from(client.clientFirstMessage());
  const serverFirst = router.receiveClientFirst(clientFirst);
  const clientFinal = Buffer.from(client.receiveServerFirst(serverFirst));
  client.receiveServerFinal(router.receiveClientFinal(clientFinal));
  return { clientKey: recoverClientKey(v, clientFirst, serverFirst, clientFinal), verifier: v };
}

/** The router logs in to a "node" holding `nodeVerifier` with a pass-through credential. */
function nodeLogin(credential: ScramPassThrough, nodeVerifier: ScramVerifier): void {
  const node = new ScramServer(nodeVerifier);
  const router = new PassThroughScramClient(credential, 'node "data1"');
  const serverFirst = node.receiveClientFirst(router.clientFirstMessage());
  const clientFinal = router.receiveServerFirst(Buffer.from(serverFirst));
  router.receiveServerFinal(Buffer.from(node.receiveClientFinal(clientFinal)));
}

test('the recovered ClientKey hashes to the StoredKey', () => {
  const c = clientLogin(verifier, 's3cret');
  assert.deepEqual(createHash('sha256').update(c.clientKey).digest(), verifier.storedKey);
});

test('a node with the same verifier accepts the pass-through login', () => {
  nodeLogin(clientLogin(verifier, 's3cret'), verifier);
});

test('a node with another verifier (other salt) is refused with a sentence, before any proof', () => {
  const other = parseScramVerifier(createScramVerifier('s3cret', { iterations: 64 }))!;
  assert.throws(
    () => nodeLogin(clientLogin(verifier, 's3cret'), other),
    (e: unknown) => e instanceof RouterError && /another SCRAM verifier/.test(e.message),
  );
});

test('a node that does not hold the ServerKey cannot pass for one that does', () => {
  const credential = clientLogin(verifier, 's3cret');
  // Same salt and StoredKey, forged ServerKey: the node accepts the proof but signs wrongly.
  const forged: ScramVerifier = { ...verifier, serverKey: Buffer.alloc(32, 7) };
  assert.throws(
    () => nodeLogin(credential, forged),
    (e: unknown) => e instanceof RouterError && /could not prove/.test(e.message),
  );
});

test('a node refusing the proof reports 28P01', () => {
  const credential = clientLogin(verifier, 's3cret');
  const wrongKey: ScramPassThrough = { ...credential, clientKey: Buffer.alloc(32, 1) };
  assert.throws(
    () => nodeLogin(wrongKey, verifier),
    (e: unknown) => e instanceof ScramError && e.sqlstate === '28P01',
  );
});
