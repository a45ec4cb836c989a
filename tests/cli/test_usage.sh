#!/bin/bash
# Every kind of wrong usage exits 2, names the problem on stderr, prints
# the usage line and writes nothing to stdout. None of these touch a
# device, so the URI need not even be valid.
. "$(dirname "$0")/lib.sh"

# usage PATTERN ARGS...
usage() {
	local pat=$1
	shift
	expect 2 "$pat" "$@" || return
	grep -q "^usage: nvq" "$TMP/err" ||
		fail "nvq $*: no usage line on stderr"
	[ -s "$TMP/out" ] && fail "nvq $*: wrote to stdout on a usage error"
}

D="-d $TMP/data"

usage "missing command"
usage "unknown command 'bogus'" bogus
usage "no such command 'bogus'" help bogus
usage "unexpected argument 'x'" help read x

# positional arguments
usage "missing URI" read -n 1 -c 1 $D
usage "missing URI" id-ctrl
usage "unexpected argument 'extra'" read emu: extra -n 1 -c 1 $D
usage "unexpected argument 'extra'" id-ctrl emu: extra

# required options
usage "missing -d/--data" read emu: -n 1 -c 1
usage "missing -n/--namespace-id" read emu: -c 1 $D
usage "missing -c/--block-count" read emu: -n 1 $D
usage "missing -n/--namespace-id" id-ns emu:
usage "missing -d/--data" write emu: -n 1
usage "missing -n/--namespace-id" flush emu:
usage "missing -c/--block-count" write-zeroes emu: -n 1
usage "missing -c/--block-count" trim emu: -n 1 -s 0

# unknown options, options a command does not take, missing values
usage "unknown option '--bogus'" read emu: -n 1 -c 1 $D --bogus
usage "unknown option '-q'" read emu: -n 1 -c 1 $D -q
usage "unknown option '-c'" flush emu: -n 1 -c 1
usage "unknown option '-d'" write-zeroes emu: -n 1 -c 1 $D
usage "unknown option '--output-format=json'" read emu: -n 1 -c 1 $D \
	--output-format=json
usage "unknown option '-n'" id-ctrl emu: -n 1
usage "-n/--namespace-id needs a value" read emu: -c 1 $D -n
usage "-n/--namespace-id needs a value" read emu: -c 1 $D --namespace-id
usage "-d/--data needs a value" write emu: -n 1 --data
usage "empty file name" write emu: -n 1 -d ""

# numbers: decimal or 0x hex only; no garbage, signs, overflow
usage "invalid value 'abc' for -n/--namespace-id" read emu: -n abc -c 1 $D
usage "invalid value '-1' for -s/--start-block" read emu: -n 1 -s -1 -c 1 $D
usage "invalid value '\+1' for -s/--start-block" read emu: -n 1 -s +1 -c 1 $D
usage "invalid value '0x' for -c/--block-count" read emu: -n 1 -c 0x $D
usage "invalid value '1x'" read emu: -n 1 -c 1x $D
usage "invalid value '1.5'" read emu: -n 1 -c 1.5 $D
usage "invalid value ' 1'" read emu: -n 1 -c " 1" $D
usage "invalid value '1k'" write-zeroes emu: -n 1 -c 1k
usage "invalid value ''" trim emu: -n 1 -c ""
usage "invalid value '0xg'" trim emu: -n 1 -c 0xg
usage "out of range" read emu: -n 1 -s 18446744073709551616 -c 1 $D
usage "out of range" read emu: -n 1 -s 99999999999999999999 -c 1 $D
usage "out of range" read emu: -n 1 -s 0x10000000000000000 -c 1 $D
usage "out of range \(max 4294967295\)" id-ns emu: -n 4294967296
usage "out of range" id-ns emu: --namespace-id=0x100000000
usage "at least 1" read emu: -n 1 -c 0 $D
usage "at least 1" write-zeroes emu: -n 1 --block-count=0x0
usage "namespace id 0 is not valid" id-ns emu: -n 0
usage "0xffffffff \\(all namespaces\\) is not valid for read" \
	read emu: -n 0xffffffff -c 1 $D
usage "0xffffffff \\(all namespaces\\) is not valid for id-ns" \
	id-ns emu: -n 4294967295

# output formats
usage "unknown output format 'yaml'" id-ctrl emu: -o yaml
usage "unknown output format 'binary' \(use normal or json\)" list -o binary
usage "unknown output format 'JSON'" id-ns emu: -n 1 --output-format JSON

# the largest values are accepted (and only then refused at run time)
expect 1 "" read emu:bad-uri -n 0xFFFFFFFE -s 18446744073709551615 \
	-c 0xffffffffffffffff $D

finish
