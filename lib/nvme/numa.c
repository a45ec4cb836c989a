// SPDX-License-Identifier: MIT
/*
 * Where a queue lives and what its PRP list blocks cost: the NUMA node
 * whose pools it uses (chosen in ctrl.c, place_queues()), the CPU its
 * interrupt goes to, and the counters of its cache and of its node's
 * pools (lib/mem/dmapool.c). Read-only accessors; nothing here is on the
 * I/O path.
 */
#include <errno.h>
#include <string.h>

#include "ctrl.h"
#include "internal.h"
#include "queue.h"

int nvq_queue_info_size(const struct nvq_queue *q, struct nvq_queue_info *info,
			uint32_t size)
{
	struct nvq_queue_info s = { .size = (uint32_t)sizeof(s) };
	const struct nvq_ctrl *c;
	unsigned int cpu;

	if (!q || !info || size < sizeof(uint32_t))
		return nvq_err(-EINVAL, "NULL queue or queue information");
	c = q->ctrl;
	s.qid = q->qid;
	s.spans = q->node_spans;
	s.pools = (uint8_t)q->qpools.mode;
	s.depth = q->depth;
	s.node = q->node;
	s.irq_cpu = q->vec ? q->vec->cpu : -1;
	s.first_cpu = -1;
	if (c && q->qid && c->nr_queues)
		for (cpu = q->qid - 1u; cpu < c->nr_cpus; cpu += c->nr_queues) {
			if (s.first_cpu < 0)
				s.first_cpu = (int32_t)cpu;
			s.nr_cpus++;
		}
	/* An older caller gets its part, a newer one zeroes beyond ours. */
	memset(info, 0, size);
	memcpy(info, &s, MIN((size_t)size, sizeof(s)));
	info->size = MIN(size, (uint32_t)sizeof(s));
	return 0;
}

int nvq_queue_pool_stats_size(const struct nvq_queue *q,
			      struct nvq_pool_stats *st, uint32_t size)
{
	struct nvq_pool_stats s = { .size = (uint32_t)sizeof(s) };
	struct nvq_dmapool *pools[2];
	struct nvq_pool_cache_stats cs;
	struct nvq_dmapool_stats ps;
	unsigned int i;

	if (!q || !st || size < sizeof(uint32_t))
		return nvq_err(-EINVAL, "NULL queue or pool statistics");
	s.node = q->node;
	nvq_pool_cache_stats(q->qpools.cache, &cs);
	s.cache_hits = cs.hits;
	s.cache_recycles = cs.recycles;
	s.cache_refills = cs.refills;
	s.cache_drains = cs.drains;
	s.cache_bypass = cs.bypass;
	s.cache_blocks = cs.cached;
	pools[0] = q->qpools.small;
	pools[1] = q->qpools.page;
	for (i = 0; i < 2; i++) {
		if (!pools[i])
			continue;
		nvq_dmapool_stats(pools[i], &ps);
		s.pool_locks += ps.locks;
		s.pool_contended += ps.contended;
		s.pool_grows += ps.grows;
	}
	memset(st, 0, size);
	memcpy(st, &s, MIN((size_t)size, sizeof(s)));
	st->size = MIN(size, (uint32_t)sizeof(s));
	return 0;
}
