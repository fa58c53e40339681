// The server role of SCRAM-SHA-256: the router checks a client's password proof against a
// stored verifier without ever learning the password. One ScramServer per authentication
// attempt; channel binding ('p=') is refused, 'n' and 'y' are accepted, as Postgres without TLS.
import { timingSafeEqual } from 'node:crypto';
import {
  fromBase64,
  hmac,
  isPrintable,
  newNonce,
  parseAttributes,
  ScramError,
  sha256,
  xor,
  type ScramVerifier,
} from './scram-common.js';

const INVALID_PASSWORD = '28P01';

/**
 * Usage: `serverFirst = s.receiveClientFirst(initialResponse)` (send in
 * AuthenticationSASLContinue), then `serverFinal = s.receiveClientFinal(response)` (send in
 * AuthenticationSASLFinal, then AuthenticationOk). Both throw ScramError on failure: 28P01 for a
 * wrong password, 08P01 for a malformed exchange.
 */
export class ScramServer {
  private gs2Header = '';
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  private state: 'first' | 'final' | 'done' = 'first';

  constructor(
    private readonly verifier: ScramVerifier,
    /** Server part of the nonce; random unless given (tests). */
    private readonly serverNonce: string = newNonce(),
  ) {}

  /** Takes client-first-message, returns server-first-message. */
  receiveClientFirst(message: string | Buffer): string {
    if (this.state !== 'first') throw new ScramError('unexpected SCRAM client-first-message');
    const text = typeof message === 'string' ? message : message.toString('utf8');
    const flag = text[0];
    if (flag === 'p')
      throw new ScramError('client requires SCRAM channel binding, which is not supported here');
    if ((flag !== 'n' && flag !== 'y') || text[1] !== ',')
      throw new ScramError('malformed SCRAM message: bad GS2 header');
    if (text[2] !== ',') {
      throw new ScramError(
        text[2] === 'a'
          ? 'client uses an authorization identity, which is not supported'
          : 'malformed SCRAM message: bad GS2 header',
      );
    }
    this.gs2Header = text.slice(0, 3);
    this.clientFirstBare = text.slice(3);
    const attrs = parseAttributes(this.clientFirstBare);
    const [user, nonce] = attrs;
    if (user?.[0] === 'm') throw new ScramError('client requires an unsupported SCRAM extension');
    // The user name is ignored: the startup packet's user is the one authenticated, as in Postgres.
    if (user?.[0] !== 'n' || nonce?.[0] !== 'r' || !isPrintable(nonce[1])) {
      throw new ScramError('malformed SCRAM message: expected n= and r= attributes');
    }
    this.nonce = nonce[1] + this.serverNonce;
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString('base64')},i=${this.verifier.iterations}`;
    this.state = 'final';
    return this.serverFirst;
  }

  /** Takes client-final-message, checks the proof, returns server-final-message. */
  receiveClientFinal(message: string | Buffer): string {
    if (this.state !== 'final') throw new ScramError('unexpected SCRAM client-final-message');
    this.state = 'done';
    const text = typeof message === 'string' ? message : message.toString('utf8');
    const proofAt = text.lastIndexOf(',p=');
    if (proofAt < 0) throw new ScramError('malformed SCRAM message: proof missing');
    const withoutProof = text.slice(0, proofAt);
    const attrs = parseAttributes(withoutProof);
    const [binding, nonce] = attrs;
    if (binding?.[0] !== 'c' || nonce?.[0] !== 'r')
      throw new ScramError('malformed SCRAM message: expected c= and r= attributes');
    if (fromBase64(binding[1])?.toString('latin1') !== this.gs2Header) {
      throw new ScramError('SCRAM channel binding check failed');
    }
    if (nonce[1] !== this.nonce) throw new ScramError('SCRAM nonce mismatch');
    const proof = fromBase64(text.slice(proofAt + 3));
    if (proof?.length !== 32) throw new ScramError('malformed SCRAM message: bad proof length');

    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.verifier.storedKey, authMessage);
    const clientKey = xor(proof, clientSignature);
    if (!timingSafeEqual(sha256(clientKey), this.verifier.storedKey)) {
      throw new ScramError('password authentication failed', INVALID_PASSWORD);
    }
    return `v=${hmac(this.verifier.serverKey, authMessage).toString('base64')}`;
  }
}
