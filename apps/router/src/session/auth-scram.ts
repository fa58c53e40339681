// SCRAM-SHA-256 authentication of clients. Verifiers come from the home node's pg_authid through
// a service login (not implemented yet): until then `--auth scram` refuses every login with the
// same error a wrong password gets, so nothing is let in by mistake.
import { RouterError, SQLSTATE } from '../errors.js';
import type { Session } from './session.js';

export async function authenticateScram(s: Session): Promise<boolean> {
  throw new RouterError(
    SQLSTATE.invalidPassword,
    `password authentication failed for user "${s.user}"`,
    'FATAL',
  );
}
