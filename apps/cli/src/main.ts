// Process entry of the `tessera` binary (bin/tessera.js loads it).
import { main } from './cli.js';
import { processIo } from './io.js';

const code = await main(process.argv.slice(2), processIo());
// Let pending stdout writes drain instead of calling process.exit(), which could cut a long
// --json document short when stdout is a pipe. Long-running commands (supervise, up
// --foreground) resolve only when they are done.
process.exitCode = code;
