#!/usr/bin/env node
// The tessera-router command: runs the compiled router (build first with `npm run build`).
import '../dist/main.js';
