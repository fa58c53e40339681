// Looking ahead in an extended-protocol batch: the node its first pinned Bind goes to, so that
// statements any node could answer before it (a Describe, SELECT 1) go there too and the batch
// stays on one node. Only asked when such a statement comes first; Bind/Execute/Sync never asks.
import { FrontendCode, decodeParse } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import { typedParams } from '../routing/key-hash.js';
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
  let parsed: Map<string, { a: Analysis | undefined; types: readonly number[] }> | undefined;
  try {
    for (let k = from; k < batch.length; k++) {
      const m = batch[k]!;
      if (m.code === FrontendCode.Parse) {
        const p = decodeParse(m.body);
        const analyses = s.services.cache.get(p.sql);
        const a = analyses.length === 1 ? analyses[0] : undefined;
        (parsed ??= new Map()).set(p.name, { a, types: p.paramTypes });
        continue;
      }
      if (m.code !== FrontendCode.Bind) continue;
      const name = s.bindNames.of(m.body);
      const f = filled?.(k);
      if (f instanceof Error) continue;
      const rec = s.statements.get(name);
      const p = parsed?.get(name) ?? (rec && { a: rec.analysis, types: rec.paramTypes });
      const a = f?.analysis ?? p?.a;
      if (a === undefined) continue;
      const d = admitNow(s, {
        analysis: a,
        params: typedParams(m.body, p?.types ?? []),
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
