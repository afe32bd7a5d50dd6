#!/usr/bin/env bash
# Installs what is missing, builds, and starts the console on its embedded defaults:
# the offline demo model and the embedded SQLite store (no key, no network).
# Extra arguments go to agent-console (try --help).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_packages "${BUILD_PACKAGES[@]}"
configure_and_build --target agent-console agent-cli

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "No display found: set DISPLAY (or run under xvfb-run) to see the window." >&2
fi
exec "$BUILD_DIR/app/agent-console/agent-console" "$@"
