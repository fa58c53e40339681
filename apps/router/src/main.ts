// The tessera-router command: configuration from flags and environment, then the router until
// SIGINT/SIGTERM. A bad configuration prints one sentence and exits 2.
import { ConfigError } from './errors.js';
import { USAGE, parseConfig } from './config.js';
import { startRouter } from './router.js';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`tessera-router: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return;
  }
  const router = await startRouter(parsed.config);
  const shutdown = (): void => {
    void router.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((e: unknown) => {
  process.stderr.write(`tessera-router: ${e instanceof Error ? e.message : String(e)}\n`);
  // An unusable TLS certificate is found at start: still a configuration error.
  process.exit(e instanceof ConfigError ? 2 : 1);
});
