// AdminService: each call is one catalog change (store/*-changes.ts) and one new epoch. The
// snapshot of the new epoch is published to watchers before the call answers.
import {
  AdminService,
  toJson,
  type DescMessage,
  type MessageShape,
  type ServiceImpl,
} from '@tessera/proto';
import type { ChangeTx } from '../store/catalog-store.js';
import { createKeyspace } from '../store/keyspace-changes.js';
import { addNode, removeNode } from '../store/node-changes.js';
import { mergeRanges, setRangeOwner, setRangeState, splitRange } from '../store/range-changes.js';
import { distributeTable, dropTable, referenceTable } from '../store/table-changes.js';
import { addReplica } from '../store/replica-changes.js';
import type { ServiceDeps } from './deps.js';

type Change<R> = (tx: ChangeTx, req: R) => Promise<void>;

export function adminService(deps: ServiceDeps): ServiceImpl<typeof AdminService> {
  const m = AdminService.method;
  const apply = async <D extends DescMessage>(
    name: string,
    schema: D,
    req: MessageShape<D>,
    change: Change<MessageShape<D>>,
  ) => {
    const { store } = deps.term();
    const committed = await store.change((tx) => change(tx, req));
    deps.hub.publish(committed.catalog);
    await deps.hub.published(committed.epoch);
    deps.onEpoch(committed.epoch);
    deps.log.info(
      { change: name, epoch: committed.epoch.toString(), request: toJson(schema, req) },
      'catalog changed',
    );
    return { epoch: committed.epoch };
  };
  return {
    addNode: (req) => apply('AddNode', m.addNode.input, req, addNode),
    removeNode: (req) => apply('RemoveNode', m.removeNode.input, req, removeNode),
    createKeyspace: (req) => apply('CreateKeyspace', m.createKeyspace.input, req, createKeyspace),
    splitRange: (req) => apply('SplitRange', m.splitRange.input, req, splitRange),
    mergeRanges: (req) => apply('MergeRanges', m.mergeRanges.input, req, mergeRanges),
    setRangeOwner: (req) => apply('SetRangeOwner', m.setRangeOwner.input, req, setRangeOwner),
    setRangeState: (req) => apply('SetRangeState', m.setRangeState.input, req, setRangeState),
    distributeTable: (req) =>
      apply('DistributeTable', m.distributeTable.input, req, distributeTable),
    referenceTable: (req) => apply('ReferenceTable', m.referenceTable.input, req, referenceTable),
    dropTable: (req) => apply('DropTable', m.dropTable.input, req, dropTable),
    addReplica: (req) => apply('AddReplica', m.addReplica.input, req, addReplica),
    async rejoinNode(req) {
      deps.term();
      deps.log.info({ node: req.name, host: req.host, port: req.port }, 'rejoin requested');
      return { epoch: await deps.engine.rejoin(req.name, req.host, req.port) };
    },
  };
}
