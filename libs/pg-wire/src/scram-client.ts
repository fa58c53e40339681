// The client role of SCRAM-SHA-256: the router authenticating to a Postgres node with a
// password it knows. One ScramClient per attempt.
import { timingSafeEqual } from 'node:crypto';
import {
  fromBase64,
  hmac,
  isPrintable,
  newNonce,
  parseAttributes,
  saltedPassword,
  ScramError,
  sha256,
  xor,
} from './scram-common.js';

/** 'n,,' base64: no channel binding, no authorization identity. */
const GS2_HEADER = 'n,,';
const CHANNEL_BINDING = Buffer.from(GS2_HEADER).toString('base64');
/** Postgres rejects iteration counts it cannot afford; so does the client, to bound CPU. */
const MAX_ITERATIONS = 10_000_000;

/**
 * Usage: send `clientFirstMessage()` in SASLInitialResponse ('SCRAM-SHA-256'), answer
 * AuthenticationSASLContinue with `receiveServerFirst(data)` in SASLResponse, and check
 * AuthenticationSASLFinal with `receiveServerFinal(data)` (throws if the server cannot prove
 * it knows the password).
 */
export class ScramClient {
  private readonly clientFirstBare: string;
  private expectedServerSignature: Buffer | undefined;

  constructor(
    private readonly password: string,
    private readonly clientNonce: string = newNonce(),
  ) {
    // The user name is left empty: Postgres takes it from the startup packet.
    this.clientFirstBare = `n=,r=${clientNonce}`;
  }

  clientFirstMessage(): string {
    return GS2_HEADER + this.clientFirstBare;
  }

  /** Takes server-first-message, returns client-final-message. */
  receiveServerFirst(message: string | Buffer): string {
    if (this.expectedServerSignature) throw new ScramError('unexpected SCRAM server-first-message');
    const serverFirst = typeof message === 'string' ? message : message.toString('utf8');
    const [r, s, i] = parseAttributes(serverFirst);
    if (r?.[0] !== 'r' || s?.[0] !== 's' || i?.[0] !== 'i')
      throw new ScramError('malformed SCRAM server-first-message');
    const nonce = r[1];
    if (
      !nonce.startsWith(this.clientNonce) ||
      nonce.length === this.clientNonce.length ||
      !isPrintable(nonce)
    ) {
      throw new ScramError('SCRAM server nonce does not extend the client nonce');
    }
    const iterations = Number(i[1]);
    if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS) {
      throw new ScramError(`bad SCRAM iteration count ${i[1]}`);
    }
    const salt = fromBase64(s[1]);
    if (!salt?.length) throw new ScramError('bad SCRAM salt');

    const salted = saltedPassword(this.password, salt, iterations);
    const clientKey = hmac(salted, 'Client Key');
    const storedKey = sha256(clientKey);
    const withoutProof = `c=${CHANNEL_BINDING},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const proof = xor(clientKey, hmac(storedKey, authMessage));
    this.expectedServerSignature = hmac(hmac(salted, 'Server Key'), authMessage);
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  /** Checks server-final-message; throws ScramError if it carries an error or a wrong signature. */
  receiveServerFinal(message: string | Buffer): void {
    const expected = this.expectedServerSignature;
    if (!expected) throw new ScramError('unexpected SCRAM server-final-message');
    const text = typeof message === 'string' ? message : message.toString('utf8');
    const [first] = parseAttributes(text);
    if (first?.[0] === 'e')
      throw new ScramError(`SCRAM authentication failed: ${first[1]}`, '28P01');
    if (first?.[0] !== 'v') throw new ScramError('malformed SCRAM server-final-message');
    const signature = fromBase64(first[1]);
    if (signature?.length !== expected.length || !timingSafeEqual(signature, expected)) {
      throw new ScramError('SCRAM server signature does not match', '28P01');
    }
  }
}
