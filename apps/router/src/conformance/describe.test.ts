// ParameterDescription and RowDescription of statements the router runs on several nodes
// (scatter reads, UPDATE/DELETE across nodes, split multi-row INSERT, reference writes) compared
// with plain Postgres through asyncpg, which prepares each statement and checks its argument
// count and types against the ParameterDescription; the writes then run with its parameters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';
import { PYTHON, skipWithoutPython } from '../testing/python.js';

const run = promisify(execFile);
const PROGRAM = fileURLToPath(new URL('./describe.py', import.meta.url));

let c: TestCluster;
let plain: PgServer;

const SETUP = [
  'create table d (id bigint primary key, v int not null)',
  'create table r (id int primary key, v text)',
  `insert into d (id, v) values ${Array.from({ length: 12 }, (_, i) => `(${i + 1}, ${(i + 1) * 100})`).join(', ')}`,
  "insert into r (id, v) values (1, 'a')",
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'd', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [
        { name: 'd', kind: 'sharded', keyspace: 'd', keyColumn: 'id' },
        { name: 'r', kind: 'reference' },
      ],
    }),
    startPostgres({ name: 'describe-plain' }),
  ]);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const plainUrl = (): string => `postgres://postgres@127.0.0.1:${plain.port}/postgres`;

describe('Describe of statements on several nodes', () => {
  test(
    'asyncpg prepares them with the parameters and columns Postgres gives',
    { skip: skipWithoutPython('asyncpg', 'python3-asyncpg') },
    async () => {
      const out = async (url: string): Promise<string[]> =>
        (await run(PYTHON, [PROGRAM, url], { timeout: 120_000 })).stdout.trim().split('\n');
      const want = await out(plainUrl());
      const got = await out(c.url());
      assert.equal(got.length, want.length, got.join('\n'));
      for (let i = 0; i < want.length; i++) {
        // What Describe said (parameter and column types) must be Postgres's, byte for byte.
        if (want[i]!.includes('"params"')) assert.equal(got[i], want[i], `line ${i}`);
        // Running it: Postgres's rows; for a read across nodes (binary results, which asyncpg
        // asks for) an honest refusal, never asyncpg's own "expects N arguments".
        else if (want[i]!.includes('"op": "scatter')) {
          if (got[i] !== want[i]) assert.match(got[i]!, /"error": "0A000"/, `line ${i}`);
        } else assert.equal(got[i], want[i], `line ${i}`);
      }
    },
  );
});
