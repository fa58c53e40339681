#!/usr/bin/env node
// The tessera-agent binary: runs the built entry point (npm run build first).
import('../dist/main.js');
