// The router's side of a node's authentication exchange at login (Backend.connect): cleartext and
// MD5 with the service password, SCRAM with the client's own key when it has one (pass-through)
// or the service password; and the error for a node that cannot be reached or logged in to.
import { createHash } from 'node:crypto';
import {
  ScramClient,
  Writer,
  decodeAuthentication,
  writePasswordMessage,
  writeSASLInitialResponse,
  writeSASLResponse,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import type { BackendTarget } from './backend.js';
import {
  PassThroughScramClient,
  type ScramClientRole,
  type ScramPassThrough,
} from './scram-pass-through.js';

/** One login's authentication state: the SCRAM exchange, once the node asked for it. */
export class LoginAuth {
  private scram: ScramClientRole | undefined;

  constructor(
    private readonly target: BackendTarget,
    private readonly passThrough: ScramPassThrough | undefined,
  ) {}

  /**
   * The message answering an Authentication message's `body`, if it needs one. Throws
   * RouterError for a method the router cannot answer.
   */
  answer(body: Buffer): Buffer | undefined {
    const target = this.target;
    const auth = decodeAuthentication(body);
    const w = new Writer();
    switch (auth.type) {
      case 'Ok':
        return undefined;
      case 'CleartextPassword':
        return writePasswordMessage(w, needPassword(target)).flush();
      case 'MD5Password': {
        const inner = md5(needPassword(target) + target.user);
        return writePasswordMessage(
          w,
          'md5' + md5(Buffer.concat([Buffer.from(inner), auth.salt])),
        ).flush();
      }
      case 'SASL': {
        if (!auth.mechanisms.includes('SCRAM-SHA-256'))
          throw unreachable(target, 'the node offers no SASL mechanism the router speaks');
        const scram = (this.scram = this.passThrough
          ? new PassThroughScramClient(this.passThrough, `node "${target.node}"`)
          : new ScramClient(needPassword(target)));
        return writeSASLInitialResponse(w, 'SCRAM-SHA-256', scram.clientFirstMessage()).flush();
      }
      case 'SASLContinue':
        if (!this.scram) throw unreachable(target, 'unexpected SASL continue');
        return writeSASLResponse(w, this.scram.receiveServerFirst(auth.data)).flush();
      case 'SASLFinal':
        this.scram?.receiveServerFinal(auth.data);
        return undefined;
      default:
        throw unreachable(
          target,
          'the node asks for an authentication method the router does not speak',
        );
    }
  }
}

/** RouterError 08006 for a node that cannot be reached or logged in to, saying why. */
export function unreachable(target: BackendTarget, why: string): RouterError {
  return new RouterError(
    SQLSTATE.connectionFailure,
    `could not connect to node "${target.node}" (${target.host}:${target.port}): ${why}`,
  );
}

function needPassword(target: BackendTarget): string {
  if (target.password === undefined) {
    throw new RouterError(
      SQLSTATE.invalidAuthorization,
      `node "${target.node}" asks for a password and the router has none (set TESSERA_NODE_PASSWORD)`,
    );
  }
  return target.password;
}

function md5(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex');
}
