#!/usr/bin/env bash
# The product's layout (.clang-format: 4 spaces, 99 columns): every C++ file of core/, ui/ and
# app/ exactly as clang-format 14 (Debian 12's) lays it out. Another major version lays some
# lines out otherwise, so this one is named, not whichever is on the PATH.
#   scripts/check-format.sh          check; names each file that differs, fails when one does
#   scripts/check-format.sh --fix    rewrite the files that differ
# Files may be named after the option (e.g. the ones a change touches); default: all of them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLANG_FORMAT="${AGENT_CONSOLE_CLANG_FORMAT:-clang-format-14}"

fix=0
if [ "${1:-}" = "--fix" ]; then
    fix=1
    shift
fi
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check-format: $CLANG_FORMAT is not installed (Debian: apt-get install clang-format-14)" >&2
    exit 2
fi

cd "$ROOT"
files=("$@")
if [ "${#files[@]}" -eq 0 ]; then
    mapfile -t files < <(find core ui app -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
fi
if [ "$fix" -eq 1 ]; then
    printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$CLANG_FORMAT" -i
    exit 0
fi
# --dry-run names every line it would move as "FILE:LINE:COLUMN: error: ..."; only the files
# are told here, with the command that shows or mends them. One clang-format at a time, so that
# the lines of two never interleave.
status=0
report="$(printf '%s\0' "${files[@]}" \
    | xargs -0 -n 60 "$CLANG_FORMAT" --dry-run -Werror 2>&1)" || status=$?
mapfile -t offenders < <(sed -n 's/^\([^ :]*\.\(h\|cpp\)\):[0-9]*:[0-9]*: error:.*/\1/p' \
    <<< "$report" | sort -u)
if [ "$status" -ne 0 ] && [ "${#offenders[@]}" -eq 0 ]; then
    # Not a layout it disagrees with: clang-format itself failed (a file it cannot read, ...).
    echo "check-format: $CLANG_FORMAT failed (status $status):" >&2
    head -c 4000 <<< "$report" >&2
    exit 2
fi
if [ "${#offenders[@]}" -gt 0 ]; then
    printf 'not as .clang-format lays it out: %s\n' "${offenders[@]}" >&2
    echo "${#offenders[@]} of ${#files[@]} files differ; see: $CLANG_FORMAT --dry-run FILE," \
        "or mend: scripts/check-format.sh --fix FILE" >&2
    exit 1
fi
echo "${#files[@]} files as .clang-format lays them out"
