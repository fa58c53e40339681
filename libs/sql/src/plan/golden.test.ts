// Golden plans: testdata/plans/*.sql planned against the test catalog, explained, and compared with
// the .plan file beside it, so a planning change shows up as a diff. UPDATE_GOLDEN=1 rewrites them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { initSqlParser } from '../parser.js';
import { planRead } from './plan.js';
import { explainPlan } from './explain.js';
import { testCatalog } from './testcatalog.testutil.js';

await initSqlParser();

const dir = join(import.meta.dirname, '..', 'testdata', 'plans');
const update = process.env['UPDATE_GOLDEN'] === '1';
const inputs = readdirSync(dir)
  .filter((f) => f.endsWith('.sql'))
  .sort();

test('there are at least 20 golden plan shapes', () => {
  const plans = inputs.filter((f) => !f.includes('-refuse-'));
  assert.ok(plans.length >= 20, `${plans.length} plan shapes`);
});

for (const file of inputs) {
  test(`golden plan: ${file}`, () => {
    const sql = readFileSync(join(dir, file), 'utf8').trim();
    const actual = `-- ${sql}\n${explainPlan(planRead(sql, testCatalog()))}`;
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
  });
}
