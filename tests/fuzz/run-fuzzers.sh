#!/usr/bin/env bash
# Runs every libFuzzer target of a build (-DAGENT_CONSOLE_FUZZ=ON) over its seed corpus for a
# bounded number of executions: the same work on every run (-runs, -seed=1), not a time limit.
#   tests/fuzz/run-fuzzers.sh <build-dir> <runs-per-target>
# New corpus entries go to a temporary directory, never into the source tree; a crash, a leak,
# a sanitizer report or a timeout leaves its input in <build-dir>/fuzz-artifacts/ and makes the
# exit status non-zero. One line per target: executions, time, coverage.
set -uo pipefail

if [[ $# -ne 2 || ! $2 =~ ^[0-9]+$ ]]; then
    echo "usage: $0 <build-dir> <runs-per-target>" >&2
    exit 2
fi
BUILD_DIR="$(cd "$1" && pwd)"
RUNS="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ARTIFACTS="$BUILD_DIR/fuzz-artifacts"
# On tmpfs where there is one: sim_routes writes tickets into a SQLite file under $TMPDIR.
TMP_BASE=/dev/shm
[[ -d $TMP_BASE && -w $TMP_BASE ]] || TMP_BASE="${TMPDIR:-/tmp}"
WORK="$(mktemp -d "$TMP_BASE/agentconsole-fuzz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$ARTIFACTS" "$WORK/tmp"
export TMPDIR="$WORK/tmp"

# Leaks are reported (LSan, the default with ASan); UBSan stops at the first report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Targets whose one execution costs far more than the others run a fraction of the runs, so that
# no one target takes most of the stage: the export target redacts and writes every accepted file
# twice (about 1 ms an execution under ASan, against 20-80 us for the rest).
declare -A RUNS_DIVISOR=([conversation_export]=5)

targets=()
for corpus in "$HERE"/corpus/*/; do
    targets+=("$(basename "$corpus")")
done

failed=0
for target in "${targets[@]}"; do
    binary="$BUILD_DIR/tests/fuzz/fuzz_$target"
    if [[ ! -x $binary ]]; then
        echo "fuzz $target: MISSING $binary (build the 'fuzzers' target)" >&2
        failed=1
        continue
    fi
    mkdir -p "$WORK/$target"
    options=(-runs="$(( RUNS / ${RUNS_DIVISOR[$target]:-1} ))" -seed=1 -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
             -artifact_prefix="$ARTIFACTS/$target-")
    [[ -f $HERE/$target.dict ]] && options+=(-dict="$HERE/$target.dict")
    log="$WORK/$target.log"
    start=$(date +%s%N)
    "$binary" "${options[@]}" "$WORK/$target" "$HERE/corpus/$target" >"$log" 2>&1
    status=$?
    tenths=$(( ($(date +%s%N) - start) / 100000000 ))
    seconds="$((tenths / 10)).$((tenths % 10))"
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    if [[ $status -eq 0 ]]; then
        printf 'fuzz %-16s ok      %9s executions in %6s s  %s\n' \
            "$target" "${executions:-?}" "$seconds" "$coverage"
    else
        printf 'fuzz %-16s FAILED  %9s executions in %6s s  (exit %d)\n' \
            "$target" "${executions:-?}" "$seconds" "$status"
        grep -E 'ERROR|SUMMARY|property violated|qFatal|Test unit written' "$log" | head -20 >&2
        cp "$log" "$ARTIFACTS/$target.log"
        failed=1
    fi
done
exit $failed
