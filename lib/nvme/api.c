// SPDX-License-Identifier: MIT
/* The thin public wrappers of nvq.h: options, accessors, DMA memory. */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ctrl.h"
#include "queue.h"

_Static_assert(sizeof(struct nvq_opts) == NVQ_OPTS_SIZE_VER3,
	       "struct nvq_opts grew: add NVQ_OPTS_SIZE_VER4 and accept it");
_Static_assert(offsetof(struct nvq_opts, cpu_lat_method) == NVQ_OPTS_SIZE_VER2,
	       "release 0.3 fields moved");
_Static_assert(offsetof(struct nvq_opts, io_timeout_ms) == NVQ_OPTS_SIZE_VER1,
	       "release 0.2 fields moved");
_Static_assert(offsetof(struct nvq_opts, cpu_lat_limit_us) ==
		       NVQ_OPTS_SIZE_VER0,
	       "release 0.1 fields moved");

void nvq_opts_init_size(struct nvq_opts *opts, uint32_t size)
{
	struct nvq_opts d = {
		.size = size,
		.mode = NVQ_MODE_POLL,
		.shadow_doorbells = true,
		.cpu_lat_limit_us = NVQ_QOS_OFF,
		.cpu_lat_timeout_ms = NVQ_QOS_TIMEOUT_MS_DEFAULT,
	};

	if (!opts || size < sizeof(d.size))
		return;
	/* A newer caller's fields are zero: "not set" in every release. */
	memset(opts, 0, size);
	memcpy(opts, &d, MIN(size, sizeof(d)));
}

const char *nvq_version(void)
{
	return NVQ_VERSION_STRING;
}

struct status_name {
	uint16_t code; /* SCT << 8 | SC */
	const char *text;
};

static const struct status_name status_names[] = {
	{ 0x000, "Successful Completion" },
	{ 0x001, "Invalid Command Opcode" },
	{ 0x002, "Invalid Field in Command" },
	{ 0x003, "Command ID Conflict" },
	{ 0x004, "Data Transfer Error" },
	{ 0x005, "Commands Aborted due to Power Loss Notification" },
	{ 0x006, "Internal Error" },
	{ 0x007, "Command Abort Requested" },
	{ 0x008, "Command Aborted due to SQ Deletion" },
	{ 0x009, "Command Aborted due to Failed Fused Command" },
	{ 0x00a, "Command Aborted due to Missing Fused Command" },
	{ 0x00b, "Invalid Namespace or Format" },
	{ 0x00c, "Command Sequence Error" },
	{ 0x00d, "Invalid SGL Segment Descriptor" },
	{ 0x00e, "Invalid Number of SGL Descriptors" },
	{ 0x00f, "Data SGL Length Invalid" },
	{ 0x010, "Metadata SGL Length Invalid" },
	{ 0x011, "SGL Descriptor Type Invalid" },
	{ 0x012, "Invalid Use of Controller Memory Buffer" },
	{ 0x013, "PRP Offset Invalid" },
	{ 0x014, "Atomic Write Unit Exceeded" },
	{ 0x015, "Operation Denied" },
	{ 0x016, "SGL Offset Invalid" },
	{ 0x018, "Host Identifier Inconsistent Format" },
	{ 0x019, "Keep Alive Timer Expired" },
	{ 0x01a, "Keep Alive Timeout Invalid" },
	{ 0x01b, "Command Aborted due to Preempt and Abort" },
	{ 0x01c, "Sanitize Failed" },
	{ 0x01d, "Sanitize In Progress" },
	{ 0x020, "Namespace is Write Protected" },
	{ 0x021, "Command Interrupted" },
	{ 0x022, "Transient Transport Error" },
	{ 0x080, "LBA Out of Range" },
	{ 0x081, "Capacity Exceeded" },
	{ 0x082, "Namespace Not Ready" },
	{ 0x083, "Reservation Conflict" },
	{ 0x084, "Format In Progress" },
	{ 0x100, "Completion Queue Invalid" },
	{ 0x101, "Invalid Queue Identifier" },
	{ 0x102, "Invalid Queue Size" },
	{ 0x103, "Abort Command Limit Exceeded" },
	{ 0x105, "Asynchronous Event Request Limit Exceeded" },
	{ 0x106, "Invalid Firmware Slot" },
	{ 0x107, "Invalid Firmware Image" },
	{ 0x108, "Invalid Interrupt Vector" },
	{ 0x109, "Invalid Log Page" },
	{ 0x10a, "Invalid Format" },
	{ 0x10b, "Firmware Activation Requires Conventional Reset" },
	{ 0x10c, "Invalid Queue Deletion" },
	{ 0x10d, "Feature Identifier Not Saveable" },
	{ 0x10e, "Feature Not Changeable" },
	{ 0x10f, "Feature Not Namespace Specific" },
	{ 0x180, "Conflicting Attributes" },
	{ 0x181, "Invalid Protection Information" },
	{ 0x182, "Attempted Write to Read Only Range" },
	{ 0x280, "Write Fault" },
	{ 0x281, "Unrecovered Read Error" },
	{ 0x282, "End-to-end Guard Check Error" },
	{ 0x283, "End-to-end Application Tag Check Error" },
	{ 0x284, "End-to-end Reference Tag Check Error" },
	{ 0x285, "Compare Failure" },
	{ 0x286, "Access Denied" },
	{ 0x287, "Deallocated or Unwritten Logical Block" },
};

