#!/usr/bin/env -S node --optimize-for-size
// The tessera-coordinator binary: runs the built entry point (npm run build first). V8 is set to
// favour memory: a coordinator's heap is small, and without the flag V8 lets it grow to about
// four times what is live between full collections, a saw of 25-70 MB under load; with it the
// saw is a fraction of that for a little more collector time (docs/soak.md, "Memory").
// `tessera up` and the soak pass the same flags.
import('../dist/main.js');
