// SPDX-License-Identifier: MIT
/*
 * Small readers of sysfs and procfs, and the PCI address parser.
 *
 * Only libc here: the nvq tool compiles this file too (sysfs.h says why),
 * so it must not reach for the library's error reporting. Callers turn
 * the negative errno into their own message.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

int nvq_sysfs_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, err = 0;
	ssize_t n;
	char more;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs hands an attribute over in one read, a regular file (a
	 * test's fake tree) need not */
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	/* a full buffer: only the end of the file makes the text whole */
	while (!err && len == size - 1) {
		n = read(fd, &more, 1);
		if (n < 0 && errno == EINTR)
			continue;
		err = n < 0 ? -errno : n ? -EOVERFLOW : 0;
		break;
	}
	close(fd);
	if (!err && memchr(buf, '\0', len))
		err = -EINVAL;
	if (err) {
		buf[0] = '\0';
		return err;
	}
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	return (int)len;
}

int nvq_sysfs_read_long(const char *path, int base, long *out)
{
	char buf[32], *end;
	long v;
	int n;

	n = nvq_sysfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* strtol would skip leading blanks and take a '+': no file has them */
	if (!n || !(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtol(buf, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int nvq_sysfs_link_name(const char *path, char *buf, size_t size)
{
	char target[PATH_MAX];
	const char *base;
	size_t len;
	ssize_t n;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	n = readlink(path, target, sizeof(target));
	if (n < 0)
		return -errno;
	/* readlink() does not say that it cut the target short */
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	len = strlen(base);
	if (!len)
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, base, len + 1);
	return (int)len;
}

/*
 * A hex field of 1..@max digits at *@p, before @end; the character after
 * it must not be a digit too, so "12345:" is no 4-digit domain.
 */
static bool hex_field(const char **p, const char *end, unsigned int max,
		      unsigned int *out)
{
	unsigned int v = 0, n = 0;
	const char *s = *p;

	for (; s < end; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			break;
		if (n == max)
			return false;
		v = v * 16 + d;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool skip(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return false;
	(*p)++;
	return true;
}

int nvq_pci_parse_bdf(const char *s, size_t len, char *out, size_t size)
{
	const char *p = s, *end = s + len;
	unsigned int dom = 0, bus, dev, fn;
	size_t colons = 0;
	int n;

	for (size_t i = 0; i < len; i++)
		colons += s[i] == ':';
	/* two colons: the domain is there */
	if (colons == 2 &&
	    (!hex_field(&p, end, 4, &dom) || !skip(&p, end, ':')))
		return -EINVAL;
	if (!hex_field(&p, end, 2, &bus) || !skip(&p, end, ':') ||
	    !hex_field(&p, end, 2, &dev) || !skip(&p, end, '.') ||
	    !hex_field(&p, end, 1, &fn) || p != end)
		return -EINVAL;
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	n = snprintf(out, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return n >= 0 && (size_t)n < size ? 0 : -EINVAL;
}
