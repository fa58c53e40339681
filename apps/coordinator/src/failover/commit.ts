// One catalog change made by the failover engine: committed over the leader session, published
// to every watcher (routers) before it returns, logged with its epoch.
import type { Logger } from '@tessera/telemetry';
import type { ServiceDeps } from '../grpc/deps.js';
import type { ChangeTx } from '../store/catalog-store.js';

export async function commitChange(
  deps: Pick<ServiceDeps, 'term' | 'hub' | 'onEpoch'>,
  log: Logger,
  name: string,
  detail: Record<string, unknown>,
  fn: (tx: ChangeTx) => Promise<void>,
): Promise<bigint> {
  const committed = await deps.term().store.change(fn);
  deps.hub.publish(committed.catalog);
  await deps.hub.published(committed.epoch);
  deps.onEpoch(committed.epoch);
  log.info({ change: name, epoch: committed.epoch.toString(), ...detail }, 'catalog changed');
  return committed.epoch;
}
