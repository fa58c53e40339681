// The rest of the batch shape drivers send for one statement (Bind, [Describe portal,] Execute,
// Sync, all of the unnamed portal) once its Bind joined the round on a node: exactly what the
// generic steps would add for those messages (describe.ts onNode, extended.ts forwardExecute,
// the Sync), added at once, without decoding them again. This is every prepared statement a
// driver runs, so it is worth the few lines.
import { EXPECT_DESCRIBE_PORTAL, EXPECT_EXECUTE, EXPECT_SYNC } from '../execute/exchange.js';
import type { Round } from '../execute/round.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { isSingleRun } from '../statement/prepared.js';

/**
 * Adds the Describe, Execute and Sync of a single run whose Bind (first in `batch`) is on
 * `round`'s backend; false (nothing added) when the batch is not that shape or a portal the
 * router keeps could be named by them.
 */
export function queueSingleRunTail(s: Session, batch: readonly InMsg[], round: Round): boolean {
  if (round.backend === undefined || s.portals.size > 0 || !isSingleRun(batch)) return false;
  const n = batch.length;
  // The unnamed portal in every message (a name is a C string: an empty one is its NUL), read
  // from `raw` (the body starts at its 6th byte) without making the bodies' views.
  if (batch[0]!.raw[5] !== 0 || batch[n - 2]!.raw[5] !== 0) return false;
  if (n === 4 && batch[1]!.raw[6] !== 0) return false;
  const { messages, expect } = round;
  if (n === 4) {
    messages.push(batch[1]!.raw);
    expect.push(EXPECT_DESCRIBE_PORTAL);
  }
  // Unlike forwardExecute, no takePrelude: the Bind took the transaction's prelude when it joined.
  messages.push(batch[n - 2]!.raw, batch[n - 1]!.raw);
  expect.push(EXPECT_EXECUTE, EXPECT_SYNC);
  return true;
}