const char *nvq_status_str(uint16_t status)
{
	static __thread char buf[48];
	uint16_t code = status & NVQ_STATUS_CODE_MASK;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(status_names); i++)
		if (status_names[i].code == code)
			return status_names[i].text;
	snprintf(buf, sizeof(buf), "Unknown status (SCT %#x, SC %#x)",
		 NVQ_SCT(status), NVQ_SC(status));
	return buf;
}

const struct nvq_id_ctrl *nvq_ctrl_id(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->id : NULL;
}

uint64_t nvq_ctrl_cap(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->cap : 0;
}

uint32_t nvq_ctrl_vs(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->vs : 0;
}

const char *nvq_ctrl_uri(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->uri : "";
}

uint32_t nvq_ctrl_uri_nsid(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->uri_nsid : 0;
}

int nvq_ns_list(const struct nvq_ctrl *ctrl, uint32_t *nsids, unsigned int max)
{
	unsigned int i;

	if (!ctrl)
		return nvq_err(-EINVAL, "NULL controller");
	for (i = 0; i < ctrl->nr_ns && i < max && nsids; i++)
		nsids[i] = ctrl->ns[i].nsid;
	return (int)ctrl->nr_ns;
}

int nvq_ns_info(const struct nvq_ctrl *ctrl, uint32_t nsid,
		struct nvq_ns_info *info)
{
	const struct nvq_ns *ns;

	if (!ctrl || !info)
		return nvq_err(-EINVAL, "NULL controller or info");
	ns = nvq_ctrl_ns(ctrl, nsid);
	if (!ns)
		return nvq_ns_absent(ctrl, nsid);
	info->nsid = ns->nsid;
	info->nlba = ns->nlba;
	info->lba_size = 1u << ns->lbads;
	info->max_transfer = ns->max_blocks << ns->lbads;
	info->id = ns->id;
	return 0;
}

uint32_t nvq_ctrl_max_transfer(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->max_xfer : 0;
}

unsigned int nvq_ctrl_queue_count(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->nr_queues : 0;
}

struct nvq_queue *nvq_ctrl_queue(struct nvq_ctrl *ctrl, unsigned int index)
{
	if (!ctrl || index >= ctrl->nr_queues)
		return NULL;
	return ctrl->queues[index];
}

struct nvq_queue *nvq_ctrl_queue_for_cpu(struct nvq_ctrl *ctrl)
{
	int cpu;

	if (!ctrl || !ctrl->nr_queues)
		return NULL;
	/* glibc answers from rseq: no syscall. */
	cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	return ctrl->queues[(unsigned int)cpu % ctrl->nr_queues];
}

uint16_t nvq_queue_id(const struct nvq_queue *q)
{
	return q ? q->qid : 0;
}

unsigned int nvq_queue_depth(const struct nvq_queue *q)
{
	return q ? q->depth : 0;
}

void nvq_queue_stats(const struct nvq_queue *q, struct nvq_queue_stats *st)
{
	if (!q || !st)
		return;
	st->submitted = READ_ONCE(q->stat_submitted);
	st->completed = READ_ONCE(q->stat_completed);
	st->doorbells = READ_ONCE(q->stat_doorbells);
	st->bad_cqes = READ_ONCE(q->stat_bad);
	st->interrupts = READ_ONCE(q->stat_interrupts);
}

unsigned int nvq_queue_inflight(const struct nvq_queue *q)
{
	uint64_t done, sub;

	if (!q)
		return 0;
	/* Done first: a request can only finish after it was counted. */
	done = __atomic_load_n(&q->reqs_done, __ATOMIC_ACQUIRE);
	sub = READ_ONCE(q->reqs_submitted);
	return sub > done ? (unsigned int)(sub - done) : 0;
}

