// Flags several commands share, defined once so help reads the same everywhere.
import type { FlagSpec } from './args.js';

export const HELP_FLAG: FlagSpec = { type: 'boolean', short: 'h', description: 'show this help' };

export const JSON_FLAG: FlagSpec = {
  type: 'boolean',
  description: 'print one JSON document (int64 values as strings)',
};

export const COORDINATOR_FLAGS = {
  coordinator: {
    type: 'string',
    value: 'HOST:PORT[,HOST:PORT]',
    description:
      'coordinator addresses; calls go to the active one (env TESSERA_COORDINATOR; default: the local cluster, else 127.0.0.1:7400)',
  },
  token: {
    type: 'string',
    value: 'TOKEN',
    description: 'admin bearer token (env TESSERA_ADMIN_TOKEN)',
  },
} as const satisfies Record<string, FlagSpec>;

export const DIR_FLAG: FlagSpec = {
  type: 'string',
  value: 'DIR',
  description: 'local cluster directory (env TESSERA_HOME; default ./.tessera)',
};
