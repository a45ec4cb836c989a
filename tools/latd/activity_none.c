// SPDX-License-Identifier: MIT
/*
 * nvq-latd built without the BPF activity source (no clang, bpftool or
 * libbpf at build time): opening it fails with the reason, so the daemon
 * falls back to polling; everything else is harmless.
 */
#include <errno.h>
#include <stdio.h>

#include "latd.h"

int latd_bpf_open(struct latd_bpf **b, char *err, size_t len)
{
	*b = NULL;
	if (err && len)
		snprintf(err, len,
			 "nvq-latd was built without BPF support (needs "
			 "clang, bpftool, libbpf-dev)");
	return -ENOSYS;
}

void latd_bpf_close(struct latd_bpf *b)
{
}

int latd_bpf_nr_cpus(const struct latd_bpf *b)
{
	return 0;
}

int latd_bpf_watch(struct latd_bpf *b, int slot, unsigned int major,
		   unsigned int minor)
{
	return -ENOSYS;
}

int latd_bpf_unwatch(struct latd_bpf *b, int slot)
{
	return -ENOSYS;
}

const uint64_t *latd_bpf_counter(struct latd_bpf *b, int slot, int cpu)
{
	return NULL;
}

uint8_t *latd_bpf_idle(struct latd_bpf *b, int slot, int cpu)
{
	return NULL;
}

int latd_bpf_fd(const struct latd_bpf *b)
{
	return -1;
}

int latd_bpf_drain(struct latd_bpf *b, void (*fn)(void *arg, int slot, int cpu),
		   void *arg)
{
	return 0;
}
