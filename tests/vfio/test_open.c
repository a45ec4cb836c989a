// SPDX-License-Identifier: MIT
/*
 * Opening "vfio:..." without a vfio device: URI parsing, and the messages
 * a user gets for each thing to fix, checked against a fake sysfs/dev
 * tree - a missing device, a device that is not NVMe, one bound to no
 * driver or to nvme, no IOMMU group, vfio not loaded, no iommufd cdev,
 * and no permission on /dev/vfio.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "transport.h"
#include "vfio.h"

static char root[256];

static void parse_ok(const char *s, const char *bdf, uint32_t nsid,
		     enum nvq_vfio_iommu_kind k, unsigned int vec)
{
	struct nvq_vfio_params p;

	if (nvq_vfio_parse(s, &p)) {
		fprintf(stderr, "parse '%s' failed: %s\n", s, nvq_errmsg());
		exit(1);
	}
	if (strcmp(p.bdf, bdf) || p.nsid != nsid || p.iommu != k ||
	    p.vectors != vec) {
		fprintf(stderr, "parse '%s': got %s/%u iommu %d vectors %u\n",
			s, p.bdf, p.nsid, p.iommu, p.vectors);
		exit(1);
	}
}

static void parse_bad(const char *s, const char *needle)
{
	struct nvq_vfio_params p;

	if (nvq_vfio_parse(s, &p) != -EINVAL) {
		fprintf(stderr, "parse '%s' did not fail\n", s);
		exit(1);
	}
	CHECK_MSG(needle);
}

static void test_parse(void)
{
	parse_ok("0000:01:00.0", "0000:01:00.0", 0, NVQ_VFIO_IOMMU_AUTO, 0);
	parse_ok("01:00.0", "0000:01:00.0", 0, NVQ_VFIO_IOMMU_AUTO, 0);
	parse_ok("1:2.3", "0000:01:02.3", 0, NVQ_VFIO_IOMMU_AUTO, 0);
	parse_ok("ABCD:0a:1F.7/3", "abcd:0a:1f.7", 3, NVQ_VFIO_IOMMU_AUTO, 0);
	parse_ok("0000:01:00.0,iommu=type1", "0000:01:00.0", 0,
		 NVQ_VFIO_IOMMU_TYPE1, 0);
	parse_ok("0000:01:00.0/2,vectors=4,iommu=iommufd", "0000:01:00.0", 2,
		 NVQ_VFIO_IOMMU_IOMMUFD, 4);
	parse_ok("0000:01:00.0,iommu=auto", "0000:01:00.0", 0,
		 NVQ_VFIO_IOMMU_AUTO, 0);

	parse_bad("", "no PCI address");
	parse_bad(NULL, "no PCI address");
	parse_bad("0000:01:00", "not a PCI address");
	parse_bad("0000:01:20.0", "not a PCI address");
	parse_bad("0000:01:00.8", "not a PCI address");
	parse_bad("00000:01:00.0", "not a PCI address");
	parse_bad("0000:01:00.0 ", "not a PCI address");
	parse_bad("0000:001:00.0", "not a PCI address");
	parse_bad("0000:01:00.0/0", "bad namespace id");
	parse_bad("0000:01:00.0/x", "bad namespace id");
	parse_bad("0000:01:00.0/", "bad namespace id");
	parse_bad("0000:01:00.0,iommu=x", "iommu=x");
	parse_bad("0000:01:00.0,vectors=0", "vectors=0");
	parse_bad("0000:01:00.0,vectors=99999", "vectors=99999");
	parse_bad("0000:01:00.0,bogus=1", "unknown option 'bogus=1'");
	parse_bad("0000:01:00.0,", "unknown option ''");
}

static void sh(const char *fmt, const char *a)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, a, a, a);
	if (system(cmd)) {
		fprintf(stderr, "command failed: %s\n", cmd);
		exit(1);
	}
}

/* A fake PCI function: class, driver link ("" = none), group (-1 = none). */
static void mkdev(const char *bdf, const char *cls, const char *drv, int grp)
{
	char d[300], cmd[1500];

	snprintf(d, sizeof(d), "%s/sys/bus/pci/devices/%s", root, bdf);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && mkdir -p '%s' && "
		 "echo %s > '%s/class'",
		 d, d, cls, d);
	sh("%s", cmd);
	if (drv[0]) {
		snprintf(cmd, sizeof(cmd),
			 "ln -s ../../../../bus/pci/drivers/%s '%s/driver'",
			 drv, d);
		sh("%s", cmd);
	}
	if (grp >= 0) {
		snprintf(cmd, sizeof(cmd),
			 "ln -s ../../../../kernel/iommu_groups/%d "
			 "'%s/iommu_group'",
			 grp, d);
		sh("%s", cmd);
	}
}

