// The CLI's two failure kinds, which map to exit codes at the edge (main): a usage mistake (2)
// and an operation that could not be done (1).

/** The command line itself is wrong: unknown command or flag, malformed argument. Exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command was understood but failed; the message is shown as one sentence. Exit 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}
