/* SPDX-License-Identifier: MIT */
/*
 * Small readers of sysfs and procfs, and the PCI address that names a
 * device there. The library (vfio transport, CPU latency QoS) and the nvq
 * tool share them; the tool compiles sysfs.c in itself, because libnvq.so
 * exports only the public API. Not installed.
 */
#ifndef NVQ_SYSFS_H
#define NVQ_SYSFS_H

#include <stddef.h>

/* "DDDD:BB:DD.F" and its NUL: what nvq_pci_parse_bdf() writes. */
#define NVQ_BDF_LEN 13

/*
 * Read the text file @path (a sysfs attribute, a procfs value) into @buf
 * of @size bytes, without trailing newlines and spaces. Returns its
 * length, or a negative errno: -EOVERFLOW when the file, newline
 * included, does not fit (a value cut short would read as another value),
 * -EINVAL when it holds a NUL byte. @buf is "" on error.
 */
int nvq_sysfs_read(const char *path, char *buf, size_t size);

/*
 * Read the file @path as one integer in @base (as strtol(): 16 takes an
 * optional 0x). 0, -EINVAL when the file holds anything else, -ERANGE
 * when the value does not fit a long, or the read's negative errno.
 */
int nvq_sysfs_read_long(const char *path, int base, long *out);

/*
 * The last component of the target of the symlink @path ("nvme" for
 * .../devices/0000:01:00.0/driver) into @buf of @size bytes. Returns its
 * length or a negative errno (-ENAMETOOLONG if it does not fit); @buf is
 * "" on error.
 */
int nvq_sysfs_link_name(const char *path, char *buf, size_t size);

/*
 * Parse the @len bytes at @s as a PCI address, DDDD:BB:DD.F or BB:DD.F
 * (domain 0): hex digits of either case, at most 4, 2, 2 and 1 of them,
 * device 0..1f, function 0..7, nothing else around them. Writes the
 * canonical lower-case DDDD:BB:DD.F (the name of its sysfs directory) to
 * @out of @size bytes (NVQ_BDF_LEN will do). 0, or -EINVAL (also when
 * @size is too small).
 */
int nvq_pci_parse_bdf(const char *s, size_t len, char *out, size_t size);

#endif /* NVQ_SYSFS_H */
