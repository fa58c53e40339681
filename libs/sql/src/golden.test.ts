// Golden files: testdata/analysis/*.sql analysed, compared with the .json beside it, so any change
// in analysis shows up as a diff in review. UPDATE_GOLDEN=1 rewrites the .json files.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { initSqlParser, analyzeAll } from './index.js';

await initSqlParser();

const dir = join(import.meta.dirname, 'testdata', 'analysis');
const update = process.env['UPDATE_GOLDEN'] === '1';

const inputs = readdirSync(dir)
  .filter((f) => f.endsWith('.sql'))
  .sort();

test('there are golden inputs', () => assert.ok(inputs.length >= 20));

for (const file of inputs) {
  test(`golden: ${file}`, () => {
    const sql = readFileSync(join(dir, file), 'utf8');
    const actual = JSON.stringify(analyzeAll(sql), null, 2) + '\n';
    const goldenPath = join(dir, file.replace(/\.sql$/, '.json'));
    if (update || !existsSync(goldenPath)) {
      writeFileSync(goldenPath, actual);
      if (!update)
        assert.fail(`${goldenPath} was missing and has been written; review it and run again`);
      return;
    }
    assert.equal(
      actual,
      readFileSync(goldenPath, 'utf8'),
      `${file}: analysis differs (UPDATE_GOLDEN=1 to accept)`,
    );
  });
}
