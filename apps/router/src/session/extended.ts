// The extended query protocol: a batch of Parse/Bind/Describe/Execute/Close up to a Sync (or a
// Flush) goes to one backend. Statements are tracked per client and prepared lazily, under a
// router-unique name, on whichever backend runs them; the node is chosen at Bind, from the
// statement's analysis and the key parameter read in place from the Bind.
import {
  BIND_COMPLETE,
  CLOSE_COMPLETE,
  NO_DATA,
  PARSE_COMPLETE,
  Writer,
  bindParam,
  bindStatementName,
  decodeClose,
  decodeDescribe,
  decodeExecute,
  decodeParse,
  writeParameterDescription,
} from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { route } from '../routing/route.js';
import { routeLabel, type Route } from '../routing/route-types.js';
import type { Backend } from '../pool/backend.js';
import type { Snapshot } from '@tessera/keyspace';
import {
  EXPECT_DESCRIBE_PORTAL,
  EXPECT_DESCRIBE_STATEMENT,
  EXPECT_EXECUTE,
  EXPECT_ONE,
  EXPECT_SYNC,
  type Expectation,
} from './exchange.js';
import type { InMsg } from './client-in.js';
import { engageInto, settle, takePrelude } from './engage.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import {
  StatementRecord,
  prepareOn,
  rewriteBindStatement,
  statementNamed,
  targetFrame,
} from './statements.js';
import { pickNode } from './simple-query.js';
import { isWrite } from '../routing/writes.js';
import { endsFailedTransaction, inFailedTransaction, replayable } from './txn.js';
import {
  checkBindOnSeveral,
  isLocal,
  refuse,
  runLocal,
  runsOnSeveral,
  type LocalPortal,
} from './extended-local.js';
import { closeOpenCycle, openCycleBackend, usesOpenPortal } from './extended-cycle.js';
import {
  bindOfScatter,
  describeStatementFrames,
  executeScatterPortal,
  scatterDescribeFrame,
  scatterPipeline,
  type ScatterPortal,
} from './scatter-portal.js';

// Shared empty maps, replaced by a batch's own before the first set (only read or deleted from).
const NO_LOCAL_PORTALS = new Map<string, LocalPortal>();
const NO_SCATTER_PORTALS = new Map<string, ScatterPortal>();

