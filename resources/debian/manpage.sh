#!/bin/sh
# manpage.sh PROGRAM VERSION NAME OUTPUT: PROGRAM's manual page, made by help2man from its own
# --help (so it cannot drift from the options), gzipped without a timestamp (lintian).
set -eu
program="$1"
version="$2"
name="$3"
output="$4"
# Run by name from its directory, so that the page's usage line says "agent-console", not the
# build tree's path; HOME='~' so that the default data directory reads ~/.local/share/…,
# not the builder's home. help2man dates the page from SOURCE_DATE_EPOCH when it is set.
PATH="$(dirname "$program"):$PATH" HOME='~' QT_QPA_PLATFORM=offscreen \
    env -u XDG_DATA_HOME help2man --no-info --no-discard-stderr --section=1 \
    --version-string="$version" --name="$name" --output="$output.page" "$(basename "$program")"
gzip -n -9 -c "$output.page" >"$output.tmp"
mv "$output.tmp" "$output"
rm -f "$output.page"
