# Shared by the cli tests: sourced with the nvq binary as $1.
# Each test counts its failures and ends with `finish`.
set -u

NVQ=${1:-}
if [ -z "$NVQ" ] || [ ! -x "$NVQ" ]; then
	echo "usage: $0 path/to/nvq" >&2
	exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nvq-cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

show_output() {
	sed 's/^/    stdout: /' "$TMP/out" | head -20 >&2
	sed 's/^/    stderr: /' "$TMP/err" | head -20 >&2
}

# expect RC PATTERN ARGS...: run nvq ARGS, stdout to $TMP/out and stderr to
# $TMP/err; the exit status must be RC and, when PATTERN is not empty,
# stderr must match it (grep -E). Returns non-zero on a mismatch.
expect() {
	local want=$1 pat=$2 rc
	shift 2
	"$NVQ" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "nvq $*: exit status $rc, expected $want"
		show_output
		return 1
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "nvq $*: stderr does not match /$pat/"
		show_output
		return 1
	fi
	return 0
}

# ok ARGS...: nvq ARGS must succeed with nothing on stderr.
ok() {
	expect 0 "" "$@" || return 1
	if [ -s "$TMP/err" ]; then
		fail "nvq $*: succeeded but wrote to stderr"
		show_output
		return 1
	fi
	return 0
}

# same FILE1 FILE2 WHAT: the two files must be identical.
same() {
	if ! cmp -s "$1" "$2"; then
		fail "$3: $(cmp "$1" "$2" 2>&1 | head -1)"
		return 1
	fi
	return 0
}

need_python() {
	if ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP: python3 not found" >&2
		exit 77
	fi
}

finish() {
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed" >&2
		exit 1
	fi
	exit 0
}
