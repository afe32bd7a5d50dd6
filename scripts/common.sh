# Shared by run.sh and test.sh: install the Debian packages that are missing (only those),
# then configure and build with Ninja.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${AGENT_CONSOLE_BUILD_DIR:-$ROOT/build}"

BUILD_PACKAGES=(
    cmake ninja-build g++ pkg-config
    qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libqt6sql6-psql
    qt6-httpserver-dev qt6-websockets-dev
    libvalijson-dev libgl-dev
    qtkeychain-qt6-dev
    fonts-wqy-microhei
)

# Only test.sh needs a PostgreSQL server (a throwaway cluster for the ledger suites), and
# python3 and jq, the default JSON readers that agent-cli --json must always satisfy.
TEST_PACKAGES=(
    postgresql
    python3 jq
    clang libclang-rt-14-dev # the libFuzzer targets (tests/fuzz, -DAGENT_CONSOLE_FUZZ=ON)
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

configure_and_build() {
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$BUILD_DIR" "$@"
}
