#!/bin/sh
# install-deps.sh - install Debian packages the build, tests and benches need.
# Idempotent: installs only what is missing. Needs root (or sudo) when something is.
# Usage: sh scripts/install-deps.sh [PKG...]   (no PKG: the build and test set)
# `make deps` passes the build dependencies, `make check-deps` the test tools.
# Without dpkg/apt-get (not Debian) nothing is installed: it says what it would
# have wanted and succeeds, since pkg-config (make) and the tests' own checks
# decide what is really missing there.
PKGS="${*:-gcc g++ make pkg-config libc6-dev binutils file libelf-dev libdw-dev libunwind-dev zlib1g-dev libzstd-dev liblzma-dev libdeflate-dev gdb valgrind python3 perl libc6-dbg}"
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: no dpkg/apt-get here (not Debian?): not installing; the Debian names are: $PKGS" >&2
	exit 0
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq >/dev/null 2>&1 || true
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
