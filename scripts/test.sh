#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test, in stages:
#   format  the product's C++ as .clang-format lays it out (scripts/check-format.sh, seconds);
#           the rooms' include rules are a suite of the normal stage (tst_roomrule)
#   normal  build/: every suite (the soak's short run is one of them), with the official MCP
#           conformance suite (npm, installed into build/mcp-conformance/ with a bounded wait)
#   asan    build-asan/ (clang, ASan + UBSan with float-cast-overflow, LSan on, -O1 -g1):
#           every suite again, the crash-injection suite with fewer kills
#   tsan    build-tsan/ (clang, TSan): only the executor, ledger and agent-loop suites, with
#           the suppressions of tests/sanitizers/tsan.supp (each one says why)
#   fuzz    every libFuzzer target for a bounded number of runs (tests/fuzz/run-fuzzers.sh),
#           built in build-asan/ with the same sanitizers; skipped while tests/fuzz is absent
#   bench   only when asked (AGENT_CONSOLE_TEST_STAGES=bench): ui_stall_bench in build/, bounded
#           to 5 minutes; it fails when the GUI thread misses its targets (p99 gap < 16 ms
#           under its load at nice 0, longest gap < 16 ms under it at nice 10)
# AGENT_CONSOLE_TEST_STAGES picks stages (e.g. "normal,tsan"; default: not bench). Arguments go to
# the normal and asan stages' ctest (e.g. -R tst_agentloop). Every sanitizer report, of a suite
# or of a child it starts (agent-cli, support-sim), goes to a file and fails its stage. The end
# names each stage's result; the exit status is non-zero when any stage failed.
# UI suites run on Qt's offscreen platform, so no display is needed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ALL_STAGES=(format normal asan tsan fuzz bench)
DEFAULT_STAGES=(format normal asan tsan fuzz)
IFS=', ' read -r -a STAGES <<< "${AGENT_CONSOLE_TEST_STAGES:-${DEFAULT_STAGES[*]}}"
for stage in "${STAGES[@]}"; do
    if [[ " ${ALL_STAGES[*]} " != *" $stage "* ]]; then
        echo "AGENT_CONSOLE_TEST_STAGES: unknown stage '$stage' (stages: ${ALL_STAGES[*]})" >&2
        exit 2
    fi
done
wants() { [[ " ${STAGES[*]} " == *" $1 "* ]]; }

ASAN_BUILD_DIR="${AGENT_CONSOLE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
TSAN_BUILD_DIR="${AGENT_CONSOLE_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
# The crash-injection suite's runs per configuration under ASan (200 in the normal stage): each
# run starts agent-cli twice, and an ASan agent-cli starts about four times slower.
ASAN_CRASH_RUNS="${AGENT_CONSOLE_ASAN_CRASH_RUNS:-25}"
# Executions per fuzz target in the fuzz stage (the long runs are made by hand).
FUZZ_RUNS="${AGENT_CONSOLE_FUZZ_RUNS:-200000}"
# The suites TSan runs: the tool executor and its breakers (tool pool threads), the ledger (its
# database thread, the cross-process race), the agent loop with its recovery, and the local
# log's and the settings' writer threads.
TSAN_SUITES=(tst_toolexecutor tst_executorbreaker tst_circuitbreaker tst_idempotencyledger
    tst_agentloop tst_turnrecovery tst_locallog tst_consolesettings)
FUZZ_RUNNER="$ROOT/tests/fuzz/run-fuzzers.sh"
# Suites run side by side in the normal and asan stages, two per core: most of their time is
# spent waiting on sockets, timers and child processes (a stage's suites keep its 2 cores less
# than half busy at one per core), so four at a time cut a stage's test time by about 40 % on 2
# cores (docs/PERFORMANCE.md, "CI"). The longest suites carry a ctest COST (their seconds), so
# that a fresh clone, with no timings of its own, starts them first. TSan's suites stay one at
# a time.
TEST_JOBS="${AGENT_CONSOLE_TEST_JOBS:-$(( $(nproc 2>/dev/null || echo 2) * 2 ))}"

packages=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
if wants asan || wants tsan || wants fuzz; then
    packages+=("${SANITIZER_PACKAGES[@]}")
fi
# npm fetches the MCP conformance suite and Node 22 into the build tree; Debian's npm only
# when there is none (a newer one from elsewhere is left alone).
if ! command -v npm >/dev/null; then
    packages+=(npm)
