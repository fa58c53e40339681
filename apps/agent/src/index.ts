// Public surface of @tessera/agent: run an agent in-process (tests, `tessera up`) and parse its
// configuration the way the binary does.
export { startAgent, type RunningAgent, type StartOptions } from './agent.js';
export { parseConfig, USAGE, type AgentConfig, type AgentMode, type ParsedArgs } from './config.js';
export { FENCE_MARKER } from './control.js';
export { agentArgv, type AgentLaunch } from './launch.js';
