// SPDX-License-Identifier: MIT
/*
 * The sysfs/procfs helpers and the PCI address parser (lib/support/sysfs.c),
 * which the vfio transport, the QoS code and the nvq tool share: a table of
 * addresses to accept and to refuse, the file readers on a temporary tree
 * (missing files, garbage, values that do not fit) and symlink names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sysfs.h"

static char dir[PATH_MAX];

/* @dir/@name, in a static buffer. */
static const char *at(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Create @dir/@name holding the @len bytes of @text. */
static void put(const char *name, const char *text, size_t len)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, len), len);
	CHECK_EQ(close(fd), 0);
}

#define PUT(name, text) put(name, text, sizeof(text) - 1)

static const struct {
	const char *in, *out;
} good_bdfs[] = {
	{ "0000:01:00.0", "0000:01:00.0" },
	{ "01:00.0", "0000:01:00.0" }, /* no domain: 0 */
	{ "1:2.3", "0000:01:02.3" }, /* short fields */
	{ "0:0:0.0", "0000:00:00.0" },
	{ "ABCD:EF:1F.7", "abcd:ef:1f.7" }, /* upper case, the largest dev/fn */
	{ "ffff:ff:1f.7", "ffff:ff:1f.7" },
	{ "0001:3b:00.1", "0001:3b:00.1" },
};

static const char *const bad_bdfs[] = {
	"",
	"zz",
	"0000:01:00.0.1",
	"0000:01:00",
	"01:00",
	"0000:01:20.0", /* device > 1f */
	"0000:01:00.8", /* function > 7 */
	"10000:01:00.0", /* 5-digit domain */
	"0000:100:00.0",
	"0000:01:000.0",
	"0000:01:00.00",
	" 01:00.0",
	"\t01:00.0",
	"01:00.0 ",
	"01:00.0\n",
	"0x0:01:00.0", /* what sscanf's %x took */
	"0x01:00.0",
	"+1:00.0",
	"-1:00.0",
	"0000::00.0",
	":01:00.0",
	"0000:01:00.",
	"0000:01.00:0",
	"0:0:0:00.0",
	"g1:00.0",
	"0000:01:00:0",
	"0000-01-00.0",
};

static void test_bdf(void)
{
	char out[NVQ_BDF_LEN];

	for (size_t i = 0; i < sizeof(good_bdfs) / sizeof(good_bdfs[0]); i++) {
		const char *in = good_bdfs[i].in;

		memset(out, 'x', sizeof(out));
		if (nvq_pci_parse_bdf(in, strlen(in), out, sizeof(out)) ||
		    strcmp(out, good_bdfs[i].out)) {
			fprintf(stderr, "'%s': got '%.*s', want '%s'\n", in,
				(int)sizeof(out), out, good_bdfs[i].out);
			CHECK(0);
		}
	}
	for (size_t i = 0; i < sizeof(bad_bdfs) / sizeof(bad_bdfs[0]); i++) {
		const char *in = bad_bdfs[i];

		if (nvq_pci_parse_bdf(in, strlen(in), out, sizeof(out)) !=
		    -EINVAL) {
			fprintf(stderr, "'%s' was accepted\n", in);
			CHECK(0);
		}
	}

	/* Only @len bytes count: a URI goes on after the address. */
	CHECK_EQ(nvq_pci_parse_bdf("0000:01:00.0/1,vectors=2", 12, out,
				   sizeof(out)),
		 0);
	CHECK(!strcmp(out, "0000:01:00.0"));
	CHECK_EQ(nvq_pci_parse_bdf("01:00.0/1", 7, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "0000:01:00.0"));
	CHECK_EQ(nvq_pci_parse_bdf("0000:01:00.0", 11, out, sizeof(out)),
		 -EINVAL);
	CHECK_EQ(nvq_pci_parse_bdf("01:00.0\0", 8, out, sizeof(out)), -EINVAL);
	CHECK_EQ(nvq_pci_parse_bdf("0000:01:00.0", 0, out, sizeof(out)),
		 -EINVAL);
	/* an output that cannot hold the canonical form */
	CHECK_EQ(nvq_pci_parse_bdf("01:00.0", 7, out, NVQ_BDF_LEN - 1),
		 -EINVAL);
}

static void test_read(void)
{
	char buf[8];

	PUT("driver_name", "nvme\n");
	CHECK_EQ(nvq_sysfs_read(at("driver_name"), buf, sizeof(buf)), 4);
	CHECK(!strcmp(buf, "nvme"));

	/* trailing spaces go too (a model string is space padded) */
	PUT("model", "QEMU  \n");
	CHECK_EQ(nvq_sysfs_read(at("model"), buf, sizeof(buf)), 4);
	CHECK(!strcmp(buf, "QEMU"));

	PUT("empty", "");
	CHECK_EQ(nvq_sysfs_read(at("empty"), buf, sizeof(buf)), 0);
	CHECK(!strcmp(buf, ""));

	/* exactly full: 7 bytes in 8 */
	PUT("full", "1234567");
	CHECK_EQ(nvq_sysfs_read(at("full"), buf, sizeof(buf)), 7);
	CHECK(!strcmp(buf, "1234567"));

	/* one byte more, even a newline, is a value that does not fit */
	PUT("long", "12345678");
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(nvq_sysfs_read(at("long"), buf, sizeof(buf)), -EOVERFLOW);
	CHECK(!strcmp(buf, ""));
	PUT("long_nl", "1234567\n");
	CHECK_EQ(nvq_sysfs_read(at("long_nl"), buf, sizeof(buf)), -EOVERFLOW);

	/* binary garbage with a NUL byte in it is not text */
	PUT("nul", "12\0"
		   "34\n");
	CHECK_EQ(nvq_sysfs_read(at("nul"), buf, sizeof(buf)), -EINVAL);
	CHECK(!strcmp(buf, ""));

	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(nvq_sysfs_read(at("missing"), buf, sizeof(buf)), -ENOENT);
	CHECK(!strcmp(buf, ""));
	CHECK_EQ(nvq_sysfs_read(dir, buf, sizeof(buf)), -EISDIR);
	CHECK_EQ(nvq_sysfs_read(at("driver_name"), buf, 0), -EINVAL);
}

