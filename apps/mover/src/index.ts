// Public surface of @tessera/mover: run a mover in-process (tests, bench, `tessera up`), parse its
// configuration the way the binary does, and the job kinds' step lists (for whoever submits jobs).
export { startMover, type RunningMover, type StartOptions } from './mover.js';
export { parseConfig, defaultConfig, USAGE, type MoverConfig, type ParsedArgs } from './config.js';
export { MOVE_STEPS, MOVE_PHASES, type MoveSpec, type MovePlan } from './move/spec.js';
export { JOB_KINDS } from './kinds/registry.js';
