/* SPDX-License-Identifier: MIT */
/*
 * A stub transport for unit tests of the memory and queue layers, which
 * take a transport directly and never go through nvq_open(): no device,
 * just an IOMMU that hands out IOVAs from its own allocator (deliberately
 * not the virtual address, and with gaps between mappings) and remembers
 * every mapping, so tests can check translations and that everything was
 * unmapped; doorbell writes go to a hook the test may set. Registers read
 * all-ones, as a device that is not there. (A device behind nvq_open() is
 * fake_transport.h's job.)
 */
#ifndef NVQ_TESTS_STUB_IOMMU_H
#define NVQ_TESTS_STUB_IOMMU_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* First IOVA handed out; far from any user-space address. */
#define STUB_IOVA_BASE 0x5a0000000000ull

/* Create a stub transport. Never fails (aborts on out-of-memory). */
struct nvq_transport *stub_transport_create(void);
/* Free it. Mappings still live are reported by stub_mappings() before. */
void stub_transport_destroy(struct nvq_transport *t);

/* Number of live mappings. */
unsigned int stub_mappings(struct nvq_transport *t);
/* Calls that broke the transport contract (unaligned map, unknown unmap). */
unsigned int stub_errors(struct nvq_transport *t);
/* Total dma_map calls so far. */
unsigned int stub_map_calls(struct nvq_transport *t);
/* Make the next @n dma_map calls succeed, then fail with -ENOSPC; -1 for
 * never fail. */
void stub_fail_map_after(struct nvq_transport *t, int n);
/* Call @fn on every doorbell write (NULL: ignore them, the default). */
void stub_set_db_hook(struct nvq_transport *t,
		      void (*fn)(struct nvq_transport *t, uint32_t off,
				 uint32_t val));

/*
 * Device view: the virtual address behind @iova in a live mapping, with
 * at least @len bytes mapped from there; NULL if not mapped.
 */
void *stub_iova_to_va(struct nvq_transport *t, uint64_t iova, size_t len);

#endif /* NVQ_TESTS_STUB_IOMMU_H */
