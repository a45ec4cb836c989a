#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf says what the machine did to the run (fields under
# jobs[0].nvq): loadavg_start (three numbers), other_cpus, busy and
# populating, and the text's "machine" / "warning" / "note" lines.
#  - populating: writing fresh emulator media on 4 KiB pages (thp=0)
#    faults once per page, so it is true; the same writes to media faulted
#    in at creation (populate=1) take far fewer faults (not none under a
#    sanitizer, whose shadow memory is populated too);
#  - busy: with two busy processes beside it on every CPU, other work
#    takes far more than a quarter of the CPUs, so it is true and the text
#    warns. No timing is asserted, only what a busy machine makes certain.
PERF=${1:?usage: test_machine.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
hogs=
cleanup() {
	[ -n "$hogs" ] && kill $hogs 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

run() { # NAME URI ARGS...
	name=$1 uri=$2
	shift 2
	"$PERF" -d "$uri" --bs 4k --qd 4 --json "$@" >"$dir/$name.json" \
		2>"$dir/$name.err" || {
		echo "FAIL: nvq-perf $uri $* failed:"
		cat "$dir/$name.err"
		exit 1
	}
}
field() { # NAME EXPR over n = jobs[0]["nvq"]
	python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["jobs"][0]["nvq"]
print(eval(sys.argv[2]))' "$dir/$1.json" "$2"
}

run fresh "emu:size=64M,thp=0" --rw write --size 64M --ios 8192
run populated "emu:size=64M,thp=0,populate=1" --rw write --size 64M \
	--ios 8192
minf() { python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["jobs"][0]["minf"])' "$dir/$1.json"; }
echo "populating: fresh $(field fresh 'n["populating"]') ($(minf fresh)" \
	"faults), populate=1 $(field populated 'n["populating"]')" \
	"($(minf populated) faults)"
[ "$(field fresh 'n["populating"]')" = True ] ||
	{ echo "FAIL: 8192 first writes to fresh media not reported"; exit 1; }
[ $(($(minf populated) * 4)) -lt "$(minf fresh)" ] ||
	{ echo "FAIL: populate=1 did not fault the media in at creation"; exit 1; }
la='len(n["loadavg_start"]) == 3 and min(n["loadavg_start"]) >= 0'
[ "$(field fresh "$la")" = True ] ||
	{ echo "FAIL: loadavg_start: $(field fresh 'n.get("loadavg_start")')"
	  exit 1; }

ncpu=$(nproc)
i=0
while [ $i -lt $((ncpu * 2)) ]; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	i=$((i + 1))
done
"$PERF" -d emu:size=16M --rw randread --bs 4k --qd 4 --time 1s \
	>"$dir/busy.txt" 2>&1 || { cat "$dir/busy.txt"; exit 1; }
run busy emu:size=16M --rw randread --time 1s
kill $hogs
hogs=
echo "busy: $(field busy 'n["busy"], n.get("other_cpus"), n.get("busy_why")')"
[ "$(field busy 'n["busy"] and n["other_cpus"] > 0')" = True ] ||
	{ echo "FAIL: a machine with $((ncpu * 2)) busy loops not busy"; exit 1; }
grep -q "^  warning      : a busy machine" "$dir/busy.txt" ||
	{ echo "FAIL: no busy warning in the text:"; cat "$dir/busy.txt"; exit 1; }
grep -q "^  machine      : load " "$dir/busy.txt" ||
	{ echo "FAIL: no machine line in the text"; exit 1; }
echo "ok"
