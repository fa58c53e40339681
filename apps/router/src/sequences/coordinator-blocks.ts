// ReserveBlock over the coordinator's TxnService.AllocateSequence. Retried for a while when the
// coordinator is restarting or a standby is taking over: the call is not idempotent, but a block
// reserved and then lost to a failed answer is only a gap, never a value given twice.
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, RpcError, type Client, type TxnService } from '@tessera/proto';
import type { ReserveBlock } from './blocks.js';

const CALL_DEADLINE_MS = 5_000;
const RETRY_FOR_MS = 10_000;
const RETRY_DELAY_MS = 100;

export function coordinatorBlocks(
  client: Pick<Client<typeof TxnService>, 'allocateSequence'>,
): ReserveBlock {
  return async (def, count) => {
    const until = Date.now() + RETRY_FOR_MS;
    for (;;) {
      try {
        const r = await client.allocateSequence(
          {
            sequence: def.key,
            count,
            start: def.start,
            increment: def.increment,
            minValue: def.minValue,
            maxValue: def.maxValue,
            floor: def.floor,
          },
          { deadlineMs: CALL_DEADLINE_MS },
        );
        return { first: r.first, count: r.count };
      } catch (e) {
        const retriable =
          e instanceof RpcError &&
          (e.code === Code.UNAVAILABLE || e.code === Code.DEADLINE_EXCEEDED);
        if (!retriable || Date.now() >= until) throw e;
        await sleep(RETRY_DELAY_MS);
      }
    }
  };
}