void *nvq_dma_alloc(struct nvq_ctrl *ctrl, size_t len, int node)
{
	if (!ctrl) {
		nvq_err(-EINVAL, "NULL controller");
		return NULL;
	}
	if (!len) {
		nvq_err(-EINVAL, "nvq_dma_alloc: length 0");
		return NULL;
	}
	return nvq_mem_alloc(ctrl->mem, len, node < 0 ? ctrl->node : node,
			     NULL);
}

void nvq_dma_free(struct nvq_ctrl *ctrl, void *buf)
{
	if (ctrl && buf)
		nvq_mem_free(ctrl->mem, buf);
}

int nvq_dma_register(struct nvq_ctrl *ctrl, void *buf, size_t len)
{
	if (!ctrl || !buf || !len)
		return nvq_err(-EINVAL,
			       "nvq_dma_register: NULL or empty buffer");
	return nvq_mem_register(ctrl->mem, buf, len);
}

int nvq_dma_unregister(struct nvq_ctrl *ctrl, void *buf)
{
	if (!ctrl || !buf)
		return nvq_err(-EINVAL, "nvq_dma_unregister: NULL buffer");
	return nvq_mem_unregister(ctrl->mem, buf);
}

int nvq_ctrl_set_timeouts(struct nvq_ctrl *ctrl, unsigned int io_ms,
			  unsigned int admin_ms)
{
	if (!ctrl)
		return nvq_err(-EINVAL, "NULL controller");
	if (io_ms > NVQ_TIMEOUT_MS_MAX || admin_ms > NVQ_TIMEOUT_MS_MAX)
		return nvq_err(-EINVAL,
			       "command timeout %u ms is out of range (1..%u)",
			       MAX(io_ms, admin_ms), NVQ_TIMEOUT_MS_MAX);
	if (io_ms)
		__atomic_store_n(&ctrl->io_timeout_ms, io_ms, __ATOMIC_RELAXED);
	if (admin_ms)
		__atomic_store_n(&ctrl->admin_timeout_ms, admin_ms,
				 __ATOMIC_RELAXED);
	return 0;
}

int nvq_ctrl_timeouts(const struct nvq_ctrl *ctrl, unsigned int *io_ms,
		      unsigned int *admin_ms)
{
	if (!ctrl)
		return nvq_err(-EINVAL, "NULL controller");
	if (io_ms)
		*io_ms =
			__atomic_load_n(&ctrl->io_timeout_ms, __ATOMIC_RELAXED);
	if (admin_ms)
		*admin_ms = __atomic_load_n(&ctrl->admin_timeout_ms,
					    __ATOMIC_RELAXED);
	return 0;
}

int nvq_ctrl_stats_size(const struct nvq_ctrl *ctrl, struct nvq_ctrl_stats *st,
			uint32_t size)
{
	struct nvq_ctrl_stats s = { .size = (uint32_t)sizeof(s) };
	unsigned int i;

	if (!ctrl || !st || size < sizeof(uint32_t))
		return nvq_err(-EINVAL, "NULL controller or statistics");
	s.gone = __atomic_load_n(&ctrl->failed, __ATOMIC_RELAXED) == -ENODEV;
	s.timeouts = __atomic_load_n(&ctrl->st.timeouts, __ATOMIC_RELAXED);
	s.lost_interrupts =
		__atomic_load_n(&ctrl->st.lost_interrupts, __ATOMIC_RELAXED);
	s.aborts = __atomic_load_n(&ctrl->st.aborts, __ATOMIC_RELAXED);
	s.resets = __atomic_load_n(&ctrl->st.resets, __ATOMIC_RELAXED);
	s.retries = __atomic_load_n(&ctrl->st.retries, __ATOMIC_RELAXED);
	s.failed = __atomic_load_n(&ctrl->st.failed, __ATOMIC_RELAXED);
	for (i = 0; i < ctrl->nr_queues; i++)
		s.bad_cqes += READ_ONCE(ctrl->queues[i]->stat_bad);
	if (ctrl->aq)
		s.bad_cqes += READ_ONCE(ctrl->aq->stat_bad);
	/* An older caller gets its part, a newer one zeroes beyond ours. */
	memset(st, 0, size);
	memcpy(st, &s, MIN((size_t)size, sizeof(s)));
	st->size = MIN(size, (uint32_t)sizeof(s));
	return 0;
}
