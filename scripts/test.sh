#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test suite with ctest.
# UI suites run on Qt's offscreen platform, so no display is needed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
configure_and_build

cd "$BUILD_DIR"
export QT_QPA_PLATFORM=offscreen

# The PostgreSQL ledger suites need a server: a throwaway cluster on a Unix socket, stopped
# and removed whatever happens (unless the caller brought a server of their own).
if [ -z "${AGENT_CONSOLE_TEST_PG:-}" ]; then
    PG_CLUSTER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/agent-console-pg.XXXXXX")"
    stop_pg_cluster() {
        "$ROOT/scripts/pg-cluster.sh" stop "$PG_CLUSTER_DIR" || true
        rm -rf "$PG_CLUSTER_DIR"
    }
    trap stop_pg_cluster EXIT
    trap 'exit 130' INT TERM
    AGENT_CONSOLE_TEST_PG="$("$ROOT/scripts/pg-cluster.sh" start "$PG_CLUSTER_DIR")"
    export AGENT_CONSOLE_TEST_PG
fi

status=0
ctest --output-on-failure --timeout 300 "$@" || status=$?

# The proof lines of docs/RELIABILITY.md, from the suites' own output.
grep -ohE '(crash-injection \[[^]]*\]|race): [^"]*' Testing/Temporary/LastTest.log 2>/dev/null \
    | cut -c1-400 || true
exit "$status"
