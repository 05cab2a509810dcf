#!/bin/sh
# check-build-deps.sh - before the first compile, check that the compiler and the
# libraries the build links are there, with pkg-config; installs nothing. When one
# is missing, say which Debian package provides it and fail, so that `make` never
# runs apt-get behind the user's back (`make deps` does that, when asked).
# Usage: CC=cc sh scripts/check-build-deps.sh PCNAME:DEBPKG...
#   e.g. libelf:libelf-dev libdw:libdw-dev (the list is BUILD_DEPS in the Makefile)
# Exit status: 0 all there, 1 something missing (one line each on stderr).
missing=""
say() { echo "make: $*" >&2; }
cc_cmd=${CC:-cc}
cc_word=${cc_cmd%% *}
if ! command -v "$cc_word" >/dev/null 2>&1; then
	say "no C compiler: '$cc_word' not found (Debian package gcc; or make CC=...)"
	missing="$missing gcc"
fi
if ! command -v pkg-config >/dev/null 2>&1; then
	say "pkg-config not found, needed to check the libraries (Debian package pkg-config)"
	missing="$missing pkg-config"
else
	for d in "$@"; do
		pc=${d%%:*}
		deb=${d#*:}
		if ! pkg-config --exists "$pc" 2>/dev/null; then
			say "library $pc not found by pkg-config (Debian package $deb)"
			missing="$missing $deb"
		fi
	done
fi
[ -z "$missing" ] && exit 0
if command -v apt-get >/dev/null 2>&1; then
	say "install with: make deps   (or: apt-get install$missing)"
else
	say "install the packages that provide them with your system's package manager"
fi
exit 1
