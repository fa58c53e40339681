// What reads across nodes remember between statements, shared by every session of one router:
// plans by SQL text (like the analysis cache) and each database's collation. Kept beside the
// services object (a WeakMap keyed by it) rather than in a module-level singleton.
import { ALL_PLAN_FEATURES, planRead, type ReadPlanResult } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { namesOf } from '../routing/names.js';
import { plannerCatalog } from '../routing/planner-catalog.js';
import type { RouterServices } from '../services.js';

/** Plans kept; the oldest is dropped first (Map keeps insertion order). */
const MAX_PLANS = 2000;

interface ScatterMemory {
  readonly plans: Map<string, ReadPlanResult>;
  /** Per database: whether its collation orders text bytewise (read once from a node). */
  readonly bytewise: Map<string, boolean>;
}

const memories = new WeakMap<RouterServices, ScatterMemory>();

export function scatterMemory(services: RouterServices): ScatterMemory {
  let m = memories.get(services);
  if (m === undefined) {
    m = { plans: new Map(), bytewise: new Map() };
    memories.set(services, m);
  }
  return m;
}

/**
 * The plan for `sql` under this catalog epoch and collation. A new epoch may change what a table
 * is, so the epoch is part of the key; syntax errors throw SqlError like the analysis does. Every
 * shape the router has the glue for is planned (ALL_PLAN_FEATURES); a plan that reads the
 * transaction time is kept unbound (the caller binds each statement's or transaction's time).
 */
export function planFor(
  services: RouterServices,
  catalog: Snapshot,
  sql: string,
  bytewise: boolean,
): ReadPlanResult {
  const plans = scatterMemory(services).plans;
  // Unqualified names resolve by the session's search_path: its key is part of the plan's.
  const key = `${catalog.epoch}\0${bytewise ? 1 : 0}\0${namesOf(catalog).key}\0${sql}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    plan = planRead(sql, plannerCatalog(catalog, bytewise), ALL_PLAN_FEATURES);
    if (plans.size >= MAX_PLANS) plans.delete(plans.keys().next().value!);
    plans.set(key, plan);
  }
  return plan;
}
