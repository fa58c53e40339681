// Service configuration from flags and TESSERA_* environment variables, flags winning: one reader
// for every service, so each spells, defaults and refuses its settings the same way.

/** Bad configuration, as one sentence; a service prints it and exits 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface FlagSpec<K extends string> {
  /** The environment variable that sets the same value. */
  env: string;
  /** The setting it fills. */
  key: K;
  /** Takes no value on the command line (`--tls-required`); the environment spells it 1/true. */
  isSwitch?: boolean;
}

export type FlagTable<K extends string> = Readonly<Record<string, FlagSpec<K>>>;

/** The raw text of every setting that was given, by key. */
export type RawSettings<K extends string> = ReadonlyMap<K, string>;

export type ReadResult<K extends string> = { help: true } | { help: false; raw: RawSettings<K> };

/**
 * Reads `argv` (without node and script) over the environment: `--flag value`, `--flag=value`,
 * switches, `--help`/`-h`. An empty environment variable counts as unset. Throws ConfigError.
 */
export function readFlags<K extends string>(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  flags: FlagTable<K>,
): ReadResult<K> {
  const raw = new Map<K, string>();
  for (const spec of Object.values(flags)) {
    const v = env[spec.env];
    if (v !== undefined && v !== '') raw.set(spec.key, v);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { help: true };
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const spec = flags[name];
    if (!spec) throw new ConfigError(`unknown argument "${arg}"; run with --help to see the flags`);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (spec.isSwitch) value = 'true';
    else {
      value = argv[++i];
      if (value === undefined) throw new ConfigError(`flag ${name} needs a value`);
    }
    raw.set(spec.key, value);
  }
  return { help: false, raw };
}

/** A whole number within [min, max], or `def` when not given. */
export function intSetting<K extends string>(
  raw: RawSettings<K>,
  key: K,
  flag: string,
  def: number,
  min: number,
  max: number,
): number {
  const text = raw.get(key);
  if (text === undefined) return def;
  if (!/^\d+$/.test(text.trim()))
    throw new ConfigError(`${flag} must be a whole number, not "${text}"`);
  const n = Number(text.trim());
  if (n < min || n > max)
    throw new ConfigError(`${flag} must be between ${min} and ${max}, not ${n}`);
  return n;
}

/** true/false (also 1/0, on/off, yes/no); false when not given. */
export function boolSetting<K extends string>(raw: RawSettings<K>, key: K, flag: string): boolean {
  const text = raw.get(key);
  if (text === undefined) return false;
  const t = text.trim().toLowerCase();
  if (t === 'true' || t === '1' || t === 'on' || t === 'yes') return true;
  if (t === 'false' || t === '0' || t === 'off' || t === 'no' || t === '') return false;
  throw new ConfigError(`${flag} must be true or false, not "${text}"`);
}

/** The text, or undefined when absent or empty. */
export function optionalText(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}
