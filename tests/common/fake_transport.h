/* SPDX-License-Identifier: MIT */
/*
 * A scripted NVMe controller behind nvq_open(): it returns odd but legal
 * values the emulated controller never does (a stale CSTS.RDY, an NVMe 1.0
 * device, reserved FLBAS bits, a DMA mapping that fails with its own
 * reason, a device gone mid-enable...), so that a test can see how the
 * driver copes. Reached through the library's test hook: after
 * fake_reset(), the URI "test:" opens it (nvq_transport_set_test(), static
 * archive only), so no symbol of the library is replaced.
 *
 * The fake completes each command inside the doorbell write and uses
 * virtual addresses as DMA addresses. One controller at a time: the script
 * and what the driver did live in the global @fake.
 */
#ifndef NVQ_TESTS_FAKE_TRANSPORT_H
#define NVQ_TESTS_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "nvq/spec.h"
#include "transport.h"

#define FAKE_NR_NS 3 /* namespaces IDs the fake knows (1..3) */
#define FAKE_MAX_Q 4 /* I/O queues it accepts */

/* One queue pair as the fake sees it. */
struct fake_q {
	struct nvq_sqe *sq;
	struct nvq_cqe *cq;
	uint32_t depth, head, cq_tail, phase;
};

struct fake_ctrl {
	struct nvq_transport t; /* what nvq_open() gets */
	bool open;
	/* script */
	uint64_t cap;
	uint32_t vs, crto;
	unsigned int rdy_delay_ms; /* CSTS.RDY follows CC.EN=1 this late */
	unsigned int stale_rdy; /* CSTS reads with RDY=1 while CC.EN=0 */
	bool no_shutdown; /* CSTS.SHST never reaches complete */
	bool gone_on_enable; /* all-ones after CC.EN=1 */
	bool v10; /* NVMe 1.0: CNS 02h is read as CNS 00h */
	int map_ok; /* dma_map calls that succeed; -1 all */
	uint32_t nq_result;
	struct nvq_id_ctrl idc;
	struct nvq_id_ns ns[FAKE_NR_NS + 1];
	int csi[FAKE_NR_NS + 1]; /* -1: no CSI descriptor */
	/* Identify CNS 06h CSI 00h answer; without it, Invalid Field */
	bool has_id_nvm;
	struct nvq_id_ctrl_nvm id_nvm;
	/* state */
	uint32_t cc, shst;
	uint64_t rdy_at;
	bool gone;
	uint64_t asq, acq;
	uint32_t aqa;
	struct fake_q q[FAKE_MAX_Q + 1];
	/* what the driver did */
	unsigned int cns[16], io[16];
	bool en_while_rdy;
	struct nvq_sqe last_io[4];
	struct nvq_dsm_range last_range;
	/* DSM: every range of every command, in order */
	struct nvq_dsm_range ranges[64];
	unsigned int nr_ranges, dsm_cmds;
};

/* The script and the record; fake_reset() sets the defaults. */
extern struct fake_ctrl fake;

/*
 * A plain NVMe 1.4 controller with namespaces 1 and 3 (512-byte LBAs),
 * nothing recorded yet, and "test:" URIs routed to it. Call before each
 * nvq_open() of the fake, then change the script as the test needs.
 */
void fake_reset(void);

#endif /* NVQ_TESTS_FAKE_TRANSPORT_H */
