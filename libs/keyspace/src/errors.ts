// Typed errors of the keyspace package, each with a stable code; callers convert them at their
// edge (a refused catalog at load, an unknown keyspace in a request).

/** A catalog (or part of one) that breaks an invariant of DESIGN.md section 2; never half-used. */
export class CatalogInvalidError extends Error {
  override readonly name = 'CatalogInvalidError';
  readonly code = 'CATALOG_INVALID';
}

/** A lookup by a keyspace name the snapshot does not have. */
export class UnknownKeyspaceError extends Error {
  override readonly name = 'UnknownKeyspaceError';
  readonly code = 'UNKNOWN_KEYSPACE';
  readonly keyspace: string;

  constructor(keyspace: string) {
    super(`keyspace "${keyspace}" does not exist`);
    this.keyspace = keyspace;
  }
}
