// COPY data splitting: rows across chunk boundaries at every byte, escapes, CSV quoting, header.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CopyRowSplitter, type CopyTextFormat } from './copy-rows.js';

const TEXT: CopyTextFormat = {
  format: 'text',
  delimiter: '\t',
  null: '\\N',
  quote: '"',
  escape: '"',
  header: false,
};
const CSV: CopyTextFormat = {
  format: 'csv',
  delimiter: ',',
  null: '',
  quote: '"',
  escape: '"',
  header: false,
};

function split(
  fmt: CopyTextFormat,
  keyIndex: number,
  chunks: string[],
): { rows: string[]; keys: (string | null)[]; header?: string } {
  const rows: string[] = [];
  const keys: (string | null)[] = [];
  const s = new CopyRowSplitter(fmt, keyIndex, (row, key) => {
    rows.push(row.toString());
    keys.push(key);
  });
  for (const c of chunks) s.push(Buffer.from(c));
  s.end();
  return { rows, keys, ...(s.header ? { header: s.header.toString() } : {}) };
}

describe('CopyRowSplitter', () => {
  test('text rows, escapes and NULL, split at every byte', () => {
    const data = '1\ta\\tb\n2\t\\N\n\\N\tx\n4\\\t5\tz\n';
    const whole = split(TEXT, 0, [data]);
    assert.deepEqual(whole.keys, ['1', '2', null, '4\t5']);
    assert.equal(whole.rows.join(''), data);
    for (let i = 1; i < data.length; i++) {
      assert.deepEqual(split(TEXT, 0, [data.slice(0, i), data.slice(i)]), whole, `split at ${i}`);
    }
    assert.deepEqual(split(TEXT, 1, [data]).keys.slice(0, 2), ['a\tb', null]);
  });

  test('the end marker stops the data; a last row without newline counts', () => {
    assert.deepEqual(split(TEXT, 0, ['1\n2\n\\.\n3\n']).keys, ['1', '2']);
    assert.deepEqual(split(TEXT, 0, ['1\n2']).keys, ['1', '2']);
  });

  test('csv quoting with newlines and doubled quotes, header kept apart', () => {
    const data = 'id,name\n1,"a,b"\n"2","x\ny"\n"3""",\n,5\n';
    const whole = split({ ...CSV, header: true }, 0, [data]);
    assert.equal(whole.header, 'id,name\n');
    assert.deepEqual(whole.keys, ['1', '2', '3"', null]);
    for (let i = 1; i < data.length; i++) {
      assert.deepEqual(
        split({ ...CSV, header: true }, 0, [data.slice(0, i), data.slice(i)]),
        whole,
        `split at ${i}`,
      );
    }
    assert.deepEqual(split(CSV, 1, ['1,"a,b"\n']).keys, ['a,b']);
  });

  test('octal and hex escapes', () => {
    assert.deepEqual(split(TEXT, 0, ['\\101\\x42c\n']).keys, ['ABc']);
  });
});
