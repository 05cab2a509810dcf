#!/bin/sh
# install-deps.sh - install the Debian 12 packages the build, tests and benches need.
# Idempotent: installs only what is missing. Needs root (or sudo) when something is.
PKGS="${*:-gcc g++ make pkg-config libc6-dev binutils file libelf-dev libdw-dev libunwind-dev zlib1g-dev libzstd-dev liblzma-dev gdb valgrind python3 perl}"
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
