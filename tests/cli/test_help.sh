#!/bin/bash
# --help and -h of nvq and of every command exit 0 and print the usage;
# the same for the other programs given after nvq (nvq-latd).
. "$(dirname "$0")/lib.sh"

cmds="list id-ctrl id-ns read write flush write-zeroes trim format sanitize
smart-log error-log fw-log sanitize-log get-log
get-feature set-feature admin-passthru io-passthru"

for args in "--help" "-h" "help"; do
	if ok $args; then
		for c in $cmds; do
			grep -q "^  $c " "$TMP/out" ||
				fail "nvq $args does not list '$c'"
		done
	fi
done

for c in $cmds; do
	for h in "$c --help" "$c -h" "help $c"; do
		if ok $h; then
			head -1 "$TMP/out" | grep -q "^usage: nvq $c " ||
				fail "nvq $h: no usage line: $(head -1 "$TMP/out")"
		fi
	done
done

# the overview fits a terminal: no line above 79 columns, and every
# synopsis starts in the same column however long its command's name
if ok --help; then
	long=$(awk 'length($0) > 79' "$TMP/out")
	[ -z "$long" ] || fail "nvq --help: lines above 79 columns: $long"
	cols=$(grep -E '^  [a-z]' "$TMP/out" | grep -v '^  help ' |
		awk '{ print index($0, $2) }' | sort -u | wc -l)
	[ "$cols" = 1 ] || fail "nvq --help: synopses start in $cols columns"
fi

# --help wins over missing arguments, as in nvme-cli
ok read --help
ok write emu: --help

# COUNT is 1-based, unlike nvme-cli: the help must say so
for c in read write write-zeroes trim; do
	ok $c --help && grep -q "1-based" "$TMP/out" ||
		fail "nvq $c --help does not document the 1-based COUNT"
done

ok --version && grep -Eq '^nvq [0-9]' "$TMP/out" ||
	fail "nvq --version: $(cat "$TMP/out")"

# The other installed programs, named after nvq: nvq-latd ...
for prog in "${@:2}"; do
	name=$(basename "$prog")
	for h in --help -h; do
		if "$prog" $h >"$TMP/out" 2>"$TMP/err" && [ ! -s "$TMP/err" ]; then
			head -1 "$TMP/out" | grep -q "^usage: $name " ||
				fail "$name $h: no usage line: $(head -1 "$TMP/out")"
			long=$(awk 'length > 79' "$TMP/out")
			[ -z "$long" ] ||
				fail "$name $h: lines above 79 columns: $long"
		else
			fail "$name $h failed: $(cat "$TMP/err")"
		fi
	done
	"$prog" --version >"$TMP/out" 2>&1 && grep -Eq "^$name [0-9]" "$TMP/out" ||
		fail "$name --version: $(cat "$TMP/out")"
done

finish
