// TxnService: the 2PC decision log (store/txn-log.ts), in-doubt transactions on the nodes
// (recovery/in-doubt.ts) and the blocks of cluster-wide sequences (store/sequence-blocks.ts).
// Resolve with a txid forces that transaction now (undecided -> abort);
// without one it settles everything the background loop would, without waiting for its next pass.
import type { TxnService, ServiceImpl } from '@tessera/proto';
import { notFound } from '../errors.js';
import type { ServiceDeps } from './deps.js';

export function txnService(deps: ServiceDeps): ServiceImpl<typeof TxnService> {
  return {
    async decide(req) {
      const record = await deps.term().txns.decide(req.txid, req.decision, req.participants);
      return { decision: record.decision };
    },
    async getDecision(req) {
      const record = await deps.term().txns.get(req.txid);
      if (!record) throw notFound(`no decision is logged for transaction ${req.txid}`);
      return record;
    },
    async listInDoubt() {
      return { txns: await deps.term().inDoubt.list() };
    },
    async allocateSequence(req) {
      const block = await deps.term().sequences.allocate(req.sequence, req.count, {
        start: req.start,
        increment: req.increment,
        minValue: req.minValue,
        maxValue: req.maxValue,
        floor: req.floor,
      });
      return { first: block.first, count: block.count };
    },
    async resolve(req) {
      const result = await deps.term().inDoubt.resolve(req.txid);
      deps.log.info({ txid: req.txid || '(all)', ...result }, 'in-doubt transactions resolved');
      return result;
    },
  };
}
