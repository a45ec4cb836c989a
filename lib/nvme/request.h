/* SPDX-License-Identifier: MIT */
/*
 * The request lifecycle, the core's part of every command: a command
 * context per tag, command ids with a generation (tags.h), requests split
 * into several commands and completed once (the first error wins), the
 * callback, cancellation. The transport calls these from its submission
 * and completion paths; they are inline so that its reap loop compiles
 * them in (no call per CQE).
 *
 * The contexts still live in the PCIe queue's structure (queue.h): moving
 * them into a core structure that a transport's command embeds, as Linux
 * embeds nvme_request in nvme_iod, comes with a second transport.
 */
#ifndef NVQ_REQUEST_H
#define NVQ_REQUEST_H

#include "internal.h"
#include "queue.h"
#include "tags.h"

static inline uint32_t nvq_req_tag(const struct nvq_queue *q,
				   const struct nvq_cmd *cmd)
{
	return (uint32_t)(cmd - q->cmds);
}

/* Context of free tag @tag with a fresh CID (next generation). */
static inline struct nvq_cmd *nvq_req_take(struct nvq_queue *q, uint32_t tag)
{
	struct nvq_cmd *cmd = &q->cmds[tag];
	uint32_t gen = cmd->gen + 1u;
	uint32_t cid = (gen << q->tag_bits | tag) & 0xffff;

	if (unlikely(cid == 0xffff)) {
		gen++;
		cid = (gen << q->tag_bits | tag) & 0xffff;
	}
	cmd->gen = (uint16_t)gen;
	cmd->cid = (uint16_t)cid;
	cmd->retries = 0;
	cmd->prp.nr = 0;
	cmd->dsm = NULL;
	return cmd;
}

/*
 * The in-flight command CQE id @cid names, or NULL: tag out of range, or
 * tag not in flight under this generation (a stale or duplicated CQE).
 * Marks it no longer in flight. The transport checks what else its
 * completion carries (SQ id, SQ head) before.
 */
static inline struct nvq_cmd *nvq_req_lookup(struct nvq_queue *q, uint16_t cid)
{
	uint32_t tag = cid & q->tag_mask;
	struct nvq_cmd *cmd;

	if (unlikely(tag >= q->nr_tags))
		return NULL;
	uint32_t want = NVQ_CMD_INFLIGHT | cid;

	cmd = &q->cmds[tag];
	/* A CAS: recovery (timeout.c) may take the command at the same
	 * moment, and exactly one of the two may finish it. */
	if (unlikely(!__atomic_compare_exchange_n(&cmd->state, &want, cid,
						  false, __ATOMIC_ACQUIRE,
						  __ATOMIC_RELAXED)))
		return NULL;
	return cmd;
}

/*
 * A command of a chained request (io.c) finished: submit the request's
 * next command on its context, or finish it as nvq_req_finish() does.
 * Returns 1 when the request's callback ran.
 */
int nvq_req_finish_chained(struct nvq_queue *q, struct nvq_cmd *cmd);

/*
 * Finish one command outside cq_lock: free its DMA blocks, release its tag
 * and run the request's callback when it was the request's last command.
 * Tags go back before the callback so that it can resubmit. Returns 1 when
 * a callback ran.
 */
static inline int nvq_req_finish(struct nvq_queue *q, struct nvq_cmd *cmd)
{
	struct nvq_cmd *lead = cmd->lead;
	struct nvq_cpl cpl;
	nvq_cb cb;
	void *arg;

	cpl.dw1 = cmd->cpl_dw1;
	nvq_cmd_release_dma(q, cmd);
	if (likely(lead->nr == 1)) {
		cpl.err = cmd->cpl_err;
		cpl.status = cmd->cpl_status;
		cpl.result = cmd->cpl_result;
		cb = cmd->cb;
		arg = cmd->arg;
		nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
		cb(arg, &cpl);
		return 1;
	}

	/* More commands than the queue has slots: io.c goes on with it. */
	if (unlikely(lead->chain))
		return nvq_req_finish_chained(q, cmd);
	/* Split request: the first error wins. */
	if (unlikely(cmd->cpl_err) &&
	    !__atomic_exchange_n(&lead->failed, 1, __ATOMIC_ACQ_REL)) {
		lead->err = cmd->cpl_err;
		lead->status = cmd->cpl_status;
		lead->result = cmd->cpl_result;
	}
	if (__atomic_sub_fetch(&lead->remaining, 1, __ATOMIC_ACQ_REL)) {
		/* The lead's context holds the request until the last one. */
		if (cmd != lead)
			nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
		return 0;
	}
	if (__atomic_load_n(&lead->failed, __ATOMIC_RELAXED)) {
		cpl.err = lead->err;
		cpl.status = lead->status;
		cpl.result = lead->result;
	} else {
		cpl.err = 0;
		cpl.status = lead->cpl_status;
		cpl.result = lead->cpl_result;
	}
	cb = lead->cb;
	arg = lead->arg;
	if (cmd != lead)
		nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
	nvq_tags_put(&q->tags, nvq_req_tag(q, lead));
	cb(arg, &cpl);
	return 1;
}

/*
 * Deliver the completions recovery left on @q (NVQ_CMD_RECOVERED): run in
 * the queue's reaping context, so callbacks run where they always do.
 * Returns the number of requests finished.
 */
int nvq_req_deliver_recovered(struct nvq_queue *q);

/*
 * Take every command of @q still owned by the device: its completion
 * becomes @err (or -ETIMEDOUT for the one(s) the watchdog timed out) and
 * is delivered by the queue's next reap. Only once the device can no
 * longer complete or DMA them. Adds each to *@counter before its
 * completion can be seen; returns how many were taken.
 */
unsigned int nvq_req_recover_all(struct nvq_queue *q, int err,
				 uint64_t *counter);

/*
 * A reset took the device's commands back (the gate of @q is closed, the
 * device stopped and its CQ drained): each command still in flight stays
 * so, to be submitted again by nvq_queue_restart(), while it has been
 * retried fewer than @max_retries times (*@retried counts those); the rest
 * complete with @err, or -ETIMEDOUT for a command the watchdog timed out
 * and aborted (*@failed counts those). Returns how many stay in flight.
 */
unsigned int nvq_req_reset_collect(struct nvq_queue *q, int err,
				   unsigned int max_retries, uint64_t *retried,
				   uint64_t *failed);

#endif /* NVQ_REQUEST_H */
