#!/usr/bin/env -S node --no-opt --no-sparkplug --optimize-for-size
// The tessera-agent binary: runs the built entry point (npm run build first). An agent uses
// little CPU, so it runs without V8's baseline and optimizing compilers and with V8 set to favour
// memory: code compiled as faults reach new paths is most of what an agent's memory would
// otherwise grow by (docs/soak.md, "Memory"). `tessera up` and the soak pass the same flags.
import('../dist/main.js');
