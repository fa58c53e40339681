import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from '@tessera/sql';
import { fixtureCatalog } from './fixture-catalog.js';
import { ownedRowsOnly } from './owned-rows.js';

const MOVE = {
  keyspace: 'tenants',
  lo: 0n,
  hi: 2n ** 63n - 1n,
  jobId: 9n,
  source: 'n2',
  target: 'n1',
};

describe('ownedRowsOnly', () => {
  before(() => initSqlParser());

  it('sends a statement as it came when the catalog has no move', () => {
    const sql = 'select * from orders';
    assert.equal(ownedRowsOnly(fixtureCatalog(), 'n1', sql), sql);
  });

  it("restricts each node to its own ranges of the moving keyspace's tables", () => {
    const catalog = fixtureCatalog({ moves: [MOVE] });
    const sql = 'select count(*) from orders o join profiles p on true';
    assert.equal(
      ownedRowsOnly(catalog, 'n1', sql),
      `SELECT count(*) FROM ( SELECT * FROM orders WHERE hashint8extended(tenant_id, '0'::int8) BETWEEN '-9223372036854775808'::int8 AND '-1'::int8 ) AS o JOIN profiles AS p ON true`,
    );
    assert.match(
      ownedRowsOnly(catalog, 'n2', sql),
      /BETWEEN '0'::int8 AND '9223372036854775807'::int8/,
    );
    assert.match(ownedRowsOnly(catalog, 'home', sql), /SELECT \* FROM orders WHERE false/);
    assert.equal(ownedRowsOnly(catalog, 'n1', 'select * from logs'), 'select * from logs');
  });

  it('qualifies the key of an UPDATE target by its name', () => {
    const catalog = fixtureCatalog({ moves: [MOVE] });
    assert.match(
      ownedRowsOnly(catalog, 'n1', 'update items set x = 1'),
      /^UPDATE items SET x = 1 WHERE hashint8extended\(items\.tenant_id, '0'::int8\)/,
    );
  });
});
