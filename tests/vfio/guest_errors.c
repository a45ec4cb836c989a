// SPDX-License-Identifier: MIT
/*
 * What a user sees when a vfio device cannot be used, run as root inside
 * the QEMU guest (scripts/qemu/): a controller bound to the kernel's nvme
 * driver, one with no driver, an IOMMU group that is not viable (another
 * device of the group is bound to nvme), a device opened twice, a user
 * without permission on /dev/vfio/N, and a user whose RLIMIT_MEMLOCK is
 * too low - and that the same user, given the group and enough memlock,
 * drives the controller without root.
 *
 * usage: nvq-vfio-guest-errors --vfio BDF [--nvme BDF] [--nodriver BDF]
 *                              [--not-viable BDF --blocker BDF]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define USER_ID 1000

static char uri[64];

static void set_uri(const char *bdf)
{
	snprintf(uri, sizeof(uri), "vfio:%s", bdf);
}

static void expect_fail(const char *bdf, int err, const char *needle,
			const char *needle2)
{
	struct nvq_ctrl *c = NULL;
	int rc;

	set_uri(bdf);
	rc = nvq_open(uri, NULL, &c);
	fprintf(stderr, "nvq-vfio-guest-errors: %s: %d: %s\n", uri, rc,
		nvq_errmsg());
	CHECK(!c);
	CHECK_EQ(rc, err);
	CHECK_MSG(needle);
	if (needle2)
		CHECK_MSG(needle2);
}

/* The /dev/vfio node of @bdf's IOMMU group. */
static void group_dev(const char *bdf, char *out, size_t len)
{
	char link[256], target[256];
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/iommu_group",
		 bdf);
	n = readlink(link, target, sizeof(target) - 1);
	CHECK(n > 0);
	target[n] = '\0';
	snprintf(out, len, "/dev/vfio/%s", strrchr(target, '/') + 1);
}

/* Run @fn in a child as USER_ID with RLIMIT_MEMLOCK @memlock. */
static void as_user(const char *bdf, rlim_t memlock,
		    void (*fn)(const char *bdf))
{
	struct rlimit rl = { memlock, memlock };
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (!pid) {
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(USER_ID) ||
		    setuid(USER_ID)) {
			perror("nvq-vfio-guest-errors: dropping root");
			_exit(2);
		}
		fn(bdf);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "nvq-vfio-guest-errors: child failed (%#x)\n",
			st);
		exit(1);
	}
}

static void no_permission(const char *bdf)
{
	char dev[64];

	group_dev(bdf, dev, sizeof(dev));
	expect_fail(bdf, -EACCES, "permission denied", dev);
}

static void low_memlock(const char *bdf)
{
	expect_fail(bdf, -ENOMEM, "RLIMIT_MEMLOCK is 16 KiB", "needs at least");
}

/* Enough to open, not for a large buffer: that allocation fails, the
 * controller stays usable. */
static void big_buffer(const char *bdf)
{
	struct nvq_ctrl *c = NULL;
	void *buf;

	set_uri(bdf);
	CHECK_EQ(nvq_open(uri, NULL, &c), 0);
	buf = nvq_dma_alloc(c, 16 << 20, -1);
	fprintf(stderr, "nvq-vfio-guest-errors: 16 MiB buffer: %s\n",
		nvq_errmsg());
	CHECK(!buf);
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf);
	CHECK_EQ(nvq_read_sync(c, 1, buf, 0, 1, NULL), 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

static void user_io(const char *bdf)
{
	struct nvq_ctrl *c = NULL;
	unsigned char *buf;
	int i;

	set_uri(bdf);
	CHECK_EQ(nvq_open(uri, NULL, &c), 0);
	buf = nvq_dma_alloc(c, 64 * 1024, -1);
	CHECK(buf);
	for (i = 0; i < 65536; i++)
		buf[i] = (unsigned char)(i * 7);
	CHECK_EQ(nvq_write_sync(c, 1, buf, 0, 8, NULL), 0);
	memset(buf, 0, 65536);
	CHECK_EQ(nvq_read_sync(c, 1, buf, 0, 8, NULL), 0);
	for (i = 0; i < 4096; i++)
		CHECK_EQ(buf[i], (unsigned char)(i * 7));
	nvq_dma_free(c, buf);
	nvq_close(c);
}

static void test_vfio_device(const char *bdf)
{
	struct nvq_ctrl *c = NULL, *c2 = NULL;
	char dev[64], u[96];

	/* Twice in one process: the group is taken. */
	set_uri(bdf);
	CHECK_EQ(nvq_open(uri, NULL, &c), 0);
	CHECK_EQ(nvq_open(uri, NULL, &c2), -EBUSY);
	CHECK(!c2);
	CHECK_MSG("busy");
	nvq_close(c);

	/* This kernel has no vfio cdev (6.1): iommufd cannot be forced;
	 * type1 can. */
	snprintf(u, sizeof(u), "%s,iommu=type1", uri);
	CHECK_EQ(nvq_open(u, NULL, &c), 0);
	nvq_close(c);
	if (access("/dev/iommu", F_OK)) {
		snprintf(u, sizeof(u), "%s,iommu=iommufd", uri);
		CHECK_EQ(nvq_open(u, NULL, &c), -ENOTSUP);
		CHECK_MSG("iommu=type1");
	}

	group_dev(bdf, dev, sizeof(dev));
	CHECK_EQ(chown(dev, 0, 0), 0);
	CHECK_EQ(chmod(dev, 0600), 0);
	as_user(bdf, 64 << 20, no_permission);

	/* The documented non-root setup: the group node, and memlock. */
	CHECK_EQ(chown(dev, USER_ID, USER_ID), 0);
	as_user(bdf, 16 << 10, low_memlock);
	as_user(bdf, 4 << 20, big_buffer);
	as_user(bdf, 64 << 20, user_io);
	CHECK_EQ(chown(dev, 0, 0), 0);
}

int main(int argc, char **argv)
{
	const char *vfio = NULL, *nvme = NULL, *nodrv = NULL;
	const char *nonviable = NULL, *blocker = NULL;
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--vfio"))
			vfio = argv[i + 1];
		else if (!strcmp(argv[i], "--nvme"))
			nvme = argv[i + 1];
		else if (!strcmp(argv[i], "--nodriver"))
			nodrv = argv[i + 1];
		else if (!strcmp(argv[i], "--not-viable"))
			nonviable = argv[i + 1];
		else if (!strcmp(argv[i], "--blocker"))
			blocker = argv[i + 1];
		else
			break;
	}
	if (i != argc || !vfio) {
		fprintf(stderr,
			"usage: nvq-vfio-guest-errors --vfio BDF [--nvme BDF] "
			"[--nodriver BDF] [--not-viable BDF --blocker BDF]\n");
		return 2;
	}
	expect_fail("0000:00:1f.6", -ENODEV, "no PCI device", NULL);
	if (nvme)
		expect_fail(nvme, -EBUSY, "not bound to vfio-pci but to nvme",
			    "nvq setup");
	if (nodrv)
		expect_fail(nodrv, -ENODEV, "has no driver", NULL);
	if (nonviable)
		expect_fail(nonviable, -EBUSY, "not viable",
			    blocker ? blocker : "bound");
	test_vfio_device(vfio);
	printf("nvq-vfio-guest-errors: ok\n");
	return 0;
}