fi
ensure_packages "${packages[@]}"

export QT_QPA_PLATFORM=offscreen
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}"
REPORTS_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/agent-console-reports.XXXXXX")"

# The PostgreSQL ledger suites need a server: one throwaway cluster on a Unix socket for all
# stages, stopped and removed whatever happens (unless the caller brought a server of their own).
cleanup() {
    if [ -n "${PG_CLUSTER_DIR:-}" ]; then
        "$ROOT/scripts/pg-cluster.sh" stop "$PG_CLUSTER_DIR" || true
        rm -rf "$PG_CLUSTER_DIR"
    fi
    rm -rf "$REPORTS_ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${AGENT_CONSOLE_TEST_PG:-}" ] && { wants normal || wants asan || wants tsan; }; then
    PG_CLUSTER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/agent-console-pg.XXXXXX")"
    AGENT_CONSOLE_TEST_PG="$("$ROOT/scripts/pg-cluster.sh" start "$PG_CLUSTER_DIR")"
    export AGENT_CONSOLE_TEST_PG
fi

# A sanitizer report in a child process (agent-cli, support-sim, ledger_race) may be read by
# no one: every sanitizer writes to files under DIR instead of stderr, and any file there
# fails the stage and is printed.
reports_clean() {
    local dir="$1" report
    [ -z "$(ls -A "$dir")" ] && return 0
    for report in "$dir"/*; do
        echo "---- sanitizer report: $(basename "$report")"
        head -c 20000 "$report"
    done
    echo "---- $(ls "$dir" | wc -l) sanitizer report(s) in this stage" >&2
    return 1
}

# configure_clang DIR [CMAKE_ARGS...]: a clang tree. A tree configured with another compiler
# has CMake drop its cache and with it this call's options: such a tree starts afresh.
configure_clang() {
    local dir="$1" cached
    shift
    cached="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null || true)"
    if [ -n "$cached" ] && [ "$(command -v "$cached")" != "$(command -v clang++)" ]; then
        rm -f "$dir/CMakeCache.txt"
    fi
    configure "$dir" -DCMAKE_CXX_COMPILER=clang++ "$@"
}

asan_tree() {
    local fuzz=()
    # The fuzz targets share the ASan tree (clang's -fsanitize=fuzzer-no-link): one sanitizer
    # build, not two.
    [ -f "$ROOT/tests/fuzz/CMakeLists.txt" ] && fuzz=(-DAGENT_CONSOLE_FUZZ=ON)
    configure_clang "$ASAN_BUILD_DIR" -DAGENT_CONSOLE_SANITIZE=address "${fuzz[@]}" || return
    cmake --build "$ASAN_BUILD_DIR"
}

stage_format() {
    "$ROOT/scripts/check-format.sh"
}

# A stage's build steps end it when they fail ("|| return": set -e does not act inside a
# function called from an "||" list).
stage_normal() {
    configure_and_build || return
    # The MCP conformance suite and Node 22 into the build tree (npm, bounded by
    # AGENT_CONSOLE_NPM_TIMEOUT); tst_mcpconformance reports a registry it could not reach.
    "$ROOT/tests/core/mcp/conformance.sh" --install "$BUILD_DIR/mcp-conformance" \
        || echo "MCP conformance suite not installed; tst_mcpconformance will say why" >&2
    local status=0
    (cd "$BUILD_DIR" && ctest --output-on-failure --timeout 300 --parallel "$TEST_JOBS" "$@") || status=$?
    # The proof lines of docs/RELIABILITY.md, from the suites' own output.
    grep -ohE '(crash-injection \[[^]]*\]|race|conformance [a-z0-9/_-]+): [^"]*' \
        "$BUILD_DIR/Testing/Temporary/LastTest.log" 2>/dev/null | cut -c1-400 || true
    return "$status"
}

stage_asan() {
    asan_tree || return
    local reports="$REPORTS_ROOT/asan" status=0
    mkdir -p "$reports"
    # LSan is on (detect_leaks); tests/sanitizers/lsan.supp names the leaks that are Qt's, not
    # ours. UBSan stops at its first report (-fno-sanitize-recover).
    (cd "$ASAN_BUILD_DIR" &&
        ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1:log_path=$reports/asan" \
        LSAN_OPTIONS="suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan" \
        AGENT_CONSOLE_CRASH_RUNS="$ASAN_CRASH_RUNS" \
        ctest --output-on-failure --timeout 600 --parallel "$TEST_JOBS" "$@") || status=$?
    reports_clean "$reports" || status=1
    return "$status"
}

stage_tsan() {
    configure_clang "$TSAN_BUILD_DIR" -DAGENT_CONSOLE_SANITIZE=thread || return
    # Only the suites TSan runs, and what they start (ledger_race, support-sim).
    cmake --build "$TSAN_BUILD_DIR" --target "${TSAN_SUITES[@]}" || return
    local reports="$REPORTS_ROOT/tsan" status=0 pattern tsan_options
    mkdir -p "$reports"
    # Only our own code is checked: Qt's is not instrumented, so its calls of malloc, memcpy
    # and the like would be seen without the locks that order them (tests/sanitizers/tsan.supp
    # says the rest). TSan slows the suites' timed paths several-fold: a suite that fails gets
    # a second run (--repeat until-pass:2), but a report fails the stage whatever the rerun says.
    tsan_options="suppressions=$ROOT/tests/sanitizers/tsan.supp:ignore_noninstrumented_modules=1"
    tsan_options+=":second_deadlock_stack=1"
    pattern="^($(IFS='|'; echo "${TSAN_SUITES[*]}"))\$"
    (cd "$TSAN_BUILD_DIR" &&
        TSAN_OPTIONS="$tsan_options:log_path=$reports/tsan" \
        ctest --output-on-failure --timeout 600 --repeat until-pass:2 -R "$pattern") \
        || status=$?
    reports_clean "$reports" || status=1
    return "$status"
}

stage_fuzz() {
    if [ ! -f "$FUZZ_RUNNER" ]; then
        echo "tests/fuzz/run-fuzzers.sh is absent: no fuzz targets to run"
        return 0
    fi
    asan_tree || return
    # A crash, leak or sanitizer report is the runner's failure exit (with the input kept).
    bash "$FUZZ_RUNNER" "$ASAN_BUILD_DIR" "$FUZZ_RUNS"
}

# ui_stall_bench (docs/PERFORMANCE.md): the window offscreen while 500 tool calls time out and
# retry, under its own load at nice 0 and then at nice 10; its last line is
# "busy_p99_gap_ms=A busy_longest_gap_ms=B nice10_longest_gap_ms=C nice10_p99_gap_ms=D".
# Exit 3 is a missed target.
stage_bench() {
    configure_and_build || return
    timeout 300 "$BUILD_DIR/tests/bench/ui_stall_bench"
}

# A run from a fresh clone writes about 8 GiB (build/ 4.8, build-asan/ 2.7, build-tsan/ 0.5): on
# a fuller disk the stages fail far from the cause ("Cannot create directory", an npm install
# that "timed out"), so the free space is told before and, when a stage failed, after.
NEEDED_DISK_MIB=8192
free_disk_mib() { df -Pm "$ROOT" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
free_before="$(free_disk_mib)"
if [ -n "$free_before" ] && [ "$free_before" -lt "$NEEDED_DISK_MIB" ]; then
    echo "WARNING: $free_before MiB free for the build trees; a run from a fresh clone" \
        "writes about $NEEDED_DISK_MIB MiB, so a stage may fail for want of space" >&2
fi

# Each stage in turn, timed: wall time, and the CPU time (user + sys) of everything it ran.
clock_ticks="$(getconf CLK_TCK)"
children_cpu_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
results=()
failed=0
for stage in "${ALL_STAGES[@]}"; do
    wants "$stage" || continue
    echo "==== stage $stage"
    started=$SECONDS
    cpu_before="$(children_cpu_ticks)"
    status=0
    "stage_$stage" "$@" || status=$?
    cpu=$(( ($(children_cpu_ticks) - cpu_before) / clock_ticks ))
    outcome=passed
    if [ "$status" -ne 0 ]; then
        outcome="FAILED (status $status)"
        failed=1
    fi
    results+=("$(printf '%-7s %-20s %5d s wall, %5d s CPU' "$stage" "$outcome" \
        $((SECONDS - started)) "$cpu")")
done

echo "==== stages"
printf '%s\n' "${results[@]}"
free_after="$(free_disk_mib)"
if [ "$failed" -ne 0 ] && [ -n "$free_after" ] && [ "$free_after" -lt 1024 ]; then
    echo "the disk has $free_after MiB free: a stage may have failed for want of space" >&2
fi
exit "$failed"
