// SCRAM-SHA-256 authentication of clients (`--auth scram`), against the verifier Postgres itself
// stores for the role (auth-verifiers.ts). Every refusal a client could tell apart would let it
// probe which roles exist, so an unknown role, one without a SCRAM password, a NOLOGIN role, an
// expired password and a wrong password all run the whole exchange and end in the same FATAL
// 28P01. A successful exchange also yields the client's ClientKey, which logs the router in to
// nodes as the same role (pool/scram-pass-through.ts) without ever knowing the password.
import {
  FrontendCode,
  SCRAM_SHA_256,
  ScramError,
  ScramServer,
  Writer,
  decodeSASLInitialResponse,
  decodeSASLResponse,
  mockScramVerifier,
  writeAuthenticationSASL,
  writeAuthenticationSASLContinue,
  writeAuthenticationSASLFinal,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { recoverClientKey, type ScramPassThrough } from '../pool/scram-pass-through.js';
import type { Session } from './session.js';
import type { RoleSecrets } from './auth-verifiers.js';

/**
 * Runs the exchange for `s.user`. Resolves with the client's pass-through credential once the
 * proof checked out (AuthenticationSASLFinal sent, AuthenticationOk left to the caller), or
 * undefined if the client went away; throws a FATAL RouterError the caller sends.
 */
export async function authenticateScram(
  s: Session,
  secrets: RoleSecrets,
): Promise<ScramPassThrough | undefined> {
  const role = await secrets.lookup(s.user).catch((e: unknown) => {
    const cause = (e as { cause?: unknown }).cause;
    s.services.log.warn({ err: cause ?? e }, 'could not read a role verifier from the home node');
    throw e;
  });
  const verifier = role.verifier ?? mockScramVerifier(s.user, role.mockSecret);
  s.socket.write(writeAuthenticationSASL(new Writer(64), [SCRAM_SHA_256]).flush());

  const initial = await readPasswordMessage(s, 'SASLInitialResponse');
  if (initial === undefined) return undefined;
  const { mechanism, data } = decodeSASLInitialResponse(initial);
  if (mechanism !== SCRAM_SHA_256)
    throw protocolViolation('client selected an invalid SASL authentication mechanism');
  if (data === null) throw protocolViolation('malformed SCRAM message: empty client-first-message');
  // Copied: the body is a view of a read chunk, and the key recovery needs it after more reads.
  const clientFirst = Buffer.from(data);
  const server = new ScramServer(verifier);
  const serverFirst = scramStep(s, () => server.receiveClientFirst(clientFirst));
  s.socket.write(writeAuthenticationSASLContinue(new Writer(256), serverFirst).flush());

  const response = await readPasswordMessage(s, 'SASLResponse');
  if (response === undefined) return undefined;
  const clientFinal = Buffer.from(decodeSASLResponse(response));
  const serverFinal = scramStep(s, () => server.receiveClientFinal(clientFinal));
  // Checked only now, after a full exchange, so these refusals look like a wrong password.
  if (role.verifier === undefined || !role.mayLogIn) throw passwordFailed(s.user);

  s.socket.write(writeAuthenticationSASLFinal(new Writer(128), serverFinal).flush());
  return {
    clientKey: recoverClientKey(verifier, clientFirst, serverFirst, clientFinal),
    verifier,
  };
}

/** The next typed message before login; its 64 KiB limit is the session reader's. */
async function readPasswordMessage(s: Session, expected: string): Promise<Buffer | undefined> {
  for (;;) {
    const f = s.input.reader.next();
    if (f !== undefined) {
      if (f.code === FrontendCode.Terminate) return undefined;
      // PasswordMessage carries SASLInitialResponse and SASLResponse.
      if (f.code !== FrontendCode.PasswordMessage)
        throw protocolViolation(
          `expected ${expected} (message type 'p'), got message type ${f.code}`,
        );
      return f.body;
    }
    if (s.closed) return undefined;
    await s.input.waitData();
  }
}

function scramStep(s: Session, step: () => string): string {
  try {
    return step();
  } catch (e) {
    if (e instanceof ScramError)
      throw e.sqlstate === SQLSTATE.invalidPassword
        ? passwordFailed(s.user)
        : new RouterError(e.sqlstate, e.message, 'FATAL');
    throw e;
  }
}

export function passwordFailed(user: string): RouterError {
  return new RouterError(
    SQLSTATE.invalidPassword,
    `password authentication failed for user "${user}"`,
    'FATAL',
  );
}

function protocolViolation(message: string): RouterError {
  return new RouterError(SQLSTATE.protocolViolation, message, 'FATAL');
}
