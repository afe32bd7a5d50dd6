# Shared by run.sh and test.sh: install the Debian packages that are missing (only those),
# then configure and build with Ninja.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${AGENT_CONSOLE_BUILD_DIR:-$ROOT/build}"

BUILD_PACKAGES=(
    cmake ninja-build g++ pkg-config
    qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libqt6sql6-psql
    qt6-httpserver-dev qt6-websockets-dev qt6-networkauth-dev
    libvalijson-dev libre2-dev libgl-dev
    qtkeychain-qt6-dev libsecret-1-0
    libqt6svg6
    qt6-tools-dev qt6-l10n-tools qt6-translations-l10n
    fonts-wqy-microhei
)

# Only test.sh needs clang-format 14 (its format stage), a PostgreSQL server (a throwaway
# cluster for the ledger suites), python3 and jq (the default JSON readers that agent-cli --json
# must always satisfy), a Secret Service (GNOME Keyring on a D-Bus session bus that
# tst_secretstore starts itself), and lld, which links test.sh's three trees several times
# faster than the default linker.
TEST_PACKAGES=(
    clang-format-14
    postgresql
    python3 jq
    dbus-daemon gnome-keyring
    lld
)

# test.sh's sanitizer and fuzz stages: Debian's default clang (14 on Debian 12) with its
# sanitizer and libFuzzer runtimes, and llvm-symbolizer for the reports' stack traces.
SANITIZER_PACKAGES=(
    clang libclang-rt-dev llvm
)

missing_packages() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            printf '%s\n' "$pkg"
        fi
    done
}

ensure_packages() {
    local missing
    mapfile -t missing < <(missing_packages "$@")
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "Missing Debian packages: ${missing[*]}" >&2
        echo "Install them as root:  sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
    echo "Installing missing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# configure DIR [CMAKE_ARGS...]: a Ninja RelWithDebInfo tree in DIR, with line tables only
# (-g1, not -g): a crash's backtrace still names every function, file and line, and a suite
# compiles about a third faster without the full debug info of Qt's templates (docs/
# PERFORMANCE.md, "CI"). A tree of your own for a debugger: cmake -B mine -DCMAKE_BUILD_TYPE=Debug.
configure() {
    local dir="$1"
    shift
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@" >/dev/null
}

# configure_and_build [BUILD_ARGS...]: the normal tree in $BUILD_DIR.
configure_and_build() {
    configure "$BUILD_DIR"
    cmake --build "$BUILD_DIR" "$@"
}
