// SPDX-License-Identifier: MIT
/*
 * The BPF activity source where nvq-latd is built without BPF (no clang,
 * libbpf or bpftool at build time): latd_bpf_open() says so, and the
 * daemon polls /sys/block/DEV/stat instead.
 */
#include <errno.h>
#include <stdio.h>

#include "latd.h"

int latd_bpf_open(struct latd_bpf **b, char *err, size_t len)
{
	*b = NULL;
	snprintf(err, len,
		 "built without BPF: clang, libbpf or bpftool were missing "
		 "when nvq-latd was built");
	return -ENOSYS;
}

void latd_bpf_close(struct latd_bpf *b)
{
	(void)b;
}

int latd_bpf_nr_cpus(const struct latd_bpf *b)
{
	(void)b;
	return 0;
}

int latd_bpf_watch(struct latd_bpf *b, int slot, unsigned int major,
		   unsigned int minor)
{
	(void)b;
	(void)slot;
	(void)major;
	(void)minor;
	return -ENOSYS;
}

int latd_bpf_unwatch(struct latd_bpf *b, int slot)
{
	(void)b;
	(void)slot;
	return -ENOSYS;
}

const uint64_t *latd_bpf_counter(struct latd_bpf *b, int slot, int cpu)
{
	(void)b;
	(void)slot;
	(void)cpu;
	return NULL;
}

uint8_t *latd_bpf_idle(struct latd_bpf *b, int slot, int cpu)
{
	(void)b;
	(void)slot;
	(void)cpu;
	return NULL;
}

int latd_bpf_fd(const struct latd_bpf *b)
{
	(void)b;
	return -1;
}

int latd_bpf_drain(struct latd_bpf *b, void (*fn)(void *arg, int slot, int cpu),
		   void *arg)
{
	(void)b;
	(void)fn;
	(void)arg;
	return 0;
}
