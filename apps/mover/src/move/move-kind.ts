// The move job (DESIGN.md section 6): plan, prepare, copy, sync, cutover, verify, teardown,
// delete, each resumed from its durable record after any crash. `--plan` jobs stop after the plan
// and answer it as their result. The job's result gathers what each step measured.
import { JobState } from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { JobKind, Outcome } from '../job/kind.js';
import type { JobRuntime } from '../job/runtime.js';
import { moveCtx, planOf, type MoveCtx } from './context.js';
import { copy } from './copy.js';
import { cutover } from './cutover.js';
import { gatherFacts } from './facts.js';
import { decidePlan } from './plan.js';
import { prepare } from './prepare.js';
import { MOVE_STEPS, type MovePlan, type MoveSpec } from './spec.js';
import { catchUp } from './sync.js';
import { deleteOldRows, endMove, teardown, undoMove } from './teardown.js';
import { verify } from './verify.js';

export function parseMoveSpec(rt: JobRuntime): MoveSpec {
  const spec = rt.spec<Partial<MoveSpec>>();
  if (
    typeof spec.keyspace !== 'string' ||
    typeof spec.lo !== 'string' ||
    typeof spec.to !== 'string'
  )
    throw new JobFailed('a move job needs keyspace, lo and to in its spec');
  if (!/^-?\d+$/.test(spec.lo))
    throw new JobFailed(`the move's lo "${spec.lo}" is not a signed 64-bit integer`);
  return spec as MoveSpec;
}

/** The plan step: facts, decision, recorded; refused with the failing checks' sentences. */
export async function planMove(rt: JobRuntime, spec: MoveSpec): Promise<MovePlan> {
  const catalog = await rt.catalog();
  const facts = await gatherFacts(rt, catalog, {
    keyspace: spec.keyspace,
    lo: BigInt(spec.lo),
    to: spec.to,
  });
  return decidePlan(facts, rt.config);
}

function results(rt: JobRuntime): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of MOVE_STEPS) {
    const p = rt.step(name).progress;
    if (name === 'plan') {
      const plan = p['plan'] as MovePlan | undefined;
      if (plan)
        out['plan'] = {
          rows: plan.rows,
          bytes: plan.bytes,
          source: plan.source,
          target: plan.target,
          estimate: plan.estimate,
        };
    } else if (Object.keys(p).length > 0) out[name] = p;
  }
  return out;
}

async function runMove(rt: JobRuntime): Promise<Outcome> {
  const spec = parseMoveSpec(rt);
  if (!rt.isDone('plan')) {
    const plan = await planMove(rt, spec);
    if (spec.planOnly) {
      await rt.done('plan', { plan });
      return { state: 'done', result: { plan } };
    }
    if (plan.refusals.length > 0) {
      await rt.report('plan', { progress: { plan } });
      throw new JobFailed(plan.refusals.join('; '));
    }
    await rt.done('plan', { plan });
    await rt.phase('planned', 'prepare');
  } else if (spec.planOnly) {
    return { state: 'done', result: { plan: planOf(rt) } };
  }
  const plan = planOf(rt);
  const ctx: MoveCtx = moveCtx(rt, plan, await rt.catalog());
  const timed = async <T>(
    step: string,
    phase: string,
    fn: () => Promise<T>,
  ): Promise<T | undefined> => {
    if (rt.isDone(step)) return undefined;
    await rt.phase(phase, step);
    const t0 = Date.now();
    const out = await fn();
    await rt.done(step, { ...(out as Record<string, unknown> | undefined), ms: Date.now() - t0 });
    return out;
  };
  if (!rt.isDone('prepare')) {
    await prepare(ctx);
    await rt.done('prepare', { databases: ctx.dbs.map((d) => d.name) });
    await rt.phase('prepared', 'copy');
  }
  if (ctx.dbs.length > 0) {
    await timed('copy', 'copying', async () => {
      const c = await copy(ctx);
      return {
        rows: c.rows,
        bytes: c.bytes,
        seconds: c.seconds,
        copiedSeconds: c.copiedSeconds,
        startSeconds: c.startSeconds,
        rowsPerSec: c.seconds > 0 ? Math.round(c.rows / c.seconds) : null,
      };
    });
    await timed('sync', 'catching up', () => catchUp(ctx));
  } else {
    for (const s of ['copy', 'sync'] as const)
      if (!rt.isDone(s)) await rt.done(s, { skipped: 'no tables' });
  }
  if (!rt.isDone('cutover')) {
    const c = await cutover(ctx);
    rt.log.info({ ...c }, 'cutover done');
    await rt.done('cutover', { ...c });
  }
  if (!rt.isDone('verify')) {
    await rt.phase('verifying', 'verify');
    const v = await verify(ctx);
    if (v.mismatches.length > 0) {
      await rt.report('verify', { state: JobState.FAILED, progress: { ...v } });
      // Keep every copy; only the replication objects go (no slot outlives its job).
      await rt.phase('cleaning up', 'teardown');
      await teardown(ctx);
      await endMove(rt, plan);
      return {
        state: 'verify_failed',
        error: `verification found ${v.mismatches.length} chunk(s) that differ between ${plan.source} and ${plan.target} (first: ${v.mismatches[0]!.table} [${v.mismatches[0]!.lo}, ${v.mismatches[0]!.hi}]: ${v.mismatches[0]!.sourceRows} rows on ${plan.source}, ${v.mismatches[0]!.targetRows} on ${plan.target}); both copies are kept: see tessera jobs show ${rt.id}`,
        result: { ...results(rt), verify: v },
      };
    }
    await rt.done('verify', { ...v });
  }
  if (!rt.isDone('teardown')) {
    await rt.phase('cleaning up', 'teardown');
    await teardown(ctx);
    await rt.done('teardown');
  }
  if (!rt.isDone('delete')) {
    await rt.phase('deleting', 'delete');
    const d = await deleteOldRows(ctx);
    await rt.done('delete', { ...d });
  }
  return { state: 'done', result: results(rt) };
}

export const moveKind: JobKind = {
  kind: 'move',
  steps: () => [...MOVE_STEPS],
  run: runMove,
  async undo(rt) {
    let plan: MovePlan | undefined;
    try {
      plan = planOf(rt);
    } catch {
      plan = undefined;
    }
    await undoMove(rt, rt.isDone('plan') ? plan : undefined);
  },
};
