// Looking ahead in an extended-protocol batch: the node its first pinned Bind goes to, so that
// statements any node could answer before it (a Describe, SELECT 1) go there too and the batch
// stays on one node. Only asked when such a statement comes first; Bind/Execute/Sync never asks.
import { FrontendCode, bindParam, bindStatementName, decodeParse } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { admitNow } from './admission.js';

export function preferredNode(
  s: Session,
  batch: readonly InMsg[],
  from: number,
  /** A Bind's statement with the router's values written in (cluster-wide sequences), by position. */
  filled?: (at: number) => { readonly analysis: Analysis } | Error | undefined,
): string | undefined {
  let parsed: Map<string, Analysis | undefined> | undefined;
  try {
    for (let k = from; k < batch.length; k++) {
      const m = batch[k]!;
      if (m.code === FrontendCode.Parse) {
        const p = decodeParse(m.body);
        const analyses = s.services.cache.get(p.sql);
        (parsed ??= new Map()).set(p.name, analyses.length === 1 ? analyses[0] : undefined);
        continue;
      }
      if (m.code !== FrontendCode.Bind) continue;
      const name = bindStatementName(m.body);
      const f = filled?.(k);
      if (f instanceof Error) continue;
      const a =
        f?.analysis ?? (parsed?.has(name) ? parsed.get(name) : s.statements.get(name)?.analysis);
      if (a === undefined) continue;
      const d = admitNow(s, {
        analysis: a,
        params: (i) => bindParam(m.body, i),
        protocol: 'extended',
        purpose: 'describe',
      });
      if (d.kind === 'routed' && d.route.kind === 'node' && !d.route.flexible) return d.route.node;
    }
  } catch {
    // Errors surface in order when the batch gets there.
  }
  return undefined;
}
