#!/usr/bin/env bash
# The psql program: psql.sql through psql as a person or a deploy script runs it (libpq
# environment from the harness), then a statement cancelled with Ctrl-C (SIGINT). One line per
# operation (ops.awk).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
echo "@version $(psql --version)"
{
  psql -X -v VERBOSITY=sqlstate -v ON_ERROR_STOP=0 -P pager=off -f "$here/psql.sql" 2>&1
  echo "@op cancel.sigint"
  # Ctrl-C well after the statement started (on a loaded machine connecting can take a while).
  psql -X -v VERBOSITY=sqlstate -c 'select pg_sleep(15)' 2>&1 &
  pid=$!
  sleep 2
  kill -INT "$pid"
  wait "$pid"
  echo "psql exit $?"
} | awk -f "$here/ops.awk"
