#!/bin/sh
# Make sure the packages the build (and, with "test", the tests) need are
# installed. As root, install what is missing through apt-get and say so;
# otherwise print the exact command to run and fail.
#
# usage: scripts/deps.sh build|test
set -eu

want=${1:-build}

# Debian packages; meson, ninja, gcc, pkg-config, python3 to build.
pkgs="meson ninja-build gcc libc6-dev pkg-config python3"
if [ "$want" = test ]; then
	# valgrind: instruction counts; fio: the fio ioengine tests and
	# comparisons; qemu, a kernel image and a static busybox: the vfio
	# system tests in a QEMU guest; dpkg-dev: apt-get source for fio's
	# headers; libnvme-dev and binutils: the ABI tests (nvq's headers
	# beside libnvme's, nm -D on libnvq.so); clang and its libFuzzer
	# runtime: the fuzz targets (docs/fuzzing.md); g++: the public headers
	# compiled as C++; nvme-cli: the reference whose JSON names nvq's
	# admin commands match (compared in the QEMU guest); libbpf-dev and
	# bpftool: nvq-latd's BPF activity source (its skeleton is generated
	# at build time); systemd: systemd-analyze verify on its unit file.
	pkgs="$pkgs valgrind fio qemu-system-x86 linux-image-amd64"
	pkgs="$pkgs busybox-static dpkg-dev libnvme-dev binutils"
	pkgs="$pkgs clang libclang-rt-14-dev g++ nvme-cli"
	pkgs="$pkgs libbpf-dev bpftool systemd"
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

cmdline="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "nvq: missing packages:$missing" >&2
	echo "nvq: run as root:  apt-get update && $cmdline" >&2
	exit 1
fi
echo "nvq: installing missing packages through apt-get:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "nvq: installed:$missing"
