// Golden plans of the query shapes planned with every PlanOptions feature on (testdata/shapes):
// expressions over aggregates, = ANY(ARRAY[...]), transaction time, colocated subqueries, CTEs and
// UNION ALL. The base plans (testdata/plans, no options) must not change. UPDATE_GOLDEN=1 rewrites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { initSqlParser } from '../parser.js';
import { ALL_PLAN_FEATURES, planRead } from './plan.js';
import { explainPlan } from './explain.js';
import { testCatalog } from './testcatalog.testutil.js';

await initSqlParser();

const dir = join(import.meta.dirname, '..', 'testdata', 'shapes');
const update = process.env['UPDATE_GOLDEN'] === '1';
const inputs = readdirSync(dir)
  .filter((f) => f.endsWith('.sql'))
  .sort();

for (const file of inputs) {
  test(`golden shape: ${file}`, () => {
    const sql = readFileSync(join(dir, file), 'utf8').trim();
    const actual = `-- ${sql}\n${explainPlan(planRead(sql, testCatalog(), ALL_PLAN_FEATURES))}`;
    const goldenPath = join(dir, file.replace(/\.sql$/, '.plan'));
    if (update || !existsSync(goldenPath)) {
      writeFileSync(goldenPath, actual);
      if (!update)
        assert.fail(`${goldenPath} was missing and has been written; review it and run again`);
      return;
    }
    assert.equal(
      actual,
      readFileSync(goldenPath, 'utf8'),
      `${file}: plan differs (UPDATE_GOLDEN=1 to accept)`,
    );
    assert.equal(
      file.includes('-refuse-'),
      actual.includes('\nRefuse: '),
      `${file}: name says refuse`,
    );
  });
}
