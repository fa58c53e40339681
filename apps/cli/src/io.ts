// Where a command's output goes. main() takes an Io so tests run commands in-process and read
// exactly what a user would have seen.

export interface Io {
  /** Writes to standard output (the text includes its newlines). */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Standard input and output are a terminal (progress bars, confirmation questions). */
  isTerminal?: boolean;
  /** Asks a question on the terminal and resolves with the answer line ('' at end of input). */
  ask?(question: string): Promise<string>;
}

export function processIo(): Io {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTerminal: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    async ask(question) {
      process.stderr.write(question);
      const { createInterface } = await import('node:readline');
      const rl = createInterface({ input: process.stdin, terminal: false });
      try {
        return await new Promise<string>((resolve) => {
          rl.once('line', resolve);
          rl.once('close', () => resolve(''));
        });
      } finally {
        rl.close();
      }
    },
  };
}

/** An Io that records everything, for tests and for callers that want the text. */
export interface CapturedIo extends Io {
  stdout: string;
  stderr: string;
}

export function captureIo(
  env: Record<string, string | undefined> = {},
  cwd = process.cwd(),
): CapturedIo {
  const io: CapturedIo = {
    stdout: '',
    stderr: '',
    out: (text) => void (io.stdout += text),
    err: (text) => void (io.stderr += text),
    env,
    cwd,
  };
  return io;
}