static int open_at(const char *params)
{
	struct nvq_transport *t = NULL;
	int rc = nvq_vfio_transport_open_at(root, params, &t);

	CHECK(rc < 0);
	return rc;
}

static void test_sysfs(void)
{
	mkdev("0000:01:00.0", "0x010802", "nvme", 7);
	mkdev("0000:02:00.0", "0x010802", "", 8);
	mkdev("0000:03:00.0", "0x020000", "e1000e", 9);
	mkdev("0000:04:00.0", "0x010802", "vfio-pci", -1);
	mkdev("0000:05:00.0", "0x010802", "vfio-pci", 10);

	CHECK_EQ(open_at("0000:09:00.0"), -ENODEV);
	CHECK_MSG("no PCI device 0000:09:00.0");
	CHECK_EQ(open_at("0000:03:00.0"), -ENODEV);
	CHECK_MSG("not an NVMe controller (PCI class 020000");
	CHECK_EQ(open_at("02:00.0"), -ENODEV);
	CHECK_MSG("not bound to vfio-pci (it has no driver)");
	CHECK_MSG("nvq setup 0000:02:00.0");
	CHECK_EQ(open_at("0000:01:00.0/1"), -EBUSY);
	CHECK_MSG("not bound to vfio-pci but to nvme");
	CHECK_MSG("nvq release 0000:01:00.0");
	CHECK_EQ(open_at("0000:04:00.0"), -ENODEV);
	CHECK_MSG("no IOMMU group");
	CHECK_MSG("intel_iommu=on");
	/* Bound and grouped, but vfio's device nodes are missing. */
	CHECK_EQ(open_at("0000:05:00.0"), -ENODEV);
	CHECK_MSG("/dev/vfio/vfio does not exist");
	CHECK_MSG("modprobe vfio-pci");
	CHECK_EQ(open_at("0000:05:00.0,iommu=iommufd"), -ENOTSUP);
	CHECK_MSG("no vfio cdev");
	CHECK_MSG("iommu=type1");
	/* Bad URIs come through nvq_open() too. */
	{
		struct nvq_ctrl *c = NULL;

		CHECK_EQ(nvq_open("vfio:zz", NULL, &c), -EINVAL);
		CHECK(!c);
		CHECK_MSG("not a PCI address");
	}
}

/* /dev/vfio/vfio exists but the user may not open it. */
static void test_permission(void)
{
	char path[512];
	pid_t pid;
	int st, fd;

	snprintf(path, sizeof(path), "%s/dev/vfio", root);
	sh("mkdir -p '%s'", path);
	snprintf(path, sizeof(path), "%s/dev/vfio/vfio", root);
	fd = open(path, O_CREAT | O_WRONLY, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(chmod(path, 0), 0);
	CHECK_EQ(chmod(root, 0755), 0);

	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		/* root ignores file modes: become nobody. */
		if (!geteuid() && (setgid(65534) || setuid(65534))) {
			perror("setuid");
			_exit(2);
		}
		CHECK_EQ(open_at("0000:05:00.0"), -EACCES);
		CHECK_MSG("permission denied");
		CHECK_MSG("/dev/vfio/vfio");
		CHECK_MSG("docs/vfio.md");
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	test_parse();
	snprintf(root, sizeof(root), "/tmp/nvq-vfio-open-XXXXXX");
	CHECK(mkdtemp(root));
	test_sysfs();
	test_permission();
	sh("rm -rf '%s'", root);
	printf("vfio open: ok\n");
	return 0;
}