export async function handleBatch(s: Session, batch: readonly InMsg[]): Promise<void> {
  const endsWithSync = batch[batch.length - 1]!.code === 0x53;
  // A cycle left open at a Flush continues on its backend (extended-cycle.ts).
  let backend = openCycleBackend(s);
  let node = backend !== undefined ? s.cycleNode : undefined;
  const messages: Buffer[] = [];
  const expect: Expectation[] = [];
  // Created on first use: most batches (Bind/Execute/Sync of one statement) need neither.
  let localPortals: Map<string, LocalPortal> = NO_LOCAL_PORTALS;
  // Portals of reads across nodes: run by the router at Execute (session/scatter.ts).
  let scatterPortals: Map<string, ScatterPortal> = NO_SCATTER_PORTALS;
  const setLocal = (portal: string, p: LocalPortal): void => {
    if (localPortals === NO_LOCAL_PORTALS) localPortals = new Map();
    localPortals.set(portal, p);
  };
  const synth = (b: Buffer): void => {
    if (backend) expect.push({ t: 'synthetic', bytes: b });
    else s.out.push(b);
  };
  let catalog: Snapshot | undefined;
  const cat = (): Snapshot => (catalog ??= s.catalog());

  // The node the batch's first pinned Bind goes to: statements that could run anywhere
  // (a Describe before that Bind) go there too, so the batch stays on one node.
  let bindRoutes: Map<number, Route> | undefined;
  // Each Bind's statement name by index, read once.
  const bindNames: string[] = [];
  let preferred: string | undefined;
  try {
    let parsed: Map<string, Analysis | undefined> | undefined;
    for (let k = 0; k < batch.length; k++) {
      const m = batch[k]!;
      if (m.code === 0x50) {
        const p = decodeParse(m.body);
        const analyses = s.services.cache.get(p.sql);
        (parsed ??= new Map()).set(p.name, analyses.length === 1 ? analyses[0] : undefined);
      } else if (m.code === 0x42) {
        const name = (bindNames[k] = bindStatementName(m.body));
        const a =
          parsed !== undefined && parsed.has(name)
            ? parsed.get(name)
            : s.statements.get(name)?.analysis;
        if (a === undefined || isLocal(s, a)) continue;
        const r = route(a, cat(), (x) => bindParam(m.body, x));
        (bindRoutes ??= new Map()).set(k, r);
        if (preferred === undefined && r.kind === 'node' && !r.flexible) preferred = r.node;
      }
    }
  } catch {
    // Errors surface in order in the main pass.
  }

  // The open cycle's backend is not needed if this batch's key lives elsewhere and it uses no portal
  // of that cycle: that cycle is closed first.
  if (
    backend &&
    node !== undefined &&
    preferred !== undefined &&
    preferred !== node &&
    !usesOpenPortal(batch)
  ) {
    await closeOpenCycle(s, backend, node);
    backend = undefined;
    node = undefined;
  }

  // `begin`: the statement runs here, so a deferred BEGIN goes first; a Describe does not need it.
  // A promise only when the pool has no idle backend: the common case costs no event-loop turn.
  const engageFor = (
    target: string,
    flexible: boolean,
    begin = true,
  ): Backend | Promise<Backend> => {
    if (flexible && preferred !== undefined && s.txnNode === undefined) target = preferred;
    if (backend) {
      if (flexible || target === node) {
        if (begin) takePrelude(s, node!, messages, expect);
        return backend;
      }
      throw unsupported(
        `the statements of this pipeline run on different nodes ("${node}" and "${target}") before its Sync, which is not supported yet; send a Sync between them`,
      );
    }
    const chosen = pickNode(s, target, flexible);
    const e = engageInto(s, chosen, cat(), begin, messages, expect);
    if (e instanceof Promise) {
      return e.then((b) => {
        backend = b;
        node = chosen;
        return b;
      });
    }
    backend = e;
    node = chosen;
    return e;
  };

  let i = 0;
  try {
    for (; i < batch.length; i++) {
      const m = batch[i]!;
      switch (m.code) {
        case 0x50: {
          // Parse: remembered; prepared on a backend when a Bind or Describe needs it there.
          const p = decodeParse(m.body);
          if (p.name !== '' && s.statements.has(p.name)) {
            throw new RouterError(
              SQLSTATE.duplicatePreparedStatement,
              `prepared statement "${p.name}" already exists`,
            );
          }
          const analyses = s.services.cache.get(p.sql);
          if (analyses.length > 1)
            throw new RouterError(
              '42601',
              'cannot insert multiple commands into a prepared statement',
            );
          s.statements.set(p.name, new StatementRecord(p.name, p.sql, p.paramTypes, analyses));
          synth(PARSE_COMPLETE);
          break;
        }
        case 0x42: {
          const rec = statementNamed(s.statements, bindNames[i] ?? bindStatementName(m.body));
          const portal = m.body[0] === 0 ? '' : m.body.toString('utf8', 0, m.body.indexOf(0));
          const a = rec.analysis;
          if (a === undefined) {
            // An empty statement: any backend answers EmptyQueryResponse.
            const e = engageFor(cat().home, true);
            prepareOn(e instanceof Promise ? await e : e, rec, s.settings.key(), messages, expect);
            messages.push(m.raw);
            expect.push(EXPECT_ONE);
            break;
          }
          if (s.txn.phase === 'cross') {
            // Failed on one node = failed: another node's healthy part must not run it.
            if (s.status() === 'E' && !endsFailedTransaction(a)) throw inFailedTransaction();
            // The router runs these at Execute, before anything queued for a backend here.
            if (backend && isLocal(s, a) && (a.kind === 'transaction' || a.kind === 'set'))
              throw unsupported(
                'transaction control and SET after other statements in one pipeline are not supported in a transaction across nodes; send a Sync first',
              );
          }
          if (isLocal(s, a)) {
            setLocal(portal, { analysis: a });
            synth(BIND_COMPLETE);
            break;
          }
          localPortals.delete(portal);
          scatterPortals.delete(portal);
          const r = bindRoutes?.get(i) ?? route(a, cat(), (k) => bindParam(m.body, k));
          if (r.kind !== 'scatter') s.services.metrics.statements(routeLabel(r));
          if (r.kind === 'refuse') throw unsupported(r.message);
          if (r.kind === 'scatter') {
            if (scatterPortals === NO_SCATTER_PORTALS) scatterPortals = new Map();
            scatterPortals.set(portal, bindOfScatter(r, rec, a, m.body));
            synth(BIND_COMPLETE);
            break;
          }
          if (r.kind === 'all' || r.kind === 'multi_write') {
            // Run by the router at Execute, as simple queries on each node (fanout.ts).
            checkBindOnSeveral(a, r, backend !== undefined);
            setLocal(portal, { analysis: a });
            synth(BIND_COMPLETE);
            break;
          }
          if (r.kind !== 'node')
            throw unsupported(
              r.kind === 'split'
                ? 'a prepared INSERT whose rows go to several nodes is not supported yet; send it as a simple query or one row per statement'
                : 'this statement is not supported through the extended query protocol yet',
            );
          const e = engageFor(r.node, r.flexible);
          const b = e instanceof Promise ? await e : e;
          if (node !== undefined) {
            s.txn.wrote(node, isWrite(a));
            // Recorded when sent (its outcome comes after the Sync): a savepoint or SET that
            // fails fails the transaction, so a node joining later never runs after it unnoticed.
            if (replayable(a)) s.txn.replayed(a.sql);
          }
          const name = prepareOn(b, rec, s.settings.key(), messages, expect);
          messages.push(name === '' ? m.raw : rewriteBindStatement(m.body, name));
          expect.push(EXPECT_ONE);
          break;
        }
        case 0x44: {
          const d = decodeDescribe(m.body);
          if (d.target === 'S') {
            const rec = statementNamed(s.statements, d.name);
            const a = rec.analysis;
            if (
              a !== undefined &&
              (isLocal(s, a) || (!backend && runsOnSeveral(route(a, cat(), undefined))))
            ) {
              // Answered by the router: session commands, and statements for every node (DDL),
              // which then run on their own at Execute.
              synth(writeParameterDescription(new Writer(32), rec.paramTypes).flush());
              synth(NO_DATA);
              break;
            }
            if (
              a !== undefined &&
              !backend &&
              preferred === undefined &&
              !s.inTransaction() &&
              (a.kind === 'select' || a.kind === 'explain')
            ) {
              const r = route(a, cat(), undefined);
              if (r.kind === 'scatter' || r.kind === 'params') {
                // Its rows may come from several nodes at Execute: describe it on a round trip of
                // its own, so that no backend is left engaged in this batch.
                synth(
                  await describeStatementFrames(
                    s,
                    r.kind === 'scatter' ? r.nodes[0]! : cat().home,
                    rec,
                  ),
                );
                break;
              }
            }
            let target = cat().home;
            let flexible = true;
            if (a !== undefined) {
              const r = route(a, cat(), undefined);
              if (r.kind === 'node') ({ node: target, flexible } = r);
            }
            if (s.txnNode !== undefined || backend) flexible = true;
            const e = engageFor(target, flexible, false);
            const b = e instanceof Promise ? await e : e;
            const name = prepareOn(b, rec, s.settings.key(), messages, expect);
            messages.push(name === '' ? m.raw : targetFrame(0x44, 'S', name));
            expect.push(EXPECT_DESCRIBE_STATEMENT);
          } else if (localPortals.has(d.name)) {
            synth(NO_DATA);
          } else if (scatterPortals.has(d.name)) {
            const sp = scatterPortals.get(d.name)!;
            const next = batch[i + 1];
            if (next?.code === 0x45 && decodeExecute(next.body).portal === d.name) {
              // The RowDescription the executor produces leads the Execute's rows, just after.
              sp.describe = true;
            } else {
              if (backend) throw scatterPipeline();
              synth(await scatterDescribeFrame(s, sp));
            }
          } else {
            const e = engageFor(cat().home, true, false);
            if (e instanceof Promise) await e;
            messages.push(m.raw);
            expect.push(EXPECT_DESCRIBE_PORTAL);
          }
          break;
        }
        case 0x45: {
          // Only a portal the router runs itself needs the Execute decoded.
          const ex =
            localPortals.size + scatterPortals.size > 0 ? decodeExecute(m.body) : undefined;
          const local = ex && localPortals.get(ex.portal);
          if (local) {
            await runLocal(s, local.analysis, synth);
            break;
          }
          const sp = ex && scatterPortals.get(ex.portal);
          if (ex && sp) {
            // Its rows go straight to the client: nothing of this batch may be queued on a backend.
            if (backend) throw scatterPipeline();
            await executeScatterPortal(s, sp, ex.maxRows);
            break;
          }
          const e = engageFor(cat().home, true);
          if (e instanceof Promise) await e;
          messages.push(m.raw);
          expect.push(EXPECT_EXECUTE);
          break;
        }
        case 0x43: {
          const c = decodeClose(m.body);
          if (c.target === 'S') {
            // The server-side statement may serve other clients: only the client's name goes.
            s.statements.delete(c.name);
            synth(CLOSE_COMPLETE);
          } else if (backend && !localPortals.has(c.name) && !scatterPortals.delete(c.name)) {
            messages.push(m.raw);
            expect.push(EXPECT_ONE);
          } else {
            localPortals.delete(c.name);
            synth(CLOSE_COMPLETE);
          }
          break;
        }
        case 0x48:
          if (backend) messages.push(m.raw);
          break;
        case 0x53:
          if (backend) {
            messages.push(m.raw);
            expect.push(EXPECT_SYNC);
          } else {
            s.out.push(s.readyFrame());
          }
          break;
      }
    }
  } catch (e) {
    if (s.closed) return;
    await refuse(s, e, { backend, messages, expect, synth });
    // Everything up to the Sync is skipped, as Postgres does after an error.
    if (endsWithSync) {
      if (backend) {
        messages.push(batch[batch.length - 1]!.raw);
        expect.push(EXPECT_SYNC);
      } else {
        s.out.push(s.readyFrame());
      }
    } else {
      s.skipUntilSync = true;
    }
  }

  if (backend && node !== undefined) {
    const usedNode = node;
    try {
      await run1(s, backend, messages, expect);
    } catch (e) {
      s.cycleOpen = false;
      s.sendError(e);
      if (endsWithSync) s.out.push(s.readyFrame());
      else s.skipUntilSync = true;
      s.out.flush();
      return;
    }
    s.cycleOpen = !endsWithSync;
    s.cycleNode = s.cycleOpen ? usedNode : undefined;
    // A Sync's ReadyForQuery was forwarded by the exchange; it is also the session's status now.
    settle(s, usedNode);
  }
  s.out.flush();
}
