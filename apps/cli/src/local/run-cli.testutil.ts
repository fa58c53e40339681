// The local-cluster tests run the real CLI in-process, in an environment of their own: no
// TESSERA_COORDINATOR or TESSERA_HOME (which would point at another cluster) and no PGPASSWORD.
import { main } from '../cli.js';
import { captureIo } from '../io.js';

export function testEnv(): Record<string, string | undefined> {
  const e: Record<string, string | undefined> = { ...process.env };
  delete e.TESSERA_COORDINATOR;
  delete e.TESSERA_HOME;
  delete e.PGPASSWORD;
  return e;
}

/** `tessera ARGV` with `cwd` as the current directory; its exit code and what it printed. */
export async function runCli(
  cwd: string,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(testEnv(), cwd);
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}
