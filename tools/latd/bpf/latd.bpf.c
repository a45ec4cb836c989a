/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * nvq-latd's activity source: on every request the block layer issues,
 * count it for its (disk, CPU) and, on that pair's idle -> active
 * transition only, wake the daemon.
 *
 * tp_btf (a BTF-typed raw tracepoint) rather than tp/: it attaches by
 * name without tracefs mounted, and the kernel calls it directly instead
 * of first building the trace event's record. The few kernel structures
 * it reads are declared here with preserve_access_index: libbpf fixes
 * their offsets against the running kernel's BTF at load time (CO-RE), so
 * building needs no vmlinux.h and no BTF of the build host.
 *
 * The I/O path cost: three dependent loads for the disk, one hash lookup,
 * one inlined array lookup, one locked add, and one load of the idle flag
 * on the same cache line; the compare-and-exchange and the ring buffer
 * only on the transition.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "latd_shared.h"

struct gendisk {
	int major;
	int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request {
	struct request_queue *q;
} __attribute__((preserve_access_index));

/* Watched disks: the kernel's dev_t encoding (major << 20 | minor) -> slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LATD_BPF_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} slots SEC(".maps");

/* One struct latd_area per possible CPU; the loader sets max_entries. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct latd_area);
} area SEC(".maps");

/* idle -> active events; the loader sizes it so it cannot fill up. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("tp_btf/block_rq_issue")
int BPF_PROG(latd_rq_issue, struct request *rq)
{
	struct gendisk *disk = rq->q->disk;
	struct latd_event ev;
	struct latd_area *a;
	struct latd_slot *p;
	__u32 dev, cpu, s;
	__u32 *slot;

	if (!disk)
		return 0;
	dev = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	slot = bpf_map_lookup_elem(&slots, &dev);
	if (!slot)
		return 0;
	s = *slot;
	if (s >= LATD_BPF_SLOTS)
		return 0;
	cpu = bpf_get_smp_processor_id();
	a = bpf_map_lookup_elem(&area, &cpu);
	if (!a)
		return 0;
	p = &a->slot[s];
	/* Atomic: an interrupt on this CPU may issue to the same disk. */
	__sync_fetch_and_add(&p->count, 1);
	if (p->idle != 1)
		return 0;
	/* Only the issue that turns the flag 1 -> 0 sends the event. */
	if (__sync_val_compare_and_swap(&p->idle, 1, 0) != 1)
		return 0;
	ev.slot = s;
	ev.cpu = cpu;
	/*
	 * The ring buffer is sized for every (slot, CPU) event at once, so
	 * this cannot fail unless the daemon re-arms flags without draining;
	 * then re-arm the flag so a later issue reports instead.
	 */
	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP))
		p->idle = 1;
	return 0;
}

/*
 * The kernel lets only GPL-compatible programs read its structures
 * ("Cannot access kernel 'struct request' from non-GPL compatible
 * program"), so this file alone is offered under the GPL as well.
 */
char LICENSE[] SEC("license") = "Dual MIT/GPL";
