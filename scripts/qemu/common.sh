# shellcheck shell=sh disable=SC2034
# Shared by the QEMU harness scripts (sourced, POSIX sh).
#
# nvq_qemu_deps        check QEMU, busybox-static and a kernel with vfio
#                      modules; sets KVER and KERNEL, or prints why not and
#                      returns 77
# nvq_guest_build SRC BUILD
#                      build the guest programs without sanitizers in
#                      BUILD/vfio-guest and the initramfs around them
#                      (with fio and the fio engine when they build); sets
#                      GUEST_BIN and INITRD

nvq_qemu_deps() {
	pkgs="qemu-system-x86 linux-image-amd64 busybox-static"
	if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
		echo "SKIP: qemu-system-x86_64 not installed (apt-get install $pkgs)"
		return 77
	fi
	if ! command -v busybox >/dev/null 2>&1 ||
		ldd "$(command -v busybox)" >/dev/null 2>&1; then
		echo "SKIP: no static busybox (apt-get install busybox-static)"
		return 77
	fi
	KVER=${NVQ_QEMU_KVER:-}
	if [ -z "$KVER" ]; then
		for d in $(ls -1d /lib/modules/* 2>/dev/null | sort -rV); do
			v=$(basename "$d")
			if [ -r "/boot/vmlinuz-$v" ] &&
				ls "$d"/kernel/drivers/vfio/pci/vfio-pci.ko* >/dev/null 2>&1; then
				KVER=$v
				break
			fi
		done
	fi
	if [ -z "$KVER" ] || [ ! -r "/boot/vmlinuz-$KVER" ]; then
		echo "SKIP: no readable /boot/vmlinuz-* with vfio-pci modules (apt-get install $pkgs)"
		return 77
	fi
	KERNEL=/boot/vmlinuz-$KVER
	return 0
}

nvq_guest_build() {
	src=$1
	build=$2
	gdir=$build/vfio-guest
	mkdir -p "$build"
	(
		# One builder at a time; the others wait and reuse the result.
		flock 9
		if [ ! -f "$gdir/build.ninja" ]; then
			meson setup "$gdir" "$src" --buildtype=release \
				-Db_sanitize=none -Dwerror=false -Dtests=true \
				>"$build/vfio-guest-setup.log" 2>&1 ||
				{ cat "$build/vfio-guest-setup.log"; exit 1; }
		fi
		ninja -C "$gdir" tests/vfio/nvq-vfio-guest \
			tests/vfio/nvq-vfio-guest-errors tools/nvq \
			>"$build/vfio-guest-build.log" 2>&1 ||
			{ tail -n 40 "$build/vfio-guest-build.log"; exit 1; }
		bins="$gdir/tests/vfio/nvq-vfio-guest
			$gdir/tests/vfio/nvq-vfio-guest-errors $gdir/tools/nvq"
		# nvq-perf is for the kernel comparison only: the matrix does
		# not need it.
		if ninja -C "$gdir" tools/perf/nvq-perf \
			>>"$build/vfio-guest-build.log" 2>&1; then
			bins="$bins $gdir/tools/perf/nvq-perf"
		else
			echo "vfio-guest: nvq-perf did not build (see $build/vfio-guest-build.log)" >&2
		fi
		if command -v fio >/dev/null 2>&1; then
			bins="$bins $(command -v fio)"
			# The engine, for the vfio-fio entry. A fio source tree
			# fetched after the setup needs a reconfigure to count.
			fsrc=$src/build-deps/$(fio --version)
			if ! ninja -C "$gdir" -t targets all 2>/dev/null |
				grep -q '^fio/libnvq_fio.so:' &&
				[ -f "$fsrc/fio.h" ]; then
				meson setup --reconfigure "$gdir" "$src" \
					>>"$build/vfio-guest-setup.log" 2>&1 ||
					{ tail -n 40 "$build/vfio-guest-setup.log"; exit 1; }
			fi
			if ninja -C "$gdir" fio/libnvq_fio.so \
				>>"$build/vfio-guest-build.log" 2>&1; then
				bins="$bins $gdir/fio/libnvq_fio.so"
			else
				echo "vfio-guest: the fio engine did not build (see $build/vfio-guest-build.log)" >&2
			fi
		fi
		stale=
		[ -f "$gdir/initramfs.cpio.gz" ] || stale=1
		for f in $bins "$src"/scripts/qemu/guest-init.sh \
			"$src"/scripts/qemu/build-initramfs.sh; do
			[ -n "$(find "$f" -newer "$gdir/initramfs.cpio.gz" \
				2>/dev/null)" ] && stale=1
		done
		if [ -n "$stale" ]; then
			# shellcheck disable=SC2086
			sh "$src/scripts/qemu/build-initramfs.sh" \
				"$gdir/initramfs.cpio.gz" "$KVER" $bins || exit 1
		fi
	) 9>"$build/vfio-guest.lock" || return 1
	GUEST_BIN=$gdir
	INITRD=$gdir/initramfs.cpio.gz
	return 0
}
