// The Node.js flags a service's published bin asks for on its `#!` line. A launcher that runs a
// bin as `node BIN` (tessera up, the soak) passes them, so the service runs the same as when the
// bin is run directly, where `env -S` passes them.

const SHEBANG = /^#!\/usr\/bin\/env -S node((?: +--[a-z0-9-]+(?:=[^\s]+)?)*) *$/;

/** The flags after `node` on a `#!/usr/bin/env -S node FLAGS` first line; none for any other. */
export function shebangNodeFlags(text: string): string[] {
  const end = text.indexOf('\n');
  const m = SHEBANG.exec(end === -1 ? text : text.slice(0, end));
  return m ? m[1]!.trim().split(/ +/).filter(Boolean) : [];
}
