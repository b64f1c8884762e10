#!/usr/bin/env bash
# A PostgreSQL server on localhost for the history store's tests (`make postgres`): Debian's package, installed
# when its server is missing, a cluster created and started when none runs, a role and a database `asyncbench`.
# Idempotent: a second call finds everything there and only says so. Needs root (CI and the dev machine are).
set -euo pipefail
bash "$(dirname "$0")/debian_packages.sh" install postgres
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h | grep -q .; then
    pg_createcluster "$version" main >/dev/null
fi
cluster=$(pg_lsclusters -h | awk 'NR==1 {print $1" "$2}')
pg_lsclusters -h | awk 'NR==1 {print $4}' | grep -q online || pg_ctlcluster $cluster start
psql_as_postgres() { su postgres -c "psql -qtAc \"$1\""; }
psql_as_postgres "SELECT 1 FROM pg_roles WHERE rolname='asyncbench'" | grep -q 1 ||
    psql_as_postgres "CREATE ROLE asyncbench LOGIN PASSWORD 'asyncbench'"
psql_as_postgres "SELECT 1 FROM pg_database WHERE datname='asyncbench'" | grep -q 1 ||
    su postgres -c "createdb -O asyncbench asyncbench"
port=$(pg_lsclusters -h | awk 'NR==1 {print $3}')
echo "PostgreSQL $version ready on localhost:$port"
