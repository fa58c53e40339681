#!/usr/bin/env bash
# The pg_dump / pg_restore program: a backup of the database (pg_dump -Fc) restored into an empty
# plain Postgres database, and a backup of a plain database restored into this one (the way a
# migration onto Tessera goes), each compared by content. DRV_URL is the database under test and
# DRV_URL_RESTORE an empty one beside it; DRV_SCRATCH_COPY_URL and DRV_SCRATCH_SOURCE_URL are
# empty databases on a plain Postgres.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${DRV_WORK:-$(mktemp -d)}"
echo "@version $(pg_dump --version), $(pg_restore --version)"

op() { printf '%s\t%s\n' "$1" "$2"; }

# Every table's rows in key order, as a count and a digest, the view's rows, the sequence: one
# psql session, each query's output after a marker line.
contents() {
  local url=$1 dir
  dir=$(mktemp -d "$work/contents.XXXX")
  psql -X -A -t -q -v VERBOSITY=sqlstate -d "$url" > "$dir/all" 2>&1 <<'SQL'
\echo @@currencies
select * from currencies order by code;
\echo @@accounts
select * from accounts order by id;
\echo @@entries
select * from entries order by account_id, id;
\echo @@audit
select * from audit order by id;
\echo @@account_totals
select * from account_totals order by currency;
\echo @@invoice_numbers
select last_value from invoice_numbers;
SQL
  awk -v dir="$dir" '/^@@/ { f = dir "/" substr($0, 3); printf "" > f; next } { print >> f }' "$dir/all"
  local out="" t
  for t in currencies accounts entries audit account_totals; do
    if [ ! -f "$dir/$t" ] || grep -q 'ERROR' "$dir/$t"; then
      out+="$t=ERROR "
    else
      out+="$t=$(grep -c . "$dir/$t")/$(head -c -1 "$dir/$t" | md5sum | cut -c1-8) "
    fi
  done
  local seq=ERROR
  [ -f "$dir/invoice_numbers" ] && ! grep -q ERROR "$dir/invoice_numbers" && seq=$(cat "$dir/invoice_numbers")
  echo "${out}invoice_numbers=${seq:-ERROR}"
}

# pg_restore's exit status, how many errors it ignored, and the first statement that failed.
restore_outcome() {
  local code=$1 log=$2
  local ignored failed
  ignored=$(grep -o 'errors ignored on restore: [0-9]*' "$log" | awk '{print $NF}')
  failed=$(grep -m1 -A1 'could not execute query' "$log" | grep -o 'Command was: .*' | cut -c14- | cut -c1-80)
  if [ "$code" = 0 ]; then echo "ok"; else echo "ERROR exit=$code ignored=${ignored:-?}${failed:+ first: $failed}"; fi
}

# The objects a schema-only dump creates, in its order (what a reviewer of a backup looks at).
objects() {
  grep -E '^(CREATE|ALTER TABLE ONLY|    ADD CONSTRAINT)' "$1" | sed -e 's/ (.*//' -e 's/ AS$//' | tr '\n' ';' | sed 's/;$//'
}

# Every statement runs; the SQLSTATEs of those that failed say which (psql's line numbers).
psql -X -q -v VERBOSITY=sqlstate -f "$here/dump-data.sql" > "$work/setup.log" 2>&1
errors=$(grep -o ':[0-9]*: ERROR:  [0-9A-Z]*' "$work/setup.log" | sed -E 's/^:([0-9]+): ERROR:  (.*)/ERROR \2 (line \1)/' | paste -sd ' ')
op setup "${errors:-ok}"
op contents "$(contents "$DRV_URL")"

pg_dump -Fc -f "$work/db.dump" "$DRV_URL" > "$work/dump.log" 2>&1
code=$?
op dump.custom "$([ $code = 0 ] && echo ok || echo "ERROR exit=$code $(grep -m1 -o 'Query was: .*' "$work/dump.log" | cut -c1-80)")"
pg_dump --schema-only -f "$work/schema.sql" "$DRV_URL" > "$work/dump-schema.log" 2>&1
code=$?
op dump.schema "$([ $code = 0 ] && objects "$work/schema.sql" || echo "ERROR exit=$code")"

if [ -s "$work/db.dump" ]; then
  pg_restore --no-owner -d "$DRV_SCRATCH_COPY_URL" "$work/db.dump" > "$work/restore-copy.log" 2>&1
  op restore.to_plain "$(restore_outcome $? "$work/restore-copy.log")"
else
  op restore.to_plain "ERROR no dump"
fi
op restore.to_plain.contents "$(contents "$DRV_SCRATCH_COPY_URL")"

psql -X -q -v ON_ERROR_STOP=1 -d "$DRV_SCRATCH_SOURCE_URL" -f "$here/dump-data.sql" > "$work/source.log" 2>&1 \
  || { echo "the plain source database could not be set up:" >&2; cat "$work/source.log" >&2; exit 1; }
pg_dump -Fc -f "$work/plain.dump" "$DRV_SCRATCH_SOURCE_URL" || exit 1
pg_restore --no-owner -d "$DRV_URL_RESTORE" "$work/plain.dump" > "$work/restore-in.log" 2>&1
op restore.from_plain "$(restore_outcome $? "$work/restore-in.log")"
op restore.from_plain.contents "$(contents "$DRV_URL_RESTORE")"
