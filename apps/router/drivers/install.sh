#!/usr/bin/env bash
# Installs what the driver matrix (npm run drivers) needs and is missing: the Debian packages of
# its clients. The Node.js drivers (pg, pg-cursor, pg-copy-streams, postgres) come from the root
# package.json (npm ci). Safe to run again: it installs nothing that is present, and runs
# `apt-get update` only when it has something to install.
set -euo pipefail

# Debian package, and a file that is there once it is installed.
packages=(
  "postgresql-client-15 /usr/lib/postgresql/15/bin/pg_dump"
  "postgresql-15 /usr/lib/postgresql/15/bin/pgbench"
  "python3-psycopg2 /usr/lib/python3/dist-packages/psycopg2/__init__.py"
  "python3-psycopg /usr/lib/python3/dist-packages/psycopg/__init__.py"
  "python3-psycopg-pool /usr/lib/python3/dist-packages/psycopg_pool/__init__.py"
  "python3-asyncpg /usr/lib/python3/dist-packages/asyncpg/__init__.py"
  "python3-sqlalchemy /usr/lib/python3/dist-packages/sqlalchemy/__init__.py"
  "python3-django /usr/lib/python3/dist-packages/django/__init__.py"
  "default-jdk-headless /usr/bin/javac"
  "libpostgresql-jdbc-java /usr/share/java/postgresql.jar"
  "libhikaricp-java /usr/share/java/HikariCP.jar"
  "libslf4j-java /usr/share/java/slf4j-nop.jar"
  "golang /usr/bin/go"
  "golang-github-jackc-pgx-v4-dev /usr/share/gocode/src/github.com/jackc/pgx/v4"
)

missing=()
for entry in "${packages[@]}"; do
  read -r pkg file <<<"$entry"
  [ -e "$file" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "drivers: every client is installed"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "drivers: missing ${missing[*]}; run this as root (apt-get install)" >&2
  exit 1
fi
echo "drivers: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
