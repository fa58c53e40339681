// `tessera range list|split`: the slices of a keyspace's hash space and who owns them. A plain
// split is a catalog split only; with --move-to the mover splits and moves the upper half.
import type { Command } from '../command.js';
import { CliError } from '../errors.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag, parseInt64, parseRangeRef, stringFlag } from '../args.js';
import { rangeView, rangesTable, sortedRanges, toJson } from '../format.js';
import { WAIT_FLAG, YES_FLAG, confirm, splitJob } from './job-requests.js';
import { afterSubmit, submit } from './moves.js';

export const rangeCommands: Command[] = [
  {
    path: ['range', 'list'],
    summary: 'list the ranges (lo, hi, owner, state) of one keyspace or all',
    usage: ['range list [KEYSPACE] [--json]'],
    examples: ['tessera range list', 'tessera range list tenants --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [keyspace] = args.positionals;
      const catalog = await coordinator().catalog.getCatalog({});
      if (keyspace !== undefined && !catalog.keyspaces.some((k) => k.name === keyspace)) {
        throw new CliError(`no keyspace named "${keyspace}"`);
      }
      const ranges = sortedRanges(
        catalog.ranges.filter((r) => keyspace === undefined || r.keyspace === keyspace),
      ).map(rangeView);
      io.out(
        boolFlag(args, 'json') ? toJson({ epoch: catalog.epoch, ranges }) : rangesTable(ranges),
      );
      return 0;
    },
  },
  {
    path: ['range', 'split'],
    summary: 'split a range in two (both halves keep its owner; --move-to moves the upper one)',
    usage: [
      'range split KEYSPACE:LO [--at HASH]',
      'range split KEYSPACE:LO [--at HASH] --move-to NODE [--yes] [--wait] [--json]',
    ],
    description:
      'LO is the lo bound of the range to split, HASH the first hash value of the new upper half\n' +
      '(default: the midpoint). Both are signed 64-bit decimal integers, as `tessera range list`\n' +
      'prints them. Without --move-to it is a catalog change only; with it, a mover job splits and\n' +
      'then moves the upper half to NODE online (like `tessera range move`).',
    examples: [
      'tessera range split tenants:-9223372036854775808',
      'tessera range split tenants:-9223372036854775808 --at -4611686018427387904',
      'tessera range split tenants:-9223372036854775808 --move-to data3 --yes --wait',
    ],
    flags: {
      at: {
        type: 'string',
        value: 'HASH',
        description: 'first hash of the upper half (default: midpoint)',
      },
      'move-to': { type: 'string', value: 'NODE', description: 'then move the upper half to NODE' },
      yes: YES_FLAG,
      wait: WAIT_FLAG,
      json: JSON_FLAG,
    },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const { keyspace, lo } = parseRangeRef(args.positionals[0] ?? '');
      const atText = stringFlag(args, 'at');
      const at = atText === undefined ? undefined : parseInt64(atText, '--at');
      const moveTo = stringFlag(args, 'move-to');
      if (moveTo !== undefined) {
        const ctx = { args, io, coordinator };
        await confirm(ctx, `Split ${keyspace}:${lo} and move the upper half to ${moveTo}?`);
        return afterSubmit(
          ctx,
          await submit(ctx, splitJob(keyspace, lo, at, moveTo)),
          `splitting ${keyspace}:${lo}`,
        );
      }
      const c = coordinator();
      const res = await c.admin.splitRange(
        at === undefined ? { keyspace, lo } : { keyspace, lo, at },
      );
      // Show the two halves: the caller usually wants the new bounds next.
      const catalog = await c.catalog.getCatalog({});
      const halves = sortedRanges(
        catalog.ranges.filter((r) => r.keyspace === keyspace && r.lo >= lo),
      ).slice(0, 2);
      io.out(`split ${keyspace}:${lo} (epoch ${res.epoch})\n${rangesTable(halves.map(rangeView))}`);
      return 0;
    },
  },
];
