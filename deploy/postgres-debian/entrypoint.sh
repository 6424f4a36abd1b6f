#!/bin/sh
# First start: initdb with POSTGRES_USER / POSTGRES_PASSWORD (scram), create POSTGRES_DB. Then run
# the server, listening on every address, password required from the network.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
USER_NAME="${POSTGRES_USER:-postgres}"
DB_NAME="${POSTGRES_DB:-$USER_NAME}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --username="$USER_NAME" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$DB_NAME" != "postgres" ]; then
        createdb --username="$USER_NAME" "$DB_NAME"
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres: initialised $PGDATA (user $USER_NAME, database $DB_NAME)"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
