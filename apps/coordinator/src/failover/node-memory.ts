// What the failover engine remembers per node between decisions: kept by the engine (engine.ts),
// read and updated by the operations it carries out (ops.ts).
import type { Adding } from './sync-plan.js';

export interface NodeMemory {
  adding: Adding | undefined;
  notStreamingSince: Map<string, number>;
  status: string;
  lastFailover: string;
  refusal: string;
}
