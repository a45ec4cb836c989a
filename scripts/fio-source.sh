#!/bin/sh
# Fetch fio's source tree, the same version as the fio binary that will
# load the nvq ioengine (Debian's package), and configure it so that its
# headers can build an external engine. Prints the tree's path last.
#
# usage: scripts/fio-source.sh [DIR]      (run from anywhere)
#   DIR defaults to build-deps in the repository; the tree lands in
#   DIR/fio-<upstream version>, e.g. build-deps/fio-3.33. An existing,
#   configured tree is kept.
# FIO_DEB_VERSION=3.33-3 picks the Debian source version instead of the
# installed fio's (or the candidate's when fio is not installed).
#
# apt-get source needs a deb-src line. This adds one, for the same mirror
# and suite as the system's Debian "deb" entry, to a private apt
# configuration in a temporary directory: the system's apt settings are not
# touched, and no root is needed except to install dpkg-dev if it is
# missing.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build-deps}

say() { echo "fio-source: $*" >&2; }
die() { say "$*"; exit 1; }

command -v apt-get >/dev/null 2>&1 || die "needs apt-get (Debian/Ubuntu)"

# The version to fetch: the installed fio's, else apt's candidate.
ver=${FIO_DEB_VERSION:-}
if [ -z "$ver" ]; then
	ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
fi
if [ -z "$ver" ]; then
	ver=$(apt-cache policy fio 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }')
fi
[ -n "$ver" ] || die "cannot tell which fio version to fetch:" \
	"install fio (apt-get install fio) or set FIO_DEB_VERSION"
upstream=${ver#*:}
upstream=${upstream%-*}
tree=$dest/fio-$upstream

if [ -f "$tree/fio.h" ] && [ -f "$tree/config-host.h" ]; then
	echo "$tree"
	exit 0
fi

if ! command -v dpkg-source >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] ||
		die "dpkg-source is missing: as root run" \
			"apt-get install -y --no-install-recommends dpkg-dev"
	say "installing dpkg-dev (for dpkg-source) through apt"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends dpkg-dev >/dev/null
fi

# shellcheck disable=SC1091
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "cannot read VERSION_CODENAME from /etc/os-release"

# "URI KEYRING" of the first enabled deb entry for $codename, from deb822
# (*.sources) and one-line (*.list) files.
mirror=$(
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '
		BEGIN { RS = ""; FS = "\n" }
		{
			types = uris = suites = key = ""; enabled = "yes"
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^#/ || !match($i, /^[A-Za-z-]+:/))
					continue
				k = tolower(substr($i, 1, RLENGTH - 1))
				v = substr($i, RLENGTH + 1)
				gsub(/^[ \t]+|[ \t]+$/, "", v)
				if (k == "types") types = v
				else if (k == "uris") uris = v
				else if (k == "suites") suites = v
				else if (k == "enabled") enabled = tolower(v)
				else if (k == "signed-by" && v ~ /^\//) key = v
			}
			if (enabled == "no" || (" " types " ") !~ / deb /)
				next
			if ((" " suites " ") !~ (" " cn " "))
				next
			split(uris, u, /[ \t]+/)
			print u[1], key
		}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '
		$1 == "deb" {
			i = 2; key = ""
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /^\[?signed-by=/) {
						key = $i
						sub(/^\[?signed-by=/, "", key)
						sub(/\]$/, "", key)
					}
					if ($i ~ /\]$/) { i++; break }
				}
			}
			if ($(i + 1) == cn) print $i, key
		}' "$f"
	done | head -n 1
)
if [ -z "$mirror" ]; then
	mirror="http://deb.debian.org/debian"
	say "no deb entry for $codename found; using $mirror"
fi
uri=${mirror%% *}
key=${mirror#* }
[ "$key" != "$mirror" ] || key=""
opts=""
[ -n "$key" ] && [ -f "$key" ] && opts="[signed-by=$key] "

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts" \
	"$tmp/src"
echo "deb-src ${opts}$uri $codename main" >"$tmp/sources.list"
set -- -o Dir::Etc::SourceList="$tmp/sources.list" \
	-o Dir::Etc::SourceParts="$tmp/parts" \
	-o Dir::State::Lists="$tmp/lists" \
	-o Dir::Cache="$tmp/cache"
# As root, apt downloads as the _apt user, which cannot write to $tmp.
[ "$(id -u)" = 0 ] && set -- "$@" -o APT::Sandbox::User=root

say "fetching fio $ver source from $uri ($codename)"
apt-get "$@" -qq update >"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log" >&2; die "apt-get update of the deb-src index failed"; }
(cd "$tmp/src" && apt-get "$@" -qq source --only-source "fio=$ver") \
	>>"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log" >&2; die "apt-get source fio=$ver failed"; }
[ -f "$tmp/src/fio-$upstream/fio.h" ] ||
	die "apt-get source did not unpack fio-$upstream"

# fio's external engines need config-host.h; configure writes it without
# building anything. --disable-native as Debian's build does.
say "configuring fio-$upstream (headers only)"
(cd "$tmp/src/fio-$upstream" && ./configure --disable-native) \
	>"$tmp/configure.log" 2>&1 ||
	{ cat "$tmp/configure.log" >&2; die "fio's ./configure failed"; }
[ -f "$tmp/src/fio-$upstream/config-host.h" ] ||
	die "fio's ./configure wrote no config-host.h"

mkdir -p "$dest"
rm -rf "$tree"
mv "$tmp/src/fio-$upstream" "$tree"
say "fio $ver source ready"
echo "$tree"
