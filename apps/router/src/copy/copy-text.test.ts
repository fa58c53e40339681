// COPY's text and CSV writing of one row: escapes, quoting, NULL strings, FORCE_QUOTE, `\.`.
// (conformance/copy-out.test.ts compares whole outputs with Postgres's own.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CopyTextEncoder, type CopyTextOptions } from './copy-text.js';

const TEXT: CopyTextOptions = {
  format: 'text',
  delimiter: '\t',
  null: '\\N',
  quote: '"',
  escape: '"',
  forceQuote: [],
};
const CSV: CopyTextOptions = { ...TEXT, format: 'csv', delimiter: ',', null: '' };

const row = (o: CopyTextOptions, values: (string | null)[]): string =>
  new CopyTextEncoder(o, values.length)
    .row(values.map((v) => (v === null ? null : Buffer.from(v))))
    .toString();

test('text: control characters, backslash and the delimiter escaped, NULL as written', () => {
  assert.equal(
    row(TEXT, ['a\tb', 'c\nd\re', 'back\\slash', null, '\b\f\v\x01']),
    'a\\tb\tc\\nd\\re\tback\\\\slash\t\\N\t\\b\\f\\v\x01\n',
  );
  assert.equal(row({ ...TEXT, delimiter: '|' }, ['a|b', 'x\ty']), 'a\\|b|x\\ty\n');
  assert.equal(row({ ...TEXT, delimiter: '\x01' }, ['a\x01b']), 'a\\\x01b\n');
});

test('csv: quoted when it must be, quotes doubled, the NULL string and \\. quoted', () => {
  assert.equal(
    row(CSV, ['plain', 'a,b', 'say "hi"', 'x\ny', '', null]),
    'plain,"a,b","say ""hi""","x\ny","",\n',
  );
  assert.equal(row(CSV, ['\\.']), '"\\."\n');
  assert.equal(row(CSV, ['\\.', 'x']), '\\.,x\n');
  assert.equal(row({ ...CSV, null: 'NA' }, ['NA', null]), '"NA",NA\n');
  assert.equal(row({ ...CSV, quote: "'", escape: '\\' }, ["it's", 'a\\b']), "'it\\'s',a\\b\n");
  assert.equal(row({ ...CSV, forceQuote: [false, true] }, ['1', '2']), '1,"2"\n');
});
