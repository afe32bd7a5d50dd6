#!/usr/bin/env bash
# package-check.sh FILE.deb: proves the package installs and starts on this machine, then
# leaves the machine as it was. Installs it with apt (which brings its dependencies), checks
# the installed desktop files, asks agent-cli a question on the offline model, starts
# agent-console offscreen until its runtime is ready, and purges the package.
# Run by scripts/package.sh --check, as root. It refuses to run where agent-console is
# already installed: that copy is someone's, not this check's.
set -euo pipefail

deb="$(realpath "${1:?usage: package-check.sh FILE.deb}")"
if [ "$(id -u)" -ne 0 ]; then
    echo "package-check: installing a package needs root" >&2
    exit 1
fi
if dpkg-query -W -f='${Status}' agent-console 2>/dev/null | grep -q "install ok installed"; then
    echo "package-check: agent-console is installed already; not replacing it" >&2
    exit 1
fi

work="$(mktemp -d)"
console_pid=""
cleanup() {
    if [ -n "$console_pid" ] && kill -0 "$console_pid" 2>/dev/null; then
        kill "$console_pid" 2>/dev/null || true
        wait "$console_pid" 2>/dev/null || true
    fi
    if dpkg-query -W -f='${Status}' agent-console 2>/dev/null | grep -q "ok installed"; then
        apt-get purge -y -qq agent-console >/dev/null
        echo "package-check: agent-console removed"
    fi
    rm -rf "$work"
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
echo "package-check: installed $(dpkg-query -W -f='${Package} ${Version}' agent-console)"

# Where the desktop looks for them, and still valid once installed.
app_id=org.agentconsole.AgentConsole
for file in /usr/bin/agent-console /usr/bin/agent-cli \
    /usr/share/applications/$app_id.desktop \
    /usr/share/icons/hicolor/scalable/apps/$app_id.svg \
    /usr/share/metainfo/$app_id.metainfo.xml \
    /usr/share/man/man1/agent-console.1.gz /usr/share/man/man1/agent-cli.1.gz \
    /usr/share/doc/agent-console/copyright /usr/share/doc/agent-console/changelog.Debian.gz; do
    [ -f "$file" ] || { echo "package-check: $file is missing" >&2; exit 1; }
done
desktop-file-validate /usr/share/applications/$app_id.desktop
appstreamcli validate --no-net /usr/share/metainfo/$app_id.metainfo.xml >/dev/null

# Nothing of this machine's user: a home, settings and data of the check's own.
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
    XDG_CACHE_HOME="$work/cache" XDG_RUNTIME_DIR="$work/runtime"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
cd "$work"

agent-console --version
# The offline model and the embedded store, from the installed binary alone.
answer="$(timeout 60 agent-cli --data-dir "$work/cli" --json "Where is order A1001?")"
python3 -c 'import json, sys
turn = json.loads(sys.argv[1])
assert turn["outcome"] == "answered", turn["outcome"]
print("package-check: agent-cli answered:", turn["answer"].splitlines()[0])' "$answer"

# The window, offscreen, until the runtime says it is ready in the local log (it was shown
# before the runtime started); it must still be running then, and warn of nothing.
QT_QPA_PLATFORM=offscreen agent-console --data-dir "$work/gui" 2>"$work/gui.err" &
console_pid=$!
log="$work/gui/logs/agent-console.log"
for _ in $(seq 1 300); do
    if [ -f "$log" ] && grep -q "runtime ready" "$log"; then
        break
    fi
    kill -0 "$console_pid" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q "runtime ready" "$log" 2>/dev/null || ! kill -0 "$console_pid" 2>/dev/null; then
    echo "package-check: agent-console did not start" >&2
    cat "$work/gui.err" >&2
    exit 1
fi
kill "$console_pid"
wait "$console_pid" 2>/dev/null || true
console_pid=""
# The console copies its local log's info lines to stderr; anything else (a warning, Qt's
# own complaints) fails the check.
if grep -qvE '^[0-9T:.-]+ (debug|info) ' "$work/gui.err"; then
    echo "package-check: agent-console warned on stderr:" >&2
    cat "$work/gui.err" >&2
    exit 1
fi
echo "package-check: agent-console started offscreen and was ready"
