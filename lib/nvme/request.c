// SPDX-License-Identifier: MIT
/*
 * The request lifecycle outside the per-CQE path (request.h): reserving
 * and returning command contexts, and cancelling what a device will never
 * complete.
 */
#include <errno.h>
#include <stdlib.h>

#include "request.h"

struct nvq_cmd *nvq_queue_get_cmds(struct nvq_queue *q, unsigned int n)
{
	struct nvq_cmd *lead = NULL, **link = &lead, *cmd;
	unsigned int i;

	/* Almost every request is one command: no list walks for it. */
	if (likely(n == 1)) {
		int tag = nvq_tags_get(&q->tags);

		if (unlikely(tag < 0))
			return NULL;
		cmd = nvq_req_take(q, (uint32_t)tag);
		cmd->next = NULL;
		cmd->lead = cmd;
		cmd->nr = 1;
		return cmd;
	}
	for (i = 0; i < n; i++) {
		int tag = nvq_tags_get(&q->tags);

		if (unlikely(tag < 0)) {
			*link = NULL;
			if (lead)
				nvq_queue_put_cmds(q, lead);
			return NULL;
		}
		cmd = nvq_req_take(q, (uint32_t)tag);
		*link = cmd;
		link = &cmd->next;
	}
	*link = NULL;
	for (cmd = lead; cmd; cmd = cmd->next)
		cmd->lead = lead;
	if (lead)
		lead->nr = n;
	return lead;
}

void nvq_queue_put_cmds(struct nvq_queue *q, struct nvq_cmd *lead)
{
	struct nvq_cmd *cmd = lead, *next;

	while (cmd) {
		next = cmd->next;
		nvq_cmd_release_dma(q, cmd);
		nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
		cmd = next;
	}
}

/* Take @cmd from whoever owns it now (device or recovery), or false. */
static bool take_owned(struct nvq_cmd *cmd, uint32_t *was)
{
	uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

	while (st & (NVQ_CMD_INFLIGHT | NVQ_CMD_RECOVERED)) {
		if (__atomic_compare_exchange_n(&cmd->state, &st, st & 0xffff,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			*was = st;
			return true;
		}
	}
	return false;
}

/* Whether @cid is among the @n ids in @cids. */
static bool posted(const uint16_t *cids, unsigned int n, uint32_t cid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (cids[i] == cid)
			return true;
	return false;
}

/*
 * Take in-flight @cmd (state @st) from the device and give it completion
 * @err, or -ETIMEDOUT when the watchdog timed it out and aborted it; its
 * queue's reaper delivers it. Returns 1, or 0 when a reaper that got a
 * real CQE claimed it first (the completion is written only once the
 * command is ours). Adds 1 to *@counter before anyone can see it.
 */
static unsigned int recover_one(struct nvq_cmd *cmd, uint32_t st, int err,
				uint64_t *counter)
{
	uint32_t cid = st & 0xffff;

	if (!__atomic_compare_exchange_n(&cmd->state, &st, cid, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	cmd->cpl_err = cmd->tmo == (NVQ_TMO_ABORTED | cid) ? -ETIMEDOUT : err;
	cmd->cpl_status = 0;
	cmd->cpl_result = 0;
	cmd->cpl_dw1 = 0;
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&cmd->state, NVQ_CMD_RECOVERED | cid,
			 __ATOMIC_RELEASE);
	return 1;
}

unsigned int nvq_req_recover_all(struct nvq_queue *q, int err,
				 uint64_t *counter)
{
	unsigned int tag, n = 0, nr_posted = 0;
	uint16_t *cids;
	int rc;

	/*
	 * What the device already completed keeps its own completion: its
	 * reaper finishes it with the device's status.
	 */
	cids = malloc(q->nr_tags * sizeof(*cids));
	rc = cids ? nvq_queue_posted_cids(q, cids, q->nr_tags, true) : 0;
	if (rc > 0)
		nr_posted = (unsigned int)rc;
	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);
		uint32_t cid = st & 0xffff;

		if (!(st & NVQ_CMD_INFLIGHT) || posted(cids, nr_posted, cid))
			continue;
		n += recover_one(cmd, st, err, counter);
	}
	free(cids);
	if (n)
		__atomic_store_n(&q->recovered, 1, __ATOMIC_RELEASE);
	return n;
}

unsigned int nvq_req_reset_collect(struct nvq_queue *q, int err,
				   unsigned int max_retries, uint64_t *retried,
				   uint64_t *failed)
{
	unsigned int tag, kept = 0, n = 0;

	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

		if (!(st & NVQ_CMD_INFLIGHT))
			continue;
		if (cmd->retries < max_retries) {
			/* A fresh start: another Abort before another reset. */
			cmd->retries++;
			cmd->tmo = 0;
			__atomic_fetch_add(retried, 1, __ATOMIC_RELAXED);
			kept++;
			continue;
		}
		n += recover_one(cmd, st, err, failed);
	}
	if (n)
		__atomic_store_n(&q->recovered, 1, __ATOMIC_RELEASE);
	return kept;
}

int nvq_req_deliver_recovered(struct nvq_queue *q)
{
	unsigned int tag;
	int done = 0;

	__atomic_store_n(&q->recovered, 0, __ATOMIC_RELAXED);
	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

		if (!(st & NVQ_CMD_RECOVERED))
			continue;
		if (!__atomic_compare_exchange_n(&cmd->state, &st, st & 0xffff,
						 false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		done += nvq_req_finish(q, cmd);
	}
	if (done)
		__atomic_fetch_add(&q->reqs_done, (uint64_t)done,
				   __ATOMIC_RELAXED);
	return done;
}

void nvq_queue_cancel(struct nvq_queue *q)
{
	uint32_t tag;
	int done = 0;

	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st;

		if (!take_owned(cmd, &st))
			continue;
		/* Recovery already said how it ends. */
		if (st & NVQ_CMD_RECOVERED) {
			done += nvq_req_finish(q, cmd);
			continue;
		}
		/*
		 * Deleting the SQ ends them: the status a controller posts
		 * for that (SC 08h), never 0, which reads as success.
		 */
		cmd->cpl_err = -ECANCELED;
		cmd->cpl_status =
			NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_ABORT_QUEUE);
		cmd->cpl_result = 0;
		cmd->cpl_dw1 = 0;
		done += nvq_req_finish(q, cmd);
	}
	if (done)
		__atomic_fetch_add(&q->reqs_done, (uint64_t)done,
				   __ATOMIC_RELAXED);
}
