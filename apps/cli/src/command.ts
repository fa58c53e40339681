// What a command is: its words, help text, flags, and the function that runs it. Each command
// group's file exports a list of these; cli.ts finds one and runs it.
import type { FlagSpecs, ParsedArgs } from './args.js';
import type { Coordinator } from './coordinator.js';
import type { Io } from './io.js';

export interface CommandContext {
  args: ParsedArgs;
  io: Io;
  /** Clients for the coordinator named by --coordinator / TESSERA_COORDINATOR / the local cluster. */
  coordinator(): Coordinator;
}

export interface Command {
  /** The words that name it: ['status'], ['nodes', 'add']. */
  path: readonly string[];
  summary: string;
  /** Usage lines without the leading `tessera `. */
  usage: readonly string[];
  /** A paragraph or two shown under the usage in `--help`. */
  description?: string;
  examples: readonly string[];
  flags: FlagSpecs;
  /** Bounds on the number of positional arguments. */
  positionals: { min: number; max: number };
  /** Whether it talks to the coordinator (adds --coordinator and --token to its help). */
  usesCoordinator: boolean;
  /** Internal commands (the supervisor) are left out of help. */
  hidden?: boolean;
  /** Resolves with the exit code. */
  run(ctx: CommandContext): Promise<number>;
}

/** Help text about one command group, shown by `tessera nodes --help`. */
export interface CommandGroup {
  name: string;
  summary: string;
}
