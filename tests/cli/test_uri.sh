#!/bin/bash
# A device URI's /NSID (the library's grammar: nvq_open() reads it,
# nvq_ctrl_uri_nsid() returns it) names the namespace of every command
# that takes -n: -n becomes optional, both given must agree (usage error,
# exit 2, naming both), an inactive one fails the open (exit 1) naming the
# active ones, a malformed one fails with a clear message. nvq-perf's -d
# reads the same grammar (malformed: usage error). The fio engine's
# filename=/uri= is tested in tests/fio (case uri-nsid).
# usage: test_uri.sh NVQ NVQ_PERF
. "$(dirname "$0")/lib.sh"
PERF=${2:?usage: test_uri.sh NVQ NVQ_PERF}

D="emu:file=$TMP/d.img,size=1M,ns=2" # 2 namespaces of 256 4 KiB blocks
head -c 16384 /dev/urandom >"$TMP/data"
head -c 16384 /dev/zero >"$TMP/zero"

# Every command that takes -n runs on /2 without it.
ok write "$D/2" -s 8 -d "$TMP/data"
ok read "$D/2" -s 8 -c 4 -d "$TMP/back" &&
	same "$TMP/data" "$TMP/back" "read $D/2 after write $D/2"
# ... and it was namespace 2: -n 2 sees the data, namespace 1 does not
ok read "$D" -n 2 -s 8 -c 4 -d "$TMP/back" &&
	same "$TMP/data" "$TMP/back" "read -n 2 after write $D/2"
ok read "$D/1" -s 8 -c 4 -d "$TMP/back" &&
	same "$TMP/zero" "$TMP/back" "namespace 1 after write $D/2"
# the same namespace in both places is fine
ok read "$D/2" -n 2 -s 8 -c 4 -d "$TMP/back"
ok write-zeroes "$D/2" -s 8 -c 1
ok trim "$D/2" -s 9 -c 1
ok read "$D" -n 2 -s 8 -c 2 -d "$TMP/back" &&
	same <(head -c 8192 /dev/zero) "$TMP/back" "write-zeroes/trim on $D/2"
ok flush "$D/2"
if ok id-ns "$D/2" && ! grep -q "Identify Namespace 2" "$TMP/out"; then
	fail "id-ns $D/2 does not show namespace 2"
	show_output
fi
if ok id-ns "$D/2" -o json &&
	! grep -q '"nsze" *: *256' "$TMP/out"; then
	fail "id-ns $D/2 -o json: no nsze 256"
	show_output
fi

# -n and /NSID disagree: usage error naming both
both="-n 1 and the URI's /2 \\($D/2\\) name different namespaces"
expect 2 "$both" id-ns "$D/2" -n 1
expect 2 "$both" read "$D/2" -n 1 -c 1 -d "$TMP/back"
expect 2 "$both" write "$D/2" -n 1 -d "$TMP/data"
expect 2 "$both" write-zeroes "$D/2" -n 1 -c 1
expect 2 "$both" trim "$D/2" -n 1 -c 1
expect 2 "$both" flush "$D/2" -n 1
expect 2 "$both" format "$D/2" -n 1 -f
expect 2 "-n 0xffffffff and the URI's /2" flush "$D/2" -n 0xffffffff
# a mismatched write must not have written
ok read "$D" -n 1 -s 0 -c 4 -d "$TMP/back" &&
	same "$TMP/zero" "$TMP/back" "namespace 1 after a refused write"

# neither: still a usage error (the URI's '/' is its file's path)
expect 2 "missing -n/--namespace-id \\(or a /NSID" id-ns "$D"
expect 2 "missing -n/--namespace-id" read emu: -c 1 -d "$TMP/back"
for cmd in write-zeroes trim; do
	expect 2 "missing -n/--namespace-id" $cmd "$D" -c 1
done
expect 2 "missing -n/--namespace-id" flush "$D"
expect 2 "missing -n/--namespace-id \\(or a /NSID" format "$D" -f
# format takes the namespace from /2 as well
if ok format "$D/2" -f && ! grep -q "namespace:2" "$TMP/out"; then
	fail "format $D/2 did not format namespace 2"
	show_output
fi

# a namespace that is not active: the open fails, naming the active ones
inactive="namespace 3 is not active \\(active: 1, 2\\)"
expect 1 "$inactive" id-ns "$D/3"
expect 1 "$inactive" read "$D/3" -c 1 -d "$TMP/back"
expect 1 "$inactive" write "$D/3" -d "$TMP/data"
expect 1 "$inactive" flush "$D/3"
expect 1 "namespace 2 is not active \\(active: 1\\)" trim emu:/2 -c 1

# malformed suffixes: the library says what is wrong (nvq: exit 1, as for
# any URI that does not open); commands without -n read them too
for base in emu: vfio:0000:01:00.0; do
	for cmd in id-ctrl "id-ns -n 1" "write-zeroes -n 1 -c 1"; do
		# shellcheck disable=SC2086
		expect 1 "no namespace id after the URI's '/'" $cmd "$base/"
		for s in 0 x 1/2 4294967295 4294967296 18446744073709551617; do
			# shellcheck disable=SC2086
			expect 1 "bad namespace id '$s' after the URI's '/'" \
				$cmd "$base/$s"
		done
	done
done
expect 1 "bad namespace id 'x'" id-ns "vfio:0000:01:00.0/x,vectors=2" -n 1
# after a parameter whose value has a '/' of its own, text that is no
# NSID is the value's, for the emulator to judge
expect 1 "emu parameter 'size': bad size '1M/x'" id-ns emu:size=1M/x -n 1
expect 1 "emu parameter 'ns': bad number '2/1'" id-ns emu:ns=2/1/2

# nvq-perf -d: the same grammar; malformed, or against --nsid: exit 2
perf() {
	local want=$1 pat=$2 rc
	shift 2
	"$PERF" --ios 16 --qd 2 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "nvq-perf $*: exit status $rc, expected $want"
		show_output
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "nvq-perf $*: stderr does not match /$pat/"
		show_output
	fi
}
perf 0 "" -d "$D/2" --rw randread
grep -q "nsid 2:" "$TMP/out" || fail "nvq-perf -d $D/2: not on namespace 2"
perf 2 "--nsid 1: -d $D/2 names namespace 2" -d "$D/2" --nsid 1
perf 2 "namespace 3 is not active" -d "$D/3"
for base in emu: vfio:0000:01:00.0; do
	perf 2 "-d $base/: no namespace id after the URI's '/'" -d "$base/"
	for s in 0 x 1/2 4294967296; do
		perf 2 "-d $base/$s: bad namespace id '$s'" -d "$base/$s"
	done
done

finish
