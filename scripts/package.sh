#!/usr/bin/env bash
# Builds the Debian package of agent-console and agent-cli (docs/PACKAGING.md): installs the
# Debian packages that are missing, builds a release tree in build-package/ with Debian's
# build flags, runs CPack's DEB generator and lintian on the .deb.
#   scripts/package.sh           build and check the package (lintian, validators)
#   scripts/package.sh --check   also install it on this machine, start both programs and
#                                remove it again (scripts/package-check.sh; root only)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

check=0
for argument in "$@"; do
    case "$argument" in
    --check) check=1 ;;
    *)
        echo "usage: scripts/package.sh [--check]" >&2
        exit 2
        ;;
    esac
done

# dpkg-shlibdeps (the Depends line), file (CPack finds the ELF files with it), help2man (the
# manual pages), the freedesktop validators, lintian, and the SVG plugin the icon needs.
PACKAGE_PACKAGES=(
    dpkg-dev file help2man lintian desktop-file-utils appstream libqt6svg6
)
ensure_packages "${BUILD_PACKAGES[@]}" "${PACKAGE_PACKAGES[@]}"

PACKAGE_DIR="${AGENT_CONSOLE_PACKAGE_DIR:-$ROOT/build-package}"
DESKTOP="$ROOT/resources/desktop"

# Debian's own flags (hardening: fortify, stack protector, relro and bindnow), the way
# debhelper would pass them; CMake reads them when the tree is first configured.
eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
export CXXFLAGS="$CXXFLAGS $CPPFLAGS"
# Reproducible: the manual pages and the archive carry the changelog's date, not today's.
SOURCE_DATE_EPOCH="$(dpkg-parsechangelog -l "$ROOT/resources/debian/changelog" -STimestamp)"
export SOURCE_DATE_EPOCH

# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs what was built here and does not build
# every test first.
# The package keeps the full debug info Debian's flags ask for (-g), not the line tables
# only of the build and test trees (configure()), and is linked as Debian links its own
# packages (ld.bfd), not with the lld the test trees use for speed.
configure "$PACKAGE_DIR" -DCMAKE_INSTALL_PREFIX=/usr -DAGENT_CONSOLE_DEB=ON \
    -DAGENT_CONSOLE_BENCHMARKS=OFF -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
    -DAGENT_CONSOLE_LLD=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g -DNDEBUG"
cmake --build "$PACKAGE_DIR" --target agent-console agent-cli debian_docs

desktop-file-validate "$DESKTOP/org.agentconsole.AgentConsole.desktop"
appstreamcli validate --no-net "$DESKTOP/org.agentconsole.AgentConsole.metainfo.xml"

rm -f "$PACKAGE_DIR"/agent-console_*.deb
(cd "$PACKAGE_DIR" && cpack -G DEB >/dev/null)
deb="$(ls "$PACKAGE_DIR"/agent-console_*.deb)"
echo "Built $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'

# Every tag lintian still gives is explained in docs/PACKAGING.md; errors and warnings fail.
lintian --info --display-info --fail-on error,warning "$deb"
echo "lintian: no errors or warnings"

if [ "$check" -eq 1 ]; then
    "$ROOT/scripts/package-check.sh" "$deb"
fi
