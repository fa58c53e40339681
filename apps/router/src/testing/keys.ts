// Helpers for tests that need rows on a given node or a metric's value: keys by owner, read from
// the router's own catalog (so a test never guesses where a key lives), and /metrics sums.
import { hashKeyText } from '@tessera/pg-hash';
import type { RunningRouter } from '../router.js';

/** The integer keys 1..`count` of `table`'s keyspace, by the node that owns each. */
export function keysByNode(
  router: RunningRouter,
  table: string,
  count = 300,
): Map<string, number[]> {
  const view = router.catalog()?.table('public', table);
  if (view?.kind !== 'sharded') throw new Error(`${table} is not a sharded table in the catalog`);
  const ks = view.keyspace;
  const out = new Map<string, number[]>();
  for (let k = 1; k <= count; k++) {
    const node = ks.ownerOf(hashKeyText(ks.keyType, String(k), ks.seed));
    let list = out.get(node);
    if (list === undefined) out.set(node, (list = []));
    list.push(k);
  }
  return out;
}

/** The sum of every sample on the metrics endpoint at `port` whose line matches `pattern`. */
export async function metricSum(port: number, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (pattern.test(line)) sum += Number(line.split(' ').at(-1));
  return sum;
}
