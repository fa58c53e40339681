// Parsing: syntax errors as SqlError 42601 with Postgres's position, multi-statement splitting with
// exact slices, and non-ASCII text.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser, isSqlParserReady, analyze, analyzeAll, SqlError } from './index.js';

await initSqlParser();

test('initSqlParser is idempotent and marks the parser ready', async () => {
  await initSqlParser();
  assert.equal(isSqlParserReady(), true);
});

const syntaxErrors: Array<[string, string, number]> = [
  ['selec 1', 'syntax error at or near "selec"', 1],
  ['select 1 from', 'syntax error at end of input', 14],
  ['select * from t where', 'syntax error at end of input', 22],
  ["select 'é' frm t", 'syntax error at or near "t"', 16],
  ['select 1; selec 2', 'syntax error at or near "selec"', 11],
  ["select 'unterminated", 'unterminated quoted string at or near "\'unterminated"', 8],
  ['insert into t values (1,', 'syntax error at end of input', 25],
];

for (const [sql, message, position] of syntaxErrors) {
  test(`syntax error: ${sql}`, () => {
    assert.throws(
      () => analyzeAll(sql),
      (e: unknown) => {
        assert.ok(e instanceof SqlError);
        assert.equal(e.sqlstate, '42601');
        assert.equal(e.message, message);
        assert.equal(e.position, position);
        return true;
      },
    );
  });
}

test('multi-statement strings split into one analysis per statement with exact slices', () => {
  const input = "select 1;  insert into t values ('a;b');\nupdate t set a = 1 where id = $1 ; ;";
  const all = analyzeAll(input);
  assert.deepEqual(
    all.map((a) => a.kind),
    ['select', 'insert', 'update'],
  );
  assert.deepEqual(
    all.map((a) => a.sql),
    ['select 1', "insert into t values ('a;b')", 'update t set a = 1 where id = $1'],
  );
  for (const a of all) assert.equal(input.slice(a.location, a.location + a.sql.length), a.sql);
});

test('statement slices are exact with non-ASCII text before them', () => {
  const input = "select 'héllo😀'; select * from \"tÄble\" where id = 'ß'";
  const all = analyzeAll(input);
  assert.deepEqual(
    all.map((a) => a.sql),
    ["select 'héllo😀'", 'select * from "tÄble" where id = \'ß\''],
  );
  assert.equal(input.slice(all[1]?.location), all[1]?.sql);
  assert.equal(all[1]?.tables[0]?.name, 'tÄble');
});

test('slices start at the first token (leading comments dropped) and end before the semicolon', () => {
  const all = analyzeAll('/* a */ select 1 /* b */ ;\n\n-- c\nselect 2;\n');
  assert.deepEqual(
    all.map((a) => a.sql),
    ['select 1 /* b */', 'select 2'],
  );
});

test('empty input has no statements', () => {
  assert.deepEqual(analyzeAll(''), []);
  assert.deepEqual(analyzeAll(' ; ;; '), []);
  assert.throws(() => analyze(''), SqlError);
});

test('analysis before initSqlParser() fails with a clear error', async () => {
  const { spawnSync } = await import('node:child_process');
  const script =
    "import { analyze } from './src/index.ts'; try { analyze('select 1'); } catch (e) { console.log(e.message); }";
  const r = spawnSync(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: new URL('..', import.meta.url).pathname,
      encoding: 'utf8',
    },
  );
  assert.match(r.stdout, /await initSqlParser\(\)/);
});
