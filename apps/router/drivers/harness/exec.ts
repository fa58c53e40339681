// Running a command to completion with a deadline: its own process group (so a timeout ends
// everything it started), output captured, how it ended said in one value.
import { spawn } from 'node:child_process';

export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  timeoutMs: number;
  input?: string;
}

export interface ExecResult {
  /** `ok`, `exit N`, `signal S` or `timeout`. */
  end: string;
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function exec(cmd: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGKILL');
    }, opts.timeoutMs);
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      clearTimeout(timer);
      // Whatever the program left running in its group (a pool's sockets, a sleeping child).
      killGroup('SIGKILL');
      const end = spawnError
        ? `spawn failed: ${spawnError.message}`
        : timedOut
          ? 'timeout'
          : code === 0
            ? 'ok'
            : code !== null
              ? `exit ${code}`
              : `signal ${signal ?? '?'}`;
      resolve({
        end,
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: Date.now() - started,
      });
    };
    child.once('error', (e) => finish(null, null, e));
    // A grandchild may still hold the pipes when the program exits: end the group on exit, so
    // that 'close' follows.
    child.once('exit', () => killGroup('SIGKILL'));
    child.once('close', (code, signal) => finish(code, signal));
  });
}

/** Runs a command that must succeed; throws with its stderr otherwise. */
export async function mustExec(
  cmd: string,
  args: readonly string[],
  opts: ExecOptions,
): Promise<ExecResult> {
  const r = await exec(cmd, args, opts);
  if (r.end !== 'ok')
    throw new Error(`${cmd} ${args.join(' ')}: ${r.end}\n${(r.stderr || r.stdout).trim()}`);
  return r;
}

/** Whether a command can be found on PATH. */
export async function onPath(cmd: string): Promise<boolean> {
  const r = await exec('sh', ['-c', `command -v ${cmd}`], { timeoutMs: 5_000 });
  return r.end === 'ok';
}
