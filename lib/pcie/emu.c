// SPDX-License-Identifier: MIT
/*
 * The "emu" transport: the driver's view (struct nvq_transport_ops) of the
 * in-process emulated controller in emu/. A thin shim: every operation
 * maps to one emu call; errors carry the emulator's message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu.h"
#include "internal.h"
#include "transport.h"

struct emu_transport {
	struct nvq_transport t;
	struct nvq_emu *emu;
	int nr_cpus;
};

static struct nvq_emu *to_emu(struct nvq_transport *t)
{
	return ((struct emu_transport *)t)->emu;
}

static void emu_close(struct nvq_transport *t)
{
	struct emu_transport *et = (struct emu_transport *)t;

	nvq_emu_destroy(et->emu);
	free(et);
}

static uint32_t emu_reg_read32(struct nvq_transport *t, uint32_t off)
{
	return nvq_emu_reg_read32(to_emu(t), off);
}

static uint64_t emu_reg_read64(struct nvq_transport *t, uint32_t off)
{
	return nvq_emu_reg_read64(to_emu(t), off);
}

static void emu_reg_write32(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	nvq_emu_reg_write32(to_emu(t), off, val);
}

static void emu_reg_write64(struct nvq_transport *t, uint32_t off, uint64_t val)
{
	nvq_emu_reg_write64(to_emu(t), off, val);
}

static void emu_db_write(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	nvq_emu_db_write(to_emu(t), off, val);
}

static int emu_dma_map(struct nvq_transport *t, void *vaddr, size_t len,
		       uint64_t *iova)
{
	int ret = nvq_emu_dma_map(to_emu(t), vaddr, len, iova);

	if (ret)
		return nvq_err(ret, "%s", nvq_emu_errmsg());
	return 0;
}

static int emu_dma_unmap(struct nvq_transport *t, void *vaddr, size_t len)
{
	int ret = nvq_emu_dma_unmap(to_emu(t), vaddr, len);

	if (ret)
		return nvq_err(ret, "%s", nvq_emu_errmsg());
	return 0;
}

static int emu_irq_fd(struct nvq_transport *t, unsigned int vector)
{
	return nvq_emu_irq_fd(to_emu(t), vector);
}

static int emu_irq_cpu(struct nvq_transport *t, unsigned int vector)
{
	struct emu_transport *et = (struct emu_transport *)t;

	if (vector >= t->nr_vectors)
		return -1;
	return (int)(vector % (unsigned int)et->nr_cpus);
}

static int emu_irq_mask(struct nvq_transport *t, unsigned int vector,
			bool masked)
{
	return nvq_emu_irq_mask(to_emu(t), vector, masked);
}

static int emu_assist(struct nvq_transport *t)
{
	return nvq_emu_assist(to_emu(t));
}

static const struct nvq_transport_ops emu_ops = {
	.name = "emu",
	.close = emu_close,
	.reg_read32 = emu_reg_read32,
	.reg_read64 = emu_reg_read64,
	.reg_write32 = emu_reg_write32,
	.reg_write64 = emu_reg_write64,
	.db_write = emu_db_write,
	.dma_map = emu_dma_map,
	.dma_unmap = emu_dma_unmap,
	.irq_fd = emu_irq_fd,
	.irq_cpu = emu_irq_cpu,
	.irq_mask = emu_irq_mask,
	.assist = emu_assist,
};

struct nvq_emu *nvq_emu_transport_device(struct nvq_transport *t)
{
	return t && t->ops == &emu_ops ? to_emu(t) : NULL;
}

int nvq_emu_transport_open(const char *params, struct nvq_transport **out)
{
	struct nvq_emu_params p;
	struct emu_transport *et;
	long cpus;
	int ret;

	ret = nvq_emu_params_parse(params, &p);
	if (ret)
		return nvq_err(ret, "%s", nvq_emu_errmsg());
	et = calloc(1, sizeof(*et));
	if (!et)
		return nvq_err(-ENOMEM, "emu transport: out of memory");
	ret = nvq_emu_create(&p, &et->emu);
	if (ret) {
		free(et);
		return nvq_err(ret, "%s", nvq_emu_errmsg());
	}
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	et->nr_cpus = cpus > 0 ? (int)cpus : 1;
	et->t.ops = &emu_ops;
	et->t.host_cpu = true; /* the device thread runs on our CPUs */
	et->t.nr_vectors = nvq_emu_nr_vectors(et->emu);
	et->t.numa_node = -1;
	snprintf(et->t.name, sizeof(et->t.name), "emu:%s",
		 params ? params : "");
	*out = &et->t;
	return 0;
}
