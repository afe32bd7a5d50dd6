#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test suite with ctest.
# UI suites run on Qt's offscreen platform, so no display is needed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_packages "${BUILD_PACKAGES[@]}"
configure_and_build

cd "$BUILD_DIR"
export QT_QPA_PLATFORM=offscreen
ctest --output-on-failure --timeout 300 "$@"
