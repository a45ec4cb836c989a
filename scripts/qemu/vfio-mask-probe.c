// SPDX-License-Identifier: MIT
/*
 * vfio-mask-probe: can vfio-pci mask a device's MSI-X vectors?
 *
 * What nvq's vfio transport asks when a waiter polls for the CPU latency
 * limit (lib/pcie/vfio.c, vfio_irq_mask()): VFIO_DEVICE_SET_IRQS with
 * VFIO_IRQ_SET_ACTION_MASK on the MSI-X index. This program asks the same
 * of a device bound to vfio-pci, with raw VFIO ioctls (no nvq, no
 * libvfn, no DMA mappings), and prints what the kernel said:
 *
 *   irq-info INDEX: count=N flags=... (maskable: yes/no)
 *   msix-mask: ok | errno=N (text)
 *   msix-unmask: ok | errno=N (text)
 *
 * usage: vfio-mask-probe DDDD:BB:DD.F
 * Exit 0 when every step up to the mask request worked (whatever the
 * answer to it), 1 when the device could not be opened.
 * Built by scripts/qemu/bench-qos-guest.sh for its QEMU guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *index_name(unsigned int i)
{
	switch (i) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		return "intx";
	case VFIO_PCI_MSI_IRQ_INDEX:
		return "msi";
	case VFIO_PCI_MSIX_IRQ_INDEX:
		return "msix";
	}
	return "?";
}

/* SET_IRQS on vector 0 of @index with DATA_NONE, or one eventfd. */
static int set_irqs(int dev, unsigned int index, unsigned int action, int efd,
		    unsigned int count)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int)];
	struct vfio_irq_set *s = (struct vfio_irq_set *)buf;

	memset(buf, 0, sizeof(buf));
	s->argsz = sizeof(*s) + (efd >= 0 ? sizeof(int) : 0);
	s->flags = action | (efd >= 0 ? VFIO_IRQ_SET_DATA_EVENTFD :
					VFIO_IRQ_SET_DATA_NONE);
	s->index = index;
	s->start = 0;
	s->count = count;
	if (efd >= 0)
		memcpy(s->data, &efd, sizeof(int));
	return ioctl(dev, VFIO_DEVICE_SET_IRQS, s) ? -errno : 0;
}

static void report(const char *what, int rc)
{
	if (rc)
		printf("%s: errno=%d (%s)\n", what, -rc, strerror(-rc));
	else
		printf("%s: ok\n", what);
}

int main(int argc, char **argv)
{
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	char path[256], link[256];
	int container, group, dev, efd, rc;
	unsigned int i;
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: vfio-mask-probe DDDD:BB:DD.F\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 argv[1]);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		fprintf(stderr, "vfio-mask-probe: %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	link[n] = '\0';
	container = open("/dev/vfio/vfio", O_RDWR);
	if (container < 0 ||
	    ioctl(container, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		fprintf(stderr, "vfio-mask-probe: /dev/vfio/vfio: %s\n",
			strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(link));
	group = open(path, O_RDWR);
	if (group < 0 || ioctl(group, VFIO_GROUP_GET_STATUS, &gs) ||
	    !(gs.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		fprintf(stderr, "vfio-mask-probe: %s: %s\n", path,
			group < 0 ? strerror(errno) : "not viable");
		return 1;
	}
	if (ioctl(group, VFIO_GROUP_SET_CONTAINER, &container) ||
	    (ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) &&
	     ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU))) {
		fprintf(stderr, "vfio-mask-probe: container: %s\n",
			strerror(errno));
		return 1;
	}
	dev = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, argv[1]);
	if (dev < 0) {
		fprintf(stderr, "vfio-mask-probe: %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	for (i = VFIO_PCI_INTX_IRQ_INDEX; i <= VFIO_PCI_MSIX_IRQ_INDEX; i++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = i };

		if (ioctl(dev, VFIO_DEVICE_GET_IRQ_INFO, &ii)) {
			printf("irq-info %s: errno=%d (%s)\n", index_name(i),
			       errno, strerror(errno));
			continue;
		}
		printf("irq-info %s: count=%u flags=0x%x%s%s%s%s (maskable: "
		       "%s)\n",
		       index_name(i), ii.count, ii.flags,
		       ii.flags & VFIO_IRQ_INFO_EVENTFD ? " eventfd" : "",
		       ii.flags & VFIO_IRQ_INFO_MASKABLE ? " maskable" : "",
		       ii.flags & VFIO_IRQ_INFO_AUTOMASKED ? " automasked" : "",
		       ii.flags & VFIO_IRQ_INFO_NORESIZE ? " noresize" : "",
		       ii.flags & VFIO_IRQ_INFO_MASKABLE ? "yes" : "no");
	}
	/* As nvq does: vector 0 of MSI-X on an eventfd, then mask it. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		perror("vfio-mask-probe: eventfd");
		return 1;
	}
	rc = set_irqs(dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_ACTION_TRIGGER,
		      efd, 1);
	report("msix-enable (ACTION_TRIGGER, 1 eventfd)", rc);
	if (rc)
		return 1;
	report("msix-mask (ACTION_MASK, vector 0)",
	       set_irqs(dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_ACTION_MASK,
			-1, 1));
	report("msix-unmask (ACTION_UNMASK, vector 0)",
	       set_irqs(dev, VFIO_PCI_MSIX_IRQ_INDEX,
			VFIO_IRQ_SET_ACTION_UNMASK, -1, 1));
	report("msix-disable (ACTION_TRIGGER, count 0)",
	       set_irqs(dev, VFIO_PCI_MSIX_IRQ_INDEX,
			VFIO_IRQ_SET_ACTION_TRIGGER, -1, 0));
	close(efd);
	close(dev);
	close(group);
	close(container);
	return 0;
}
