// @tessera/config: reading a service's flags and TESSERA_* environment variables.
export {
  ConfigError,
  readFlags,
  intSetting,
  boolSetting,
  optionalText,
  type FlagSpec,
  type FlagTable,
  type RawSettings,
  type ReadResult,
} from './flags.js';
export { shebangNodeFlags } from './node-flags.js';
