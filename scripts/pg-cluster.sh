#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benches.
#
#   scripts/pg-cluster.sh start DIR   initdb into DIR/data (unless a stopped cluster is there:
#                                     then that one), start it listening only on a Unix
#                                     socket in DIR, print its connection URL on stdout
#   scripts/pg-cluster.sh stop DIR    stop it at once (pg_ctl -m immediate); safe to repeat
#
# PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` system
# user (created when missing). No TCP port is opened: the socket file in DIR is the only way
# in, so clusters of parallel runs cannot collide and nothing is reachable from outside.
set -euo pipefail

usage() {
    echo "usage: $0 start|stop DIR" >&2
    exit 2
}

[ "$#" -eq 2 ] || usage
command="$1"
dir="$2"

pg_bin() {
    local bin
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "PostgreSQL server binaries not found: install Debian's package 'postgresql'." >&2
        exit 1
    fi
    printf '%s\n' "$bin"
}

# Runs a command as the cluster's owner: `postgres` when we are root, ourselves otherwise.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Port only names the socket file (DIR/.s.PGSQL.PORT); nothing listens on TCP.
PORT=5432

start() {
    local bin
    bin="$(pg_bin)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [ "$(id -u)" -eq 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            useradd --system --user-group --home-dir /var/lib/postgresql \
                --shell /usr/sbin/nologin postgres
        fi
        chown postgres: "$dir"
        chmod 700 "$dir"
    fi
    # The owner's commands run from DIR: postgres may not read root's working directory.
    cd "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
            --no-sync >"$dir/initdb.log" 2>&1 || {
            cat "$dir/initdb.log" >&2
            exit 1
        }
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$dir' -p $PORT" \
        start >/dev/null || {
        echo "PostgreSQL did not start; its log:" >&2
        cat "$dir/server.log" >&2 || true
        exit 1
    }
    printf 'postgresql://postgres@/postgres?host=%s&port=%s\n' "$dir" "$PORT"
}

stop() {
    local bin
    bin="$(pg_bin)"
    [ -f "$dir/data/postmaster.pid" ] || return 0
    cd "$dir"
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null
}

case "$command" in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
