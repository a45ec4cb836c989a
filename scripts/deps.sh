#!/bin/sh
# Make sure the tools the build and the tests need are installed. As root,
# install what is missing through apt-get (and say so); otherwise print the
# exact command to run and fail.
#
# usage: scripts/deps.sh build|test
set -eu

want=${1:-build}

# command -> Debian package
need="meson:meson ninja:ninja-build cc:gcc pkg-config:pkg-config python3:python3"
if [ "$want" = test ]; then
	need="$need valgrind:valgrind"
fi

missing=""
for pair in $need; do
	cmd=${pair%%:*}
	pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
# Sanitizer runtimes come with gcc on Debian (libasan8, libubsan1,
# libtsan2); check they are really there.
if [ "$want" = test ]; then
	for lib in libasan.so libubsan.so libtsan.so; do
		if ! cc -print-file-name=$lib | grep -q /; then
			missing="$missing libgcc-12-dev"
			break
		fi
	done
fi

[ -z "$missing" ] && exit 0

cmdline="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "nvq: missing packages:$missing" >&2
	echo "nvq: run as root:  apt-get update && $cmdline" >&2
	exit 1
fi
echo "nvq: installing missing packages through apt:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "nvq: installed:$missing"
