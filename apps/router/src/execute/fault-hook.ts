// Tests only: TESSERA_FAULT_2PC names one step of the two-phase commit (a @tessera/twopc
// FaultPoint, e.g. `after-prepare:data1`) where the router SIGKILLs itself, so the kill matrix
// (src/kill-matrix.test.ts) can crash the real process at exactly that step. With
// TESSERA_FAULT_2PC_ACTION=stop it SIGSTOPs itself there instead, until the test has killed and
// restarted the coordinator and sends SIGCONT (a timed pause would race with how long that takes
// on a loaded machine). It loses commits on purpose: never set it in production.
import { writeSync } from 'node:fs';
import { createLogger, type Logger } from '@tessera/telemetry';
import type { FaultPoint } from '@tessera/twopc';
import { ConfigError } from '../errors.js';

export type FaultAction = 'kill' | 'stop';

export interface FaultSpec {
  point: FaultPoint;
  action: FaultAction;
}

const POINT = /^(before-prepare|after-decision|after-all|after-(prepare|commit):[A-Za-z0-9_-]+)$/;

/**
 * The fault the environment asks for, or undefined. A value that names no fault point throws:
 * a typo would otherwise make a kill test pass without killing anything.
 */
export function parseFault(env: NodeJS.ProcessEnv): FaultSpec | undefined {
  const point = env['TESSERA_FAULT_2PC'];
  if (point === undefined || point === '') return undefined;
  if (!POINT.test(point))
    throw new ConfigError(
      `TESSERA_FAULT_2PC "${point}" is not a fault point (before-prepare, after-prepare:<node>, after-decision, after-commit:<node>, after-all)`,
    );
  const action = env['TESSERA_FAULT_2PC_ACTION'] || 'kill';
  if (action !== 'kill' && action !== 'stop')
    throw new ConfigError(`TESSERA_FAULT_2PC_ACTION must be kill or stop, not "${action}"`);
  return { point: point as FaultPoint, action };
}

/** A commitAcrossNodes faultHook acting on `spec`; it logs first, so a test can see it fire. */
export function faultHookFor(spec: FaultSpec, log: Logger): (point: FaultPoint) => Promise<void> {
  // async only to fit the hook's type: either action has taken effect when it returns.
  return async (point) => {
    if (point !== spec.point) return;
    switch (spec.action) {
      case 'kill':
        log.warn({ point }, 'TESSERA_FAULT_2PC: SIGKILLing the router at this fault point');
        process.kill(process.pid, 'SIGKILL');
        return;
      case 'stop':
        // Frozen right here, sockets and all, until SIGCONT; then the commit carries on.
        log.warn({ point }, 'TESSERA_FAULT_2PC: SIGSTOPping the router at this fault point');
        process.kill(process.pid, 'SIGSTOP');
        return;
      default:
        return assertNever(spec.action);
    }
  };
}

function assertNever(x: never): never {
  throw new Error(`unexpected fault action ${String(x)}`);
}

const spec = parseFault(process.env);
// Read once when the router starts (this module loads with it), so an unset variable costs
// nothing per commit. The lines go to stdout like the router's log, but written synchronously:
// the router's own log is buffered, and a line still buffered when the process SIGKILLs itself
// is lost (the test reads these lines to know where the router stopped).
const faultLog =
  spec === undefined
    ? undefined
    : createLogger('router', { destination: { write: (line: string) => void writeSync(1, line) } });
faultLog?.warn(
  { point: spec?.point, action: spec?.action },
  'TESSERA_FAULT_2PC is set: this router crashes or stalls its commits on purpose (testing only, never in production)',
);

/** The hook the router passes to commitAcrossNodes: undefined unless TESSERA_FAULT_2PC is set. */
export const faultHook: ((point: FaultPoint) => Promise<void>) | undefined =
  spec === undefined || faultLog === undefined ? undefined : faultHookFor(spec, faultLog);
