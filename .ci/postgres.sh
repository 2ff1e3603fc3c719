#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server (Debian's package) on loopback for the storage tests,
# TLS on with a throwaway CA (DIR/tls/ca.crt), and prints the URL they take
# (TOOLBELT_TEST_POSTGRES_URL). Installs the package when it is
# missing. Usage: .ci/postgres.sh DIR [PORT]; stop it with
# `runuser -u postgres -- pg_ctl -D DIR/data stop` (or let the machine go).
set -euo pipefail
dir=${1:?usage: .ci/postgres.sh DIR [PORT]}
port=${2:-54329}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi

# PostgreSQL refuses to run as root: the cluster belongs to the postgres user when we are root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

mkdir -p "$dir"
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
if [ ! -f "$dir/data/PG_VERSION" ]; then
  echo postgres > "$dir/pwfile"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir/pwfile"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres -A scram-sha-256 --pwfile="$dir/pwfile" >/dev/null
  rm -f "$dir/pwfile"
fi
# TLS too, for the sslmode=require tests: a throwaway CA ($dir/tls/ca.crt, which they trust
# through storage.ca_file) and a certificate for 127.0.0.1 it signed. Plain connections are
# still accepted.
tls="$dir/tls"
if [ ! -f "$tls/server.crt" ]; then
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=toolbelt test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 3650 \
    -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
  chmod 600 "$tls/server.key"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$tls"; fi
  chmod 755 "$tls"
  chmod 644 "$tls/ca.crt"
fi
if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key" start >/dev/null
fi
# A role and a database of the tests' own, with a password (as a team's server has).
PGPASSWORD=postgres "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SELECT 'CREATE ROLE toolbelt LOGIN PASSWORD ''toolbelt-test'''
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'toolbelt') \gexec
SELECT 'CREATE DATABASE toolbelt_test OWNER toolbelt'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'toolbelt_test') \gexec
SQL
echo "postgres://toolbelt:toolbelt-test@127.0.0.1:$port/toolbelt_test"
