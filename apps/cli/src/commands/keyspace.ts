// `tessera keyspace create|list`: the hash spaces that sharded tables are split over. Tables in
// one keyspace are colocated.
import type { Command } from '../command.js';
import { JSON_FLAG } from '../flags.js';
import { UsageError } from '../errors.js';
import { boolFlag, parseInt64, parsePositiveInt, stringFlag } from '../args.js';
import { parseKeyType } from '@tessera/proto';
import { KEY_TYPE_CHOICES, keyTypeName, keyspaceView, keyspacesTable, toJson } from '../format.js';

export const keyspaceCommands: Command[] = [
  {
    path: ['keyspace', 'create'],
    summary: 'create a keyspace, split into equal ranges over the data nodes',
    usage: ['keyspace create NAME --type TYPE [--ranges N] [--seed SEED]'],
    description:
      `TYPE is the type of the shard key: ${KEY_TYPE_CHOICES}. The N ranges (default 1) are owned\n` +
      'round-robin by the active data nodes. SEED (a signed 64-bit integer, default 0) is the seed\n' +
      'of the Postgres hash function.',
    examples: [
      'tessera keyspace create accounts --type bigint --ranges 8',
      'tessera keyspace create sessions --type uuid --seed 42',
    ],
    flags: {
      type: { type: 'string', value: 'TYPE', description: `key type: ${KEY_TYPE_CHOICES}` },
      ranges: {
        type: 'string',
        value: 'N',
        description: 'number of equal ranges to start with (default 1)',
      },
      seed: { type: 'string', value: 'SEED', description: 'hash seed, signed 64-bit (default 0)' },
    },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [name = ''] = args.positionals;
      const typeText = stringFlag(args, 'type');
      if (typeText === undefined)
        throw new UsageError(`--type is required (one of ${KEY_TYPE_CHOICES})`);
      let keyType;
      try {
        keyType = parseKeyType(typeText);
      } catch (e) {
        throw new UsageError(e instanceof Error ? e.message : String(e));
      }
      const rangesText = stringFlag(args, 'ranges');
      const ranges =
        rangesText === undefined ? 1 : parsePositiveInt(rangesText, '--ranges', 65_536);
      const seedText = stringFlag(args, 'seed');
      const seed = seedText === undefined ? 0n : parseInt64(seedText, '--seed');
      const res = await coordinator().admin.createKeyspace({ name, keyType, ranges, seed });
      io.out(
        `created keyspace ${name} (${keyTypeName(keyType)}, ${ranges} range${ranges === 1 ? '' : 's'}, epoch ${res.epoch})\n`,
      );
      return 0;
    },
  },
  {
    path: ['keyspace', 'list'],
    summary: 'list keyspaces with key type, seed and number of ranges',
    usage: ['keyspace list [--json]'],
    examples: ['tessera keyspace list', 'tessera keyspace list --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const catalog = await coordinator().catalog.getCatalog({});
      const keyspaces = catalog.keyspaces.map((k) => keyspaceView(k, catalog.ranges));
      io.out(
        boolFlag(args, 'json')
          ? toJson({ epoch: catalog.epoch, keyspaces })
          : keyspacesTable(keyspaces),
      );
      return 0;
    },
  },
];
