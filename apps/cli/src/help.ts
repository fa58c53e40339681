// Help text: the program's overview, one group's subcommands, one command's usage and examples.
import type { FlagSpecs } from './args.js';
import type { Command, CommandGroup } from './command.js';
import { COORDINATOR_FLAGS, HELP_FLAG } from './flags.js';

export function programHelp(commands: readonly Command[], groups: readonly CommandGroup[]): string {
  const visible = commands.filter((c) => !c.hidden);
  const width = Math.max(...visible.map((c) => c.path.join(' ').length));
  const lines = visible.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  return [
    'tessera: operate a Tessera cluster (one PostgreSQL database over many Postgres servers).',
    '',
    'Usage: tessera COMMAND [ARGS] [FLAGS]',
    '',
    'Commands:',
    ...lines,
    '',
    `Command groups: ${groups.map((g) => g.name).join(', ')}. Run \`tessera COMMAND --help\` for one command.`,
    '',
    'Flags of every command that talks to the coordinator:',
    ...flagLines(COORDINATOR_FLAGS),
    '',
    'Examples:',
    '  tessera up                      start a local cluster under ./.tessera',
    '  tessera status',
    '  tessera keyspace create accounts --type bigint --ranges 8',
    '  tessera down',
    '',
  ].join('\n');
}

export function groupHelp(group: CommandGroup, commands: readonly Command[]): string {
  const members = commands.filter((c) => c.path[0] === group.name && !c.hidden);
  return [
    `tessera ${group.name}: ${group.summary}`,
    '',
    'Usage:',
    ...members.flatMap((c) => c.usage.map((u) => `  tessera ${u}`)),
    '',
    'Commands:',
    ...members.map((c) => `  ${c.path.join(' ').padEnd(20)}  ${c.summary}`),
    '',
    `Run \`tessera ${group.name} COMMAND --help\` for one command.`,
    '',
  ].join('\n');
}

export function commandHelp(cmd: Command): string {
  const flags: FlagSpecs = {
    ...cmd.flags,
    ...(cmd.usesCoordinator ? COORDINATOR_FLAGS : {}),
    help: HELP_FLAG,
  };
  return [
    `tessera ${cmd.path.join(' ')}: ${cmd.summary}`,
    '',
    'Usage:',
    ...cmd.usage.map((u) => `  tessera ${u}`),
    ...(cmd.description ? ['', cmd.description] : []),
    '',
    'Flags:',
    ...flagLines(flags),
    ...(cmd.examples.length > 0 ? ['', 'Examples:', ...cmd.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n');
}

/** The short usage shown after a usage error. */
export function usageHint(cmd: Command | undefined): string {
  if (!cmd) return 'Run `tessera --help` for the list of commands.\n';
  return `Usage: ${cmd.usage.map((u) => `tessera ${u}`).join('\n       ')}\nRun \`tessera ${cmd.path.join(' ')} --help\` for more.\n`;
}

function flagLines(flags: FlagSpecs): string[] {
  const left = Object.entries(flags).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    const value = spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : '';
    return `${short}--${name}${value}`;
  });
  const width = Math.max(0, ...left.map((l) => l.length));
  return Object.values(flags).map(
    (spec, i) => `  ${(left[i] ?? '').padEnd(width)}  ${spec.description}`,
  );
}
