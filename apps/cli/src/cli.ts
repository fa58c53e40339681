// The program: find the command named by argv, parse its flags, run it, and turn whatever went
// wrong into one sentence on stderr and an exit code (2 usage, 1 failure). main() takes an Io and
// returns the code, so tests run it in-process exactly as a user would.
import { parseArgs, stringFlag } from './args.js';
import type { Command, CommandGroup } from './command.js';
import {
  connectCoordinator,
  coordinatorAddress,
  describeRpcError,
  isRpcError,
  type Coordinator,
} from './coordinator.js';
import { UsageError } from './errors.js';
import { COORDINATOR_FLAGS, HELP_FLAG } from './flags.js';
import { commandHelp, groupHelp, programHelp, usageHint } from './help.js';
import type { Io } from './io.js';
import { jobsCommands } from './commands/jobs.js';
import { keyspaceCommands } from './commands/keyspace.js';
import { localCommands } from './commands/local.js';
import { clusterMoveCommands, nodeMoveCommands, rangeMoveCommands } from './commands/moves.js';
import { nodesCommands } from './commands/nodes.js';
import { rangeCommands } from './commands/range.js';
import { statusCommands } from './commands/status.js';
import { tableCommands } from './commands/table.js';
import { txnCommands } from './commands/txn.js';

export const COMMANDS: readonly Command[] = [
  ...statusCommands,
  ...nodesCommands,
  ...nodeMoveCommands,
  ...keyspaceCommands,
  ...rangeCommands,
  ...rangeMoveCommands,
  ...jobsCommands,
  ...clusterMoveCommands,
  ...tableCommands,
  ...txnCommands,
  ...localCommands,
];

export const GROUPS: readonly CommandGroup[] = [
  { name: 'nodes', summary: 'the Postgres servers the cluster is spread over' },
  { name: 'keyspace', summary: 'hash spaces that sharded tables are split over' },
  { name: 'range', summary: 'slices of a keyspace and their owners' },
  { name: 'table', summary: 'how tables are placed: sharded, reference, or global' },
  { name: 'txn', summary: 'cross-node transactions left in doubt by a crash' },
  { name: 'jobs', summary: "the mover's jobs: moves, splits, merges, rebalances, drains" },
];

/** Every flag that takes a value, so a value is never mistaken for a command word. */
const VALUE_FLAGS = new Set(
  [...COMMANDS.flatMap((c) => Object.entries(c.flags)), ...Object.entries(COORDINATOR_FLAGS)]
    .filter(([, spec]) => spec.type === 'string')
    .map(([name]) => `--${name}`),
);

/** Indices of the non-flag words in argv (flag values skipped). */
function wordIndices(argv: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') break;
    if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      if (VALUE_FLAGS.has(a)) i++;
      continue;
    }
    out.push(i);
  }
  return out;
}

const isHelp = (a: string) => a === '--help' || a === '-h';

/** Runs the `tessera` command line; resolves with the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const words = wordIndices(argv);
  const w0 = words[0] === undefined ? undefined : argv[words[0]];
  const w1 = words[1] === undefined ? undefined : argv[words[1]];

  if (w0 === undefined) {
    if (argv.some(isHelp) || argv.length === 0) {
      io.out(programHelp(COMMANDS, GROUPS));
      return 0;
    }
    return usage(
      io,
      new UsageError(`no command given (${argv.join(' ')} is only flags)`),
      undefined,
    );
  }
  if (w0 === 'help') return help(argv.filter((_, i) => words.includes(i)).slice(1), io);

  const group = GROUPS.find((g) => g.name === w0);
  const path = group ? [w0, w1] : [w0];
  const cmd = COMMANDS.find(
    (c) => c.path.length === path.length && c.path.every((p, i) => p === path[i]),
  );
  if (!cmd) {
    if (group && w1 === undefined) {
      if (argv.some(isHelp)) {
        io.out(groupHelp(group, COMMANDS));
        return 0;
      }
      io.err(`tessera: ${group.name} needs a subcommand\n${groupHelp(group, COMMANDS)}`);
      return 2;
    }
    const what = group ? `${w0} ${w1}` : w0;
    return usage(io, new UsageError(`unknown command "${what}"`), undefined, group);
  }

  const used = new Set(words.slice(0, path.length));
  const rest = argv.filter((_, i) => !used.has(i));
  if (rest.some(isHelp)) {
    io.out(commandHelp(cmd));
    return 0;
  }

  let coordinator: Coordinator | undefined;
  let address = '';
  try {
    const args = parseArgs(rest, {
      ...cmd.flags,
      ...(cmd.usesCoordinator ? COORDINATOR_FLAGS : {}),
      help: HELP_FLAG,
    });
    const n = args.positionals.length;
    if (n > cmd.positionals.max)
      throw new UsageError(`unexpected argument "${args.positionals[cmd.positionals.max]}"`);
    if (n < cmd.positionals.min) throw new UsageError(`${cmd.path.join(' ')} needs more arguments`);
    address = coordinatorAddress(stringFlag(args, 'coordinator'), io);
    const token = stringFlag(args, 'token') ?? io.env.TESSERA_ADMIN_TOKEN;
    return await cmd.run({
      args,
      io,
      coordinator: () => (coordinator ??= connectCoordinator(address, token)),
    });
  } catch (e) {
    if (e instanceof UsageError) return usage(io, e, cmd);
    io.err(`tessera: ${failureSentence(e, address)}\n`);
    if (io.env.TESSERA_DEBUG && e instanceof Error && e.stack) io.err(`${e.stack}\n`);
    return 1;
  } finally {
    coordinator?.close();
  }
}

function usage(io: Io, e: UsageError, cmd: Command | undefined, group?: CommandGroup): number {
  io.err(`tessera: ${e.message}\n${group && !cmd ? groupHelp(group, COMMANDS) : usageHint(cmd)}`);
  return 2;
}

function help(words: string[], io: Io): number {
  if (words.length === 0) {
    io.out(programHelp(COMMANDS, GROUPS));
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.path.join(' ') === words.join(' '));
  if (cmd) {
    io.out(commandHelp(cmd));
    return 0;
  }
  const group = GROUPS.find((g) => g.name === words[0]);
  if (group && words.length === 1) {
    io.out(groupHelp(group, COMMANDS));
    return 0;
  }
  return usage(io, new UsageError(`no help for unknown command "${words.join(' ')}"`), undefined);
}

/** One sentence for anything a command threw (usage errors are handled before). */
function failureSentence(e: unknown, address: string): string {
  if (isRpcError(e)) return describeRpcError(e, address);
  // CliError, pgctl's PgBinariesNotFound (which says how to install Postgres), and the rest.
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
