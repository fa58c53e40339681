// COPY: direction, columns and the effective options used to split or merge its data stream.
import { test } from 'node:test';
import { initSqlParser, analyze, copyOptionsSql } from './index.js';
import { assertSubset } from './subset.testutil.js';

await initSqlParser();

const cases: Array<[string, Record<string, unknown>]> = [
  [
    'copy t from stdin',
    {
      kind: 'copy_from',
      source: 'stdin',
      columns: undefined,
      targetIndex: 0,
      tables: [{ name: 't', role: 'target' }],
      options: { format: 'text', delimiter: '\t', null: '\\N', header: false },
    },
  ],
  [
    "copy s.t (a, b) from stdin with (format csv, header true, delimiter ';')",
    {
      columns: ['a', 'b'],
      tables: [{ schema: 's', name: 't' }],
      options: { format: 'csv', delimiter: ';', header: true, null: '', quote: '"', escape: '"' },
    },
  ],
  [
    "copy t from stdin csv header delimiter ';' null 'NA' quote '''' escape '\\' force not null a, b",
    {
      options: {
        format: 'csv',
        header: true,
        delimiter: ';',
        null: 'NA',
        quote: "'",
        escape: '\\',
        forceNotNull: ['a', 'b'],
      },
    },
  ],
  ['copy t from stdin (format binary)', { options: { format: 'binary' } }],
  [
    "copy t from stdin (format text, delimiter '|', null '')",
    { options: { delimiter: '|', null: '' } },
  ],
  ['copy t from stdin (header match, format csv)', { options: { header: 'match' } }],
  [
    "copy t from stdin (format csv, force_null (a), encoding 'latin1', freeze, default '\\D')",
    { options: { forceNull: ['a'], encoding: 'latin1', freeze: true, defaultString: '\\D' } },
  ],
  ['copy t from stdin (on_error ignore)', { options: { onError: 'ignore' } }],
  [
    "copy t from '/tmp/data.csv' (format csv) where a > 1",
    { source: 'file', filename: '/tmp/data.csv', hasWhere: true },
  ],
  ["copy t from program 'zcat x.gz'", { source: 'program', filename: 'zcat x.gz' }],
  [
    'copy t to stdout',
    {
      kind: 'copy_to',
      destination: 'stdout',
      tableIndex: 0,
      query: undefined,
      tables: [{ name: 't', role: 'read' }],
    },
  ],
  [
    'copy t (a) to stdout (format csv, force_quote *)',
    { columns: ['a'], options: { format: 'csv', forceQuote: '*' } },
  ],
  ["copy t to '/tmp/out'", { destination: 'file', filename: '/tmp/out' }],
  [
    'copy (select * from t where id = 1) to stdout with csv',
    {
      kind: 'copy_to',
      tableIndex: undefined,
      query: {
        kind: 'select',
        sql: 'select * from t where id = 1',
        where: { pins: [{ table: 't', column: 'id' }] },
      },
      options: { format: 'csv' },
      tables: [{ name: 't', scope: 'nested' }],
    },
  ],
  [
    'copy (delete from t where id = 1 returning *) to stdout',
    { query: { kind: 'delete' }, tables: [{ name: 't', role: 'target' }] },
  ],
];

for (const [sql, expected] of cases) {
  test(`copy: ${sql}`, () => assertSubset(analyze(sql), expected));
}

test('copyOptionsSql writes the options out so that they parse back the same', () => {
  for (const options of [
    '',
    " (format csv, header, delimiter ';', null 'NA', force_quote (a, \"B c\"))",
    " csv header quote '''' escape '\\' force quote *",
    ' (format binary)',
    " (format text, encoding 'latin1', header false)",
  ]) {
    const a = analyze(`copy t to stdout${options}`);
    if (a?.kind !== 'copy_to') throw new Error('not a copy');
    const again = analyze(`copy (select 1) to stdout${copyOptionsSql(a.options)}`);
    if (again?.kind !== 'copy_to') throw new Error('not a copy');
    assertSubset(again.options, { ...a.options });
  }
});
