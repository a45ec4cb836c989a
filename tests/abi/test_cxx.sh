#!/bin/sh
# SPDX-License-Identifier: MIT
# Build test_cxx.cc with the C++ compiler (C++11, -pedantic -Werror, the
# build's sanitizers), link it against libnvq.so and run it.
# usage: test_cxx.sh CXX SRC INCLUDE BUILD_INCLUDE LIBNVQ SANITIZE
set -eu
cxx=$1 src=$2 inc=$3 binc=$4 lib=$5 san=$6
command -v "$cxx" >/dev/null 2>&1 || {
	# CI installs g++ (scripts/deps.sh test): this never skips there.
	echo "skip: no C++ compiler ($cxx; apt-get install g++)"
	exit 77
}
flags=
[ "$san" != none ] && [ -n "$san" ] && flags="-fsanitize=$san"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cxx" -std=c++11 -Wall -Wextra -pedantic -Werror $flags -I"$inc" \
	-I"$binc" -o "$dir/test-cxx" "$src" "$lib" \
	-Wl,-rpath,"$(dirname "$lib")"
"$dir/test-cxx"