static void test_read_long(void)
{
	long v;

	PUT("numa_node", "1\n");
	CHECK_EQ(nvq_sysfs_read_long(at("numa_node"), 10, &v), 0);
	CHECK_EQ(v, 1);
	PUT("no_node", "-1\n");
	CHECK_EQ(nvq_sysfs_read_long(at("no_node"), 10, &v), 0);
	CHECK_EQ(v, -1);
	PUT("class", "0x010802\n");
	CHECK_EQ(nvq_sysfs_read_long(at("class"), 16, &v), 0);
	CHECK_EQ(v, 0x010802);
	PUT("bare_hex", "1b36");
	CHECK_EQ(nvq_sysfs_read_long(at("bare_hex"), 16, &v), 0);
	CHECK_EQ(v, 0x1b36);

	/* garbage: the value is left alone */
	v = 7;
	PUT("word", "n/a\n");
	CHECK_EQ(nvq_sysfs_read_long(at("word"), 10, &v), -EINVAL);
	PUT("tail", "12abc\n");
	CHECK_EQ(nvq_sysfs_read_long(at("tail"), 10, &v), -EINVAL);
	PUT("two", "1 2\n");
	CHECK_EQ(nvq_sysfs_read_long(at("two"), 10, &v), -EINVAL);
	PUT("lead", " 5\n");
	CHECK_EQ(nvq_sysfs_read_long(at("lead"), 10, &v), -EINVAL);
	PUT("plus", "+5\n");
	CHECK_EQ(nvq_sysfs_read_long(at("plus"), 10, &v), -EINVAL);
	PUT("minus", "-\n");
	CHECK_EQ(nvq_sysfs_read_long(at("minus"), 10, &v), -EINVAL);
	PUT("empty", "\n");
	CHECK_EQ(nvq_sysfs_read_long(at("empty"), 10, &v), -EINVAL);
	CHECK_EQ(v, 7);

	/* overflow: beyond a long, and beyond the reader's buffer */
	PUT("huge", "99999999999999999999\n");
	CHECK_EQ(nvq_sysfs_read_long(at("huge"), 10, &v), -ERANGE);
	PUT("tiny", "-99999999999999999999\n");
	CHECK_EQ(nvq_sysfs_read_long(at("tiny"), 10, &v), -ERANGE);
	PUT("longer", "1234567890123456789012345678901234567890\n");
	CHECK_EQ(nvq_sysfs_read_long(at("longer"), 10, &v), -EOVERFLOW);
	CHECK_EQ(v, 7);

	CHECK_EQ(nvq_sysfs_read_long(at("missing"), 10, &v), -ENOENT);
}

static void test_link_name(void)
{
	char buf[16];

	CHECK_EQ(symlink("../../../bus/pci/drivers/vfio-pci", at("driver")), 0);
	CHECK_EQ(nvq_sysfs_link_name(at("driver"), buf, sizeof(buf)), 8);
	CHECK(!strcmp(buf, "vfio-pci"));

	/* a target without a slash is its own name; dangling is fine */
	CHECK_EQ(symlink("42", at("iommu_group")), 0);
	CHECK_EQ(nvq_sysfs_link_name(at("iommu_group"), buf, sizeof(buf)), 2);
	CHECK(!strcmp(buf, "42"));

	/* a name that does not fit is no name */
	CHECK_EQ(symlink("/x/a_very_long_driver_name", at("longlink")), 0);
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(nvq_sysfs_link_name(at("longlink"), buf, sizeof(buf)),
		 -ENAMETOOLONG);
	CHECK(!strcmp(buf, ""));

	CHECK_EQ(symlink("drivers/", at("slash")), 0);
	CHECK_EQ(nvq_sysfs_link_name(at("slash"), buf, sizeof(buf)), -EINVAL);

	/* not a link, no file */
	PUT("plain", "nvme\n");
	CHECK_EQ(nvq_sysfs_link_name(at("plain"), buf, sizeof(buf)), -EINVAL);
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(nvq_sysfs_link_name(at("missing"), buf, sizeof(buf)), -ENOENT);
	CHECK(!strcmp(buf, ""));
}

/* Remove the tree; a failed check leaves it behind to look at. */
static void cleanup(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	CHECK(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			CHECK_EQ(unlink(at(de->d_name)), 0);
	closedir(d);
	CHECK_EQ(rmdir(dir), 0);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nvq-sysfs-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir));

	test_bdf();
	test_read();
	test_read_long();
	test_link_name();

	cleanup();
	return 0;
}
