// The command line's own small parser. Ours rather than util.parseArgs because an option's value
// may start with a dash (`--at -4611686018427387904`, a negative hash), which parseArgs refuses.
import { UsageError } from './errors.js';

export interface FlagSpec {
  /** `string` flags take a value (`--x v` or `--x=v`); `boolean` flags take none. */
  type: 'string' | 'boolean';
  short?: string;
  /** Shown in help as `--name VALUE`. */
  value?: string;
  description: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export interface ParsedArgs {
  flags: Map<string, string | true>;
  positionals: string[];
}

/**
 * Splits argv into flags (by the given specs) and positionals. `--` ends the flags. Throws a
 * UsageError with a sentence for an unknown flag, a missing value, or a value on a boolean flag.
 */
export function parseArgs(argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const flags = new Map<string, string | true>();
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name);

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (/^-[a-zA-Z]$/.test(arg)) {
      name = byShort.get(arg.slice(1));
      if (name === undefined) throw new UsageError(`unknown option ${arg}`);
    } else {
      // Anything else, including "-5" or "ks:-9223372036854775808", is a positional.
      positionals.push(arg);
      continue;
    }
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown option --${name}`);
    if (spec.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`option --${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`option --${name} needs a value`);
      value = argv[++i] as string;
    }
    flags.set(name, value);
  }
  return { flags, positionals };
}

/** The value of a string flag, if given. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

export function boolFlag(args: ParsedArgs, name: string): boolean {
  return args.flags.get(name) === true;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Parses a signed 64-bit decimal (a hash bound or seed). Only plain decimal digits with an
 * optional minus sign: no `+`, hex, exponent, spaces or fractions, since BigInt() alone would
 * accept `0x10` and `""`.
 */
export function parseInt64(text: string, what: string): bigint {
  if (!/^-?\d+$/.test(text))
    throw new UsageError(`${what} must be a signed 64-bit decimal integer, not "${text}"`);
  const n = BigInt(text);
  if (n < INT64_MIN || n > INT64_MAX) {
    throw new UsageError(
      `${what} ${text} is outside the signed 64-bit range ${INT64_MIN}..${INT64_MAX}`,
    );
  }
  return n;
}

/** Parses a positive integer flag such as `--ranges`. */
export function parsePositiveInt(text: string, what: string, max = 1_000_000): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new UsageError(`${what} must be a whole number from 1 to ${max}, not "${text}"`);
  }
  return Number(text);
}

/** `KEYSPACE:LO` as `range split` takes it; the keyspace name may not be empty. */
export function parseRangeRef(text: string): { keyspace: string; lo: bigint } {
  const colon = text.indexOf(':');
  if (colon <= 0) {
    throw new UsageError(
      `"${text}" is not a range: write KEYSPACE:LO, e.g. tenants:-9223372036854775808`,
    );
  }
  return {
    keyspace: text.slice(0, colon),
    lo: parseInt64(text.slice(colon + 1), `the lo bound in "${text}"`),
  };
}

/** `schema.table`, or `table` meaning `public.table`. Quoting is not supported; dots split. */
export function parseTableName(text: string): { schema: string; name: string } {
  const parts = text.split('.');
  if (parts.length === 1 && parts[0]) return { schema: 'public', name: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { schema: parts[0], name: parts[1] };
  throw new UsageError(
    `"${text}" is not a table name: write SCHEMA.TABLE or TABLE (meaning public.TABLE)`,
  );
}

/** `host:port` with a port 1..65535. */
export function parseHostPort(text: string, what: string): { host: string; port: number } {
  const colon = text.lastIndexOf(':');
  const host = colon > 0 ? text.slice(0, colon).replace(/^\[(.*)\]$/, '$1') : '';
  const portText = colon > 0 ? text.slice(colon + 1) : '';
  const port = Number(portText);
  if (!host || !/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) {
    throw new UsageError(`${what} "${text}" is not of the form HOST:PORT (port 1..65535)`);
  }
  return { host, port };
}
