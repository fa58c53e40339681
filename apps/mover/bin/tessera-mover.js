#!/usr/bin/env node
// The tessera-mover binary: runs the built entry point (npm run build first).
import('../dist/main.js');
