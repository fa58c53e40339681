// SCRAM-SHA-256 pass-through: the router logs in to a node as a client's own role without ever
// knowing the password. A client that authenticated to the router revealed its ClientKey
// (ClientProof XOR ClientSignature); with the same verifier on every node (same salt, iterations,
// StoredKey and ServerKey) that key answers any node's challenge, and the ServerKey from the
// home node's verifier checks that the node really holds the verifier.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ScramError, type ScramVerifier } from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';

/**
 * What one authenticated client session lends its backends' logins. Lives only in that
 * session's memory (and the pool waiter it is handed to); never logged, never cached.
 */
export interface ScramPassThrough {
  readonly clientKey: Buffer;
  /** The home node's verifier the client authenticated against. */
  readonly verifier: ScramVerifier;
}

/** The three steps of a client-side SCRAM exchange, whatever the client knows. */
export interface ScramClientRole {
  clientFirstMessage(): string;
  receiveServerFirst(message: Buffer): string;
  receiveServerFinal(message: Buffer): void;
}

const GS2_HEADER = 'n,,';
const CHANNEL_BINDING = Buffer.from(GS2_HEADER).toString('base64');

/** ClientKey from a verified exchange: ClientProof XOR HMAC(StoredKey, AuthMessage). */
export function recoverClientKey(
  verifier: ScramVerifier,
  clientFirst: Buffer,
  serverFirst: string,
  clientFinal: Buffer,
): Buffer {
  const first = clientFirst.toString('utf8');
  const final = clientFinal.toString('utf8');
  // The GS2 header is the first three characters (ScramServer accepted only 'n,,' / 'y,,').
  const clientFirstBare = first.slice(3);
  const proofAt = final.lastIndexOf(',p=');
  const authMessage = `${clientFirstBare},${serverFirst},${final.slice(0, proofAt)}`;
  const proof = Buffer.from(final.slice(proofAt + 3), 'base64');
  return xor(proof, hmac(verifier.storedKey, authMessage));
}

export class PassThroughScramClient implements ScramClientRole {
  private readonly clientNonce = randomBytes(18).toString('base64');
  private readonly clientFirstBare = `n=,r=${this.clientNonce}`;
  private expectedServerSignature: Buffer | undefined;

  constructor(
    private readonly credential: ScramPassThrough,
    /** For the error a node with another verifier gets: which node, which role. */
    private readonly describe: string,
  ) {}

  clientFirstMessage(): string {
    // The user name is left empty: Postgres takes it from the startup packet.
    return GS2_HEADER + this.clientFirstBare;
  }

  receiveServerFirst(message: Buffer): string {
    if (this.expectedServerSignature) throw new ScramError('unexpected SCRAM server-first-message');
    const serverFirst = message.toString('utf8');
    const attrs = new Map<string, string>();
    for (const part of serverFirst.split(',')) {
      if (part[1] !== '=') throw new ScramError('malformed SCRAM server-first-message');
      if (!attrs.has(part[0]!)) attrs.set(part[0]!, part.slice(2));
    }
    const nonce = attrs.get('r');
    const salt = attrs.get('s');
    const iterations = attrs.get('i');
    if (
      nonce === undefined ||
      !nonce.startsWith(this.clientNonce) ||
      nonce.length === this.clientNonce.length ||
      /[^\x21-\x2b\x2d-\x7e]/.test(nonce)
    ) {
      throw new ScramError('SCRAM server nonce does not extend the client nonce');
    }
    const v = this.credential.verifier;
    // A node whose verifier differs cannot accept the ClientKey; say why rather than let the
    // node answer "password authentication failed" for a client that did give the right one.
    if (salt !== v.salt.toString('base64') || iterations !== String(v.iterations)) {
      throw new RouterError(
        SQLSTATE.invalidAuthorization,
        `${this.describe} has another SCRAM verifier for this role than the home node; copy pg_authid.rolpassword from home to every node`,
      );
    }
    const withoutProof = `c=${CHANNEL_BINDING},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const proof = xor(this.credential.clientKey, hmac(v.storedKey, authMessage));
    this.expectedServerSignature = hmac(v.serverKey, authMessage);
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  receiveServerFinal(message: Buffer): void {
    const expected = this.expectedServerSignature;
    if (!expected) throw new ScramError('unexpected SCRAM server-final-message');
    const text = message.toString('utf8');
    if (text.startsWith('e='))
      throw new ScramError(`SCRAM authentication failed: ${text.slice(2)}`, '28P01');
    const signature = text.startsWith('v=') ? Buffer.from(text.slice(2), 'base64') : undefined;
    if (signature?.length !== expected.length || !timingSafeEqual(signature, expected))
      throw new RouterError(
        SQLSTATE.invalidAuthorization,
        `${this.describe} could not prove it holds the role's SCRAM verifier`,
      );
  }
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
