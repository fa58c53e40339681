// Type OIDs of the built-in types the merge reads, compares, computes or encodes, and their names
// for refusals.
export const OID = {
  bool: 16,
  bytea: 17,
  char: 18,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
} as const;

export function typeName(oid: number): string {
  for (const [name, value] of Object.entries(OID)) if (value === oid) return name;
  return `OID ${oid}`;
}

export function isIntegerType(oid: number): boolean {
  return oid === OID.int2 || oid === OID.int4 || oid === OID.int8;
}

export function isNumericFamily(oid: number): boolean {
  return isIntegerType(oid) || oid === OID.numeric;
}
