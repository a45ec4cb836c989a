#!/bin/sh
# Build the guest's initramfs for the vfio system tests: busybox, the
# kernel modules vfio needs (vfio, vfio_iommu_type1, vfio-pci), nvme (the
# kernel driver the comparison runs against), qemu_fw_cfg (the test
# script comes in through fw_cfg) with their dependencies from
# modules.dep, the guest init script, and the given programs with the
# shared libraries ldd names.
#
# usage: build-initramfs.sh [-m 'MODULE...'] OUT.cpio.gz KVER PROGRAM...
#        build-initramfs.sh --add OUT.cpio.gz PROGRAM...
# -m adds kernel modules (with their dependencies) to the default ones.
# --add packs the programs and their libraries alone: an archive to
# append to a full one (the kernel unpacks concatenated archives in
# turn), for an entry that needs programs the others do not.
set -eu

add=
extra_mods=
if [ "${1:-}" = -m ]; then
	extra_mods=$2
	shift 2
fi
if [ "${1:-}" = --add ]; then
	add=1
	out=$2
	kver=
else
	out=$1
	kver=$2
fi
shift 2
here=$(cd "$(dirname "$0")" && pwd)
moddir=/lib/modules/$kver

# programs PROGRAM...: into /nvq/bin, with the shared libraries ldd
# names in /nvq/lib (the loader where it is named, and under its
# canonical x86-64 name too).
programs() {
	for prog in "$@"; do
		cp "$prog" "$root/nvq/bin/"
		ldd "$prog" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }' |
		while read -r lib; do
			case $lib in
			*/ld-linux*) mkdir -p "$root$(dirname "$lib")"
				cp -L "$lib" "$root$lib" ;;
			*) cp -L "$lib" "$root/nvq/lib/" ;;
			esac
		done
	done
	# The dynamic loader under its canonical x86-64 name too.
	if [ -e /lib64/ld-linux-x86-64.so.2 ] && [ ! -e "$root/lib64/ld-linux-x86-64.so.2" ]; then
		mkdir -p "$root/lib64"
		cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
	fi
}

# pack: the cpio archive of $root, gzipped, as $out.
pack() {
	tmp=$out.tmp.$$
	cpio=cpio
	command -v cpio >/dev/null 2>&1 || cpio="$busybox cpio"
	# shellcheck disable=SC2086
	(cd "$root" && find . | $cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp"
	mv "$tmp" "$out"
}

if [ -n "$add" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/nvq-initramfs.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	root=$work/root
	mkdir -p "$root/nvq/bin" "$root/nvq/lib"
	busybox=$(command -v busybox || true)
	programs "$@"
	pack
	exit 0
fi

busybox=$(command -v busybox || true)
if [ -z "$busybox" ]; then
	echo "build-initramfs: no busybox (apt-get install busybox-static)" >&2
	exit 1
fi
if ldd "$busybox" >/dev/null 2>&1; then
	echo "build-initramfs: $busybox is not static (apt-get install busybox-static)" >&2
	exit 1
fi
[ -f "$moddir/modules.dep" ] || { echo "build-initramfs: no $moddir/modules.dep" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/nvq-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/etc" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/nvq/bin" "$root/nvq/lib" \
	"$root/lib/modules/$kver"

cp "$busybox" "$root/bin/busybox"
for app in $("$busybox" --list); do
	[ "$app" = busybox ] || ln -sf busybox "$root/bin/$app"
done

# Modules and everything they depend on, uncompressed, with a
# modules.dep that lists only them.
want="vfio vfio_iommu_type1 vfio-pci vfio_pci nvme qemu_fw_cfg
	crc64_rocksoft_generic crct10dif_generic $extra_mods"
deps=$work/modules.dep.in
: >"$deps"
resolve() { # module name -> its path and its dependencies' paths
	n=$(echo "$1" | tr - _)
	awk -v n="$n" -F: '{
		p = $1; b = p; sub(/.*\//, "", b); sub(/\.ko.*$/, "", b);
		gsub(/-/, "_", b);
		if (b == n) { print p; m = split($2, d, " ");
			for (i = 1; i <= m; i++) print d[i]; exit }
	}' "$moddir/modules.dep"
}
for m in $want; do
	resolve "$m" >>"$deps"
done
sort -u "$deps" -o "$deps"
while read -r p; do
	[ -n "$p" ] || continue
	dst=$root/lib/modules/$kver/$(echo "$p" | sed 's/\.ko\..*$/.ko/')
	mkdir -p "$(dirname "$dst")"
	case $p in
	*.ko.xz) xz -dc "$moddir/$p" >"$dst" ;;
	*.ko.zst) zstd -qdc "$moddir/$p" >"$dst" ;;
	*.ko.gz) gzip -dc "$moddir/$p" >"$dst" ;;
	*) cp "$moddir/$p" "$dst" ;;
	esac
done <"$deps"
# modules.dep for the copied modules, names normalised to .ko.
awk -v list="$deps" 'BEGIN { while ((getline l < list) > 0) keep[l] = 1 }
	{ split($0, f, ":"); if (f[1] in keep) print }' "$moddir/modules.dep" |
	sed 's/\.ko\.[a-z]*/.ko/g' >"$root/lib/modules/$kver/modules.dep"
[ -s "$root/lib/modules/$kver/modules.dep" ] ||
	{ echo "build-initramfs: no vfio modules in $moddir" >&2; exit 1; }

programs "$@"

cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"
echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
echo "nvq:x:1000:1000:nvq:/tmp:/bin/sh" >>"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "nvq:x:1000:" >>"$root/etc/group"

pack
