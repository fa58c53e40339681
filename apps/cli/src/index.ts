// The CLI as a library: its entry point and the Io seam, for tests and for tools that embed it.
export { main, COMMANDS } from './cli.js';
export { captureIo, processIo, type CapturedIo, type Io } from './io.js';
