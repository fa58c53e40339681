// Every fault kind the soak knows, by name. A new kind is one module under faults/ and one line
// here; plans name it in faults.kinds.
import { failoverNode, homeFailover, killReplica } from './failover.js';
import type { FaultKind } from './fault.js';
import { linkDelay, linkLoss, partitionNode } from './network.js';
import { killMover, moveRange, splitMerge } from './mover.js';
import { killNode, pauseNode, restartNode } from './nodes.js';
import { killCoordinator, killRouter, twopcKill } from './processes.js';

export const FAULT_KINDS: readonly FaultKind[] = [
  killRouter,
  killCoordinator,
  killNode,
  pauseNode,
  restartNode,
  partitionNode,
  linkDelay,
  linkLoss,
  twopcKill,
  moveRange,
  splitMerge,
  killMover,
  failoverNode,
  killReplica,
  homeFailover,
];

export function faultKind(name: string): FaultKind | undefined {
  return FAULT_KINDS.find((k) => k.name === name);
}
