// The link proxy as its own process, started by the harness inside a node's network namespace
// (so a partition of the node cuts it off too): `--listen HOST:PORT --target HOST:PORT`. It
// reads rules as JSON lines on stdin ({"rules": [...]}) and answers each with a JSON line on
// stdout; it exits when stdin closes (the harness is gone).
import { createInterface } from 'node:readline';
import { TcpProxy, type LinkRule } from './tcp-proxy.js';

function hostPort(s: string | undefined, flag: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(s ?? '');
  if (!m) {
    process.stderr.write(`link proxy: ${flag} must be HOST:PORT\n`);
    process.exit(2);
  }
  return { host: m[1]!, port: Number(m[2]) };
}

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const listen = hostPort(flag('--listen'), '--listen');
const target = hostPort(flag('--target'), '--target');
const say = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

const proxy = new TcpProxy(() => target);
proxy.listen(listen.host, listen.port).then(
  (port) => say({ msg: 'proxy listening', listen: `${listen.host}:${port}` }),
  (e: unknown) => {
    process.stderr.write(
      `link proxy: cannot listen on ${listen.host}:${listen.port}: ${String(e)}\n`,
    );
    process.exit(1);
  },
);
createInterface({ input: process.stdin })
  .on('line', (line) => {
    try {
      const { rules } = JSON.parse(line) as { rules: LinkRule[] };
      proxy.setRules(rules);
      say({ msg: 'rules set', rules: rules.length });
    } catch (e) {
      say({ msg: 'bad rules', error: String(e) });
    }
  })
  .on('close', () => process.exit(0));
