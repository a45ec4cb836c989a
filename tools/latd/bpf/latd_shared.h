/* SPDX-License-Identifier: MIT */
/*
 * What the BPF program (latd.bpf.c) and its loader (activity_bpf.c)
 * share: the layout of the memory-mapped counter array and the event.
 * Plain C types only: this header is compiled for the BPF target too,
 * where the C library's headers are not available.
 */
#ifndef NVQ_LATD_SHARED_H
#define NVQ_LATD_SHARED_H

/* Must equal LATD_MAX_DISKS (latd.h; activity_bpf.c asserts it). */
#define LATD_BPF_SLOTS 64

/*
 * One element of the "area" array per possible CPU: that CPU's counter
 * and idle flag of every slot. A slot's pair shares its cache line, so an
 * issue touches one line of the array; LATD_BPF_SLOTS * 16 = 1024 bytes,
 * a multiple of 64, so element i starts on a cache line of its own (the
 * mmap()ed array starts on a page) and no two CPUs ever write one line.
 *
 * An idle flag is a 32-bit word because BPF's compare-and-exchange works
 * on 32- and 64-bit words only; userspace sees its least significant byte
 * (latd_bpf_idle() returns a uint8_t *), whose other three bytes stay 0,
 * so a byte store of 1 makes the word 1.
 */
struct latd_slot {
	unsigned long long count;
	unsigned int idle;
	unsigned int pad;
};

struct latd_area {
	struct latd_slot slot[LATD_BPF_SLOTS];
};

/* The idle -> active event, written to the ring buffer. */
struct latd_event {
	unsigned int slot;
	unsigned int cpu;
};

#endif
