// `tessera table distribute|reference|list`: declaring how a table is placed. A table the catalog
// does not name is global (home node only). Declaring does not move existing data.
import type { Command } from '../command.js';
import { UsageError } from '../errors.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag, parseTableName, stringFlag } from '../args.js';
import { tableView, tablesTable, toJson } from '../format.js';

export const tableCommands: Command[] = [
  {
    path: ['table', 'distribute'],
    summary: 'declare a sharded table: rows split by the hash of a key column',
    usage: ['table distribute SCHEMA.TABLE --column COLUMN --keyspace KEYSPACE'],
    description:
      'TABLE alone means public.TABLE. The column must have the key type of the keyspace; tables\n' +
      'of one keyspace are colocated, so joins on the key stay on one node.',
    examples: ['tessera table distribute public.orders --column tenant_id --keyspace tenants'],
    flags: {
      column: { type: 'string', value: 'COLUMN', description: 'the shard key column' },
      keyspace: {
        type: 'string',
        value: 'KEYSPACE',
        description: 'the keyspace whose ranges split the table',
      },
    },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const { schema, name } = parseTableName(args.positionals[0] ?? '');
      const keyColumn = stringFlag(args, 'column');
      const keyspace = stringFlag(args, 'keyspace');
      if (!keyColumn) throw new UsageError('--column is required');
      if (!keyspace) throw new UsageError('--keyspace is required');
      const res = await coordinator().admin.distributeTable({ schema, name, keyColumn, keyspace });
      io.out(
        `${schema}.${name} is sharded by ${keyColumn} in keyspace ${keyspace} (epoch ${res.epoch})\n`,
      );
      return 0;
    },
  },
  {
    path: ['table', 'reference'],
    summary: 'declare a reference table: a full copy on every node',
    usage: ['table reference SCHEMA.TABLE'],
    examples: ['tessera table reference public.plans', 'tessera table reference countries'],
    flags: {},
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const { schema, name } = parseTableName(args.positionals[0] ?? '');
      const res = await coordinator().admin.referenceTable({ schema, name });
      io.out(`${schema}.${name} is a reference table (epoch ${res.epoch})\n`);
      return 0;
    },
  },
  {
    path: ['table', 'list'],
    summary: 'list declared tables with kind, keyspace and key column',
    usage: ['table list [--json]'],
    examples: ['tessera table list', 'tessera table list --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const catalog = await coordinator().catalog.getCatalog({});
      const tables = catalog.tables.map(tableView);
      io.out(
        boolFlag(args, 'json') ? toJson({ epoch: catalog.epoch, tables }) : tablesTable(tables),
      );
      return 0;
    },
  },
];
