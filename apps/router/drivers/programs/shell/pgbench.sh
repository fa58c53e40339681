#!/usr/bin/env bash
# The pgbench program: pgbench's own initialisation (server-side and client-side data generation,
# then primary keys that include bid, made by hand: pgbench's own leave it out),
# its built-in TPC-B in the three query modes and its select-only script, a TPC-B script that pins
# each transaction to its branch (what a sharded application would write), and after each run the
# TPC-B invariant: sum of branches' balances = tellers' = accounts' = history's deltas. The tables
# are distributed by bid (declared by the harness). libpq environment from the harness.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${DRV_WORK:-$(mktemp -d)}"
SCALE=2
echo "@version $(pgbench --version)"

op() { printf '%s\t%s\n' "$1" "$2"; }

# pgbench's exit status and, on failure, the statement it was running (pgbench's own words, not
# the server's message).
outcome() {
  local code=$1 log=$2
  if [ "$code" = 0 ]; then
    echo "ok"
  else
    local query
    query=$(grep -m1 -o 'Query was: .*' "$log" | cut -c12- | tr -s ' ' | cut -c1-120)
    echo "ERROR exit=$code${query:+ query: $query}"
  fi
}

# The transactions pgbench counted, the failed ones, and the clients it aborted.
run_summary() {
  local code=$1 log=$2
  local processed failed aborted
  processed=$(grep -m1 -o 'number of transactions actually processed: [0-9/]*' "$log" | awk '{print $NF}')
  failed=$(grep -m1 -o 'number of failed transactions: [0-9]*' "$log" | awk '{print $NF}')
  aborted=$(grep -c 'aborted in command' "$log")
  local state="processed=${processed:-none} failed=${failed:-none} aborted=$aborted"
  if [ "$code" = 0 ]; then echo "$state"; else echo "ERROR exit=$code $state"; fi
}

sql() { psql -X -A -t -q -v ON_ERROR_STOP=1 -c "$1" 2>&1; }

# The TPC-B invariant, each sum read on its own (a scatter read per table).
sums() {
  local b t a h n
  b=$(sql 'select sum(bbalance) from pgbench_branches') || { echo "ERROR reading branches"; return; }
  t=$(sql 'select sum(tbalance) from pgbench_tellers') || { echo "ERROR reading tellers"; return; }
  a=$(sql 'select sum(abalance) from pgbench_accounts') || { echo "ERROR reading accounts"; return; }
  h=$(sql 'select sum(delta) from pgbench_history') || { echo "ERROR reading history"; return; }
  n=$(sql 'select count(*) from pgbench_history') || { echo "ERROR counting history"; return; }
  local consistent=false
  [ "$b" = "$t" ] && [ "$t" = "$a" ] && [ "$a" = "${h:-0}" ] && consistent=true
  [ -z "$h" ] && [ "$b" = 0 ] && [ "$t" = 0 ] && [ "$a" = 0 ] && consistent=true
  echo "consistent=$consistent history_rows=$n"
}

# pgbench -i's primary keys (aid, tid) leave out the shard key bid, which the router refuses
# (each node could check only its own rows): the data is loaded without them (-I ...v, no p)
# and the keys are made with bid in them, on both sides alike.
keys() {
  sql 'alter table pgbench_branches add primary key (bid)' >/dev/null &&
    sql 'alter table pgbench_tellers add primary key (bid, tid)' >/dev/null &&
    sql 'alter table pgbench_accounts add primary key (bid, aid)' >/dev/null &&
    sql 'create index on pgbench_accounts (aid)' >/dev/null &&
    sql 'create index on pgbench_tellers (tid)' >/dev/null && echo ok || echo "ERROR making the keys"
}

pgbench -i -s "$SCALE" -I dtGv -q > "$work/init-server.log" 2>&1
op init.server "$(outcome $? "$work/init-server.log")"

pgbench -i -s "$SCALE" -I dtgv -q > "$work/init.log" 2>&1
op init.client "$(outcome $? "$work/init.log")"
op init.keys "$(keys)"
op init.rows "$(sql 'select count(*) from pgbench_accounts') accounts, $(sql 'select count(*) from pgbench_branches') branches"

for mode in simple extended prepared; do
  pgbench -n -M "$mode" -c 4 -j 2 -t 30 --random-seed=7 > "$work/tpcb-$mode.log" 2>&1
  op "tpcb.$mode" "$(run_summary $? "$work/tpcb-$mode.log")"
  op "tpcb.$mode.sums" "$(sums)"
done

pgbench -n -S -M prepared -c 4 -j 2 -t 50 --random-seed=7 > "$work/select-only.log" 2>&1
op select_only.prepared "$(run_summary $? "$work/select-only.log")"

# TPC-B with every statement of a transaction pinned to its branch's node.
cat > "$work/tpcb-pinned.sql" <<EOF
\set bid random(1, $SCALE)
\set aid (:bid - 1) * 100000 + random(1, 100000)
\set tid (:bid - 1) * 10 + random(1, 10)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
EOF
pgbench -n -M prepared -c 4 -j 2 -t 30 --random-seed=7 -f "$work/tpcb-pinned.sql" > "$work/tpcb-pinned.log" 2>&1
op tpcb.pinned "$(run_summary $? "$work/tpcb-pinned.log")"
op tpcb.pinned.sums "$(sums)"
