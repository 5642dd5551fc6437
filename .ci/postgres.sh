#!/usr/bin/env bash
# Start this machine's PostgreSQL cluster (Debian's pg_ctlcluster) and make sure the test role
# and database exist. Idempotent: safe to run when the server is already up.
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
cluster=main
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version $cluster"; then
  pg_createcluster "$version" "$cluster"
fi
if ! pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1==v && $2==c {print $4}' | grep -q online; then
  pg_ctlcluster "$version" "$cluster" start
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p 5432
as_postgres() { runuser -u postgres -- "$@"; }
as_postgres psql -q -v ON_ERROR_STOP=1 <<'SQL'
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'awl') THEN
    CREATE ROLE awl LOGIN PASSWORD 'awl' CREATEDB;
  END IF;
END
$$;
SQL
if ! as_postgres psql -tAc "SELECT 1 FROM pg_database WHERE datname='awl_test'" | grep -q 1; then
  as_postgres createdb -O awl awl_test
fi
echo "PostgreSQL $version ready: postgresql+psycopg://awl:awl@127.0.0.1:5432/awl_test"
