// The rows of the binary-format differential test (binary.test.ts): a table with a column of
// every type the merge reads (and a few it only passes on), NULLs, NaN and infinities, negative
// and huge numerics, dates and timestamps before 2000, BC and infinite; and a table of values
// that are equal but print differently (0 and -0, 1.0 and 1.00, 1 mon and 30 days), used where
// which of two equal values comes out does not matter (ORDER BY with a tie-breaker, counts).

export const DDL = [
  `create table wide (
     id int8 primary key, g int4 not null, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
     n numeric, nm numeric(14,3), t text, vc varchar(20), bc char(6), nam name, b bool,
     d date, tm time, ts timestamp, tz timestamptz, iv interval, u uuid, by bytea,
     j json, jb jsonb, ch "char", arr int4[], tarr text[], ip inet, r int4range)`,
  `create table tricky (id int8 primary key, f8 float8, n numeric, iv interval, jb jsonb, tz timestamptz)`,
  'create table ref (code int4 primary key, label text)',
];

/** Made on the plain server, then copied through the router as VALUES (INSERT ... SELECT is not split). */
export const WIDE_ROWS = `insert into wide select i, i % 5,
     case i when 1 then -32768 when 2 then 32767 else nullif((i * 37) % 200 - 100, 0) end,
     case i when 3 then -2147483648 when 4 then 2147483647
       else case when i % 13 = 0 then null else (i * 7919) % 100000 - 50000 end end,
     case i when 5 then -9223372036854775808 when 6 then 9223372036854775807
       else case when i % 17 = 0 then null else i * 1234567890123 * (case when i % 2 = 0 then -1 else 1 end) end end,
     case i when 7 then 'NaN' when 8 then 'Infinity' when 9 then '-Infinity'
       else case when i % 10 = 0 then null else (i * 0.37 - 10)::float4 end end,
     case i when 7 then 'NaN' when 8 then 'Infinity' when 9 then '-Infinity' when 18 then 1e300
       when 19 then 5e-324 else case when i % 10 = 0 then null else i * 1.1 - 40 end end,
     case i when 11 then 'NaN' when 16 then 'Infinity' when 21 then '-Infinity' when 12 then 1e100
       when 17 then -123456789012345678901234567890.123456789 when 22 then 0.000000001
       else case when i % 9 = 0 then null else i * 12.345 - 300 end end,
     case when i % 7 = 0 then null else i * 3.25 - 100 end,
     case when i % 19 = 0 then null
       else (array['alpha','Beta','gamma','Ünïcode','zeta','','a b','émile'])[1 + i % 8] || (i % 3) end,
     'v' || (i % 13),
     (array['a','ab','b','a b','abc'])[1 + i % 5],
     ('n' || (i % 6))::name,
     case when i % 3 = 0 then null else i % 2 = 0 end,
     case i when 20 then 'infinity' when 25 then '-infinity' when 30 then '0044-03-15 BC'
       else date '1999-12-20' + (i * 17) % 900 end,
     case i when 40 then '24:00:00' else time '00:00' + i * interval '17 min 3.25 sec' end,
     case i when 20 then 'infinity' when 35 then '-infinity' when 45 then '1850-01-01 12:00'
       when 50 then '0100-01-01 00:00 BC'
       else timestamp '1998-06-01' + i * interval '23 days 7 hours 13 minutes 1.5 seconds' end,
     case i when 21 then 'infinity' when 36 then '-infinity' when 46 then '1850-06-01 00:00+00'
       else timestamptz '1999-03-20 00:00+00' + i * interval '11 days 5 hours 1 minute' end,
     case i when 10 then '1 year 2 mons' when 15 then '-3 mons 4 days 01:02:03.5'
       else i * interval '1 day 3 hours' - interval '10 days' end,
     md5(i::text)::uuid,
     substring(decode(md5(i::text), 'hex') from 1 for i % 5),
     json_build_object('i', i, 'g', i % 5),
     case i % 6 when 0 then to_jsonb(i) when 1 then to_jsonb('s' || i) when 2 then jsonb_build_array(i, 'x', null)
       when 3 then jsonb_build_object('k', i % 4, 'v', array[i % 3, 2]) when 4 then 'null'::jsonb
       else to_jsonb(i % 2 = 0) end,
     chr(97 + i % 5)::"char",
     array[i, i * 2, null],
     array['x' || i, null],
     ('10.0.' || (i % 7) || '.' || i)::inet,
     int4range(i, i + 10)
   from generate_series(1, 80) i`;

export const OTHER_ROWS = [
  `insert into tricky values
     (1, 0, 1.0, '1 mon', '{"a": 1.0}', '2021-10-31 00:30:00+00'),
     (2, '-0', 1.00, '30 days', '{"a": 1.00}', '2021-10-31 01:30:00+00'),
     (3, 'NaN', 'NaN', '720 hours', '[1.0, 2]', '2021-10-31 00:30:00+00'),
     (4, '-Infinity', '-Infinity', '-1 mon', '[1, 2.00]', '-infinity'),
     (5, 'Infinity', 'Infinity', '-30 days', '1', 'infinity'),
     (6, 0, 1, '1 mon', '1.0', '2021-10-31 01:30:00+00'),
     (7, -0.0, 0.000, '0', '{}', '1999-12-31 23:00:00+00'),
     (8, 1e-300, 0, '00:00:00', '[]', '2000-01-01 00:00:00+00'),
     (9, null, null, null, null, null),
     (10, 'NaN', 'NaN', '1 day', 'true', '1850-06-01 00:00+00'),
     (11, 2, 2.000, '24:00:00', 'false', '2000-01-01 01:00:00+01'),
     (12, -0, -0.00, '-00:00:00', 'null', '2000-01-01 00:00:00+00')`,
  `insert into ref select i, 'label ' || i from generate_series(0, 4) i`,
];

/** Columns ORDER BY is tried on, one at a time (id breaks ties). */
export const ORDERED_COLUMNS = [
  'i2',
  'i4',
  'i8',
  'f4',
  'f8',
  'n',
  'nm',
  't',
  'vc',
  'bc',
  'nam',
  'b',
  'd',
  'tm',
  'ts',
  'tz',
  'iv',
  'u',
  'by',
  'jb',
  'ch',
] as const;

/** Columns tried as GROUP BY and DISTINCT keys (no equal values of different bytes in wide). */
export const GROUPED_COLUMNS = [...ORDERED_COLUMNS, 'g'] as const;

/** Numeric columns every aggregate runs over. */
export const NUMERIC_COLUMNS = ['i2', 'i4', 'i8', 'n', 'nm'] as const;

/** Columns min and max run over beyond the numeric ones. */
export const EXTREME_COLUMNS = ['f4', 'f8', 't', 'vc', 'bc', 'd', 'tm', 'ts', 'tz', 'iv'] as const;
