# A PostgreSQL for the bench scripts (bash), started as SharedStoreTests start theirs: Debian's
# `postgresql` binaries, a cluster in a temporary folder (initdb as the `postgres` user, which
# initdb needs), listening on a Unix socket only, `trust` on it (the folder is the guard), fsync
# off (the bench measures the helpers, not the disk). Stopped on exit after the script's own
# processes. Source after bench/lib.sh:   . bench/pg.sh; pg_start; pg_url DATABASE
# Needs root (to become `postgres`) and scripts/install-deps.sh --test (postgresql).
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PG_BIN/initdb" ] || { echo "bench: PostgreSQL is missing; run scripts/install-deps.sh --test (or apt-get install postgresql)" >&2; exit 1; }
# Outside $WORK: mktemp made that 0700 for root, and the server runs as postgres.
PG_DIR=$(mktemp -d /tmp/scrolloff-bench-pg.XXXXXX)
chmod 755 "$PG_DIR"
mkdir -p "$PG_DIR/run"
chown -R postgres:postgres "$PG_DIR"
as_postgres() { setpriv --reuid=postgres --regid=postgres --clear-groups "$@"; }

pg_start() {
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U scrolloff --auth=trust --no-sync -E UTF8 --locale=C >"$PG_DIR/initdb.log" 2>&1 \
        || { cat "$PG_DIR/initdb.log" >&2; exit 1; }
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 30 -l "$PG_DIR/log" \
        -o "-k $PG_DIR/run -c listen_addresses='' -p 5432 -c fsync=off -c max_connections=50" start >/dev/null
}

# A new, empty database NAME (one household).
pg_createdb() { "$PG_BIN/createdb" -h "$PG_DIR/run" -U scrolloff "$1"; }

# The [store] url of database NAME.
pg_url() { echo "postgresql://scrolloff@/$1?host=$PG_DIR/run"; }

# A helper configuration file on database NAME as node NODE; prints its path.
pg_config() { # database node
    local file="$WORK/store-$2.toml"
    printf '[store]\nbackend = "postgresql"\nurl = "%s"\nnode = "%s"\n' "$(pg_url "$1")" "$2" >"$file"
    echo "$file"
}

pg_stop() {
    [ -f "$PG_DIR/data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -m immediate stop >/dev/null 2>&1
    rm -rf "$PG_DIR"
}

# The helpers first (they hold connections), then the server, then the work folder.
trap 'for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; pg_stop; rm -rf "$WORK"' EXIT
