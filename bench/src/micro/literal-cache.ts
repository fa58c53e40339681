// Micro-benchmark of the analysis cache on literal SQL (pgbench -S as psycopg2 would send it):
// CPU per statement for a full parse (every new literal misses an exact-text cache), an exact-text
// hit (a prepared statement), and a shape hit (AnalysisCache with normalizeLiterals). Run:
//   node --conditions=development --import tsx bench/src/micro/literal-cache.ts [statements]
// The router's own `-S -M simple` run (npm run bench -- overhead) is the number that counts.
import { AnalysisCache, initSqlParser } from '@tessera/sql';

const n = Number(process.argv[2] ?? 200_000);
const SHAPES = [
  (i: number) => `SELECT abalance FROM pgbench_accounts WHERE aid = ${i};`,
  (i: number) =>
    `SELECT "app_order"."id", "app_order"."total" FROM "app_order" WHERE ("app_order"."tenant_id" = ${i} AND "app_order"."status" = 'paid') ORDER BY "app_order"."id" DESC LIMIT 21`,
  (i: number) => `INSERT INTO events (tenant_id, kind, body) VALUES (${i}, 'click', 'x${i}')`,
];

function measure(label: string, run: (i: number) => void, count: number): void {
  for (let i = 0; i < Math.min(count, 2000); i++) run(i); // warm-up
  const start = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) run(i + 10_000);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(start);
  const us = (cpu.user + cpu.system) / count;
  console.log(
    `${label.padEnd(44)} ${us.toFixed(2).padStart(8)} µs CPU/stmt  ${((count / ms) * 1000).toFixed(0).padStart(9)} stmt/s`,
  );
}

await initSqlParser();
for (const [k, shape] of SHAPES.entries()) {
  console.log(`shape ${k + 1}: ${shape(1)}`);
  const exactOnly = new AnalysisCache(10_000);
  measure(
    '  new literal, exact-text cache (full parse)',
    (i) => exactOnly.get(shape(i)),
    Math.min(n, 20_000),
  );
  const same = new AnalysisCache(10_000);
  measure('  same text, exact-text cache (hit)', () => same.get(shape(7)), n);
  const shapes = new AnalysisCache(10_000, { normalizeLiterals: true });
  measure('  new literal, normalizeLiterals (shape hit)', (i) => shapes.get(shape(i)), n);
  if (shapes.misses > 1) console.log(`  (shape cache parsed ${shapes.misses} times)`);
}
