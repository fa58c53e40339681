// The leaf may not use every client parameter (a LIMIT or HAVING parameter is applied at the
// router), and Postgres rejects a Bind with more values than the statement uses; so the leaf's
// parameters are renumbered densely and the plan lists which client parameter feeds each one.
import { walk } from './nodes.js';

/** Renumbers `$n` in `tree` in place to $1..$k; returns the 0-based client index of each. */
export function renumberParams(tree: unknown): number[] {
  const refs: { number?: number }[] = [];
  walk(tree, (tag, body) => {
    if (tag === 'ParamRef') refs.push(body as { number?: number });
  });
  const used = [...new Set(refs.map((r) => r.number ?? 0))].sort((a, b) => a - b);
  for (const r of refs) r.number = used.indexOf(r.number ?? 0) + 1;
  return used.map((n) => n - 1);
}
