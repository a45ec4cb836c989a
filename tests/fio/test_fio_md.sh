#!/bin/sh
# SPDX-License-Identifier: MIT
# fio with the nvq engine on a protection information namespace (8 bytes
# of separate PI per block, type 1): fio's own verify passes, and the PI
# the controller inserted (PRACT) checks out when nvq reads it back with
# the guard and reference tag checks and no PRACT.
#   test_fio_md.sh PATH/TO/nvq
# Environment as for test_fio.sh (FIO, NVQ_FIO_ENGINE, NVQ_FIO_SKIP,
# NVQ_FIO_PRELOAD). Exit 0 pass, 1 fail, 77 skip.
NVQ=${1:?usage: test_fio_md.sh PATH/TO/nvq}
NVQ=$(cd "$(dirname "$NVQ")" && pwd)/$(basename "$NVQ") # before the cd
if [ -z "${FIO:-}" ] || [ ! -x "$FIO" ]; then
	echo "SKIP: fio is not installed (apt-get install fio)"
	exit 77
fi
if [ -z "${NVQ_FIO_ENGINE:-}" ]; then
	echo "SKIP: the nvq fio engine was not built: ${NVQ_FIO_SKIP:-}"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
printf 'leak:/usr/bin/fio\n' >"$tmp/lsan.supp"

run_fio() {
	(
		if [ -n "${NVQ_FIO_PRELOAD:-}" ]; then
			LD_PRELOAD=$NVQ_FIO_PRELOAD
			export LD_PRELOAD
		fi
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
		LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tmp/lsan.supp"
		export ASAN_OPTIONS LSAN_OPTIONS
		exec "$FIO" "$@"
	) >"$tmp/out" 2>"$tmp/err"
}

fail=0
# fio's filename= takes no '/', so the image is a name in the cwd
if ! run_fio --name=pi --ioengine="$NVQ_FIO_ENGINE" --thread \
	--filename=emu.file=pi.img,size=8M,lbads=9,ms=8,pi=1 --rw=randwrite \
	--bs=4k --iodepth=8 --size=4M --verify=crc32c --do_verify=1; then
	echo "FAIL: fio verify on a PI namespace failed" >&2
	tail -20 "$tmp/out" "$tmp/err" >&2
	fail=1
fi
grep -q "err= 0" "$tmp/out" || {
	echo "FAIL: fio reported an error" >&2
	tail -20 "$tmp/out" >&2
	fail=1
}
if ! "$NVQ" read "emu:file=$tmp/pi.img,size=8M,lbads=9,ms=8,pi=1" -n 1 \
	-s 0 -c 8192 -p 5 -d "$tmp/data" -M "$tmp/md" 2>"$tmp/err"; then
	echo "FAIL: the PI of fio's writes does not check out" >&2
	cat "$tmp/err" >&2
	fail=1
fi
exit $fail
