// SPDX-License-Identifier: MIT
/*
 * Building I/O commands: checks, IOVA translation, splitting transfers
 * larger than a command may carry (MDTS), PRPs, and posting. This is the
 * submission hot path: no syscalls, allocations or clock reads, and no
 * error message formatting unless the request is rejected.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"
#include "dmapool.h"
#include "prp.h"
#include "queue.h"
#include "request.h"

/*
 * IOVA translation cache. An exclusive queue has one submitter, so its
 * cache lives in the queue; a shared queue's submitters translate before
 * taking sq_lock, so each thread keeps its own, tagged with the
 * controller's unique id (a cache of another controller is never used).
 * initial-exec: a direct %fs-relative access instead of a
 * __tls_get_addr() call per I/O (~20 instructions) from a shared library;
 * the 40 bytes fit glibc's static TLS reserve even when dlopen()ed (fio).
 */
static __thread struct {
	uint64_t uid;
	struct nvq_mem_cache c;
} tcache __attribute__((tls_model("initial-exec")));

static inline struct nvq_mem_cache *mem_cache(struct nvq_queue *q)
{
	if (q->lock_mode == NVQ_LOCK_NONE)
		return &q->mcache;
	if (unlikely(tcache.uid != q->ctrl->uid)) {
		memset(&tcache.c, 0, sizeof(tcache.c));
		tcache.uid = q->ctrl->uid;
	}
	return &tcache.c;
}

static inline void sqe_init(struct nvq_cmd *cmd, uint8_t opc, uint32_t nsid)
{
	struct nvq_sqe *sqe = &cmd->sqe;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = opc;
	sqe->cid = cmd->cid;
	sqe->nsid = nsid;
}

static inline int build_rw(struct nvq_queue *q, struct nvq_cmd *cmd,
			   uint8_t opc, uint32_t nsid, uint64_t iova,
			   size_t len, uint64_t slba, uint32_t nlb,
			   unsigned int flags)
{
	int rc;

	sqe_init(cmd, opc, nsid);
	rc = nvq_dptr_build(q, &cmd->sqe, iova, len, &cmd->prp);
	if (unlikely(rc))
		return nvq_err(
			rc, "cannot build the PRP list of a %zu-byte transfer",
			len);
	cmd->sqe.cdw10 = (uint32_t)slba;
	cmd->sqe.cdw11 = (uint32_t)(slba >> 32);
	cmd->sqe.cdw12 = (nlb - 1) | (flags & NVQ_IO_FUA ? NVQ_RW_FUA : 0);
	return 0;
}

/* A chained request (see submit_chained()). */
struct nvq_chain {
	uint8_t opc;
	uint32_t nsid;
	unsigned int flags; /* NVQ_IO_FUA */
	uint32_t lbads;
	uint32_t per; /* blocks per command */
	uint64_t slba;
	uint64_t iova; /* of block slba; unused by Write Zeroes */
	uint32_t nlb;
	uint32_t nr; /* commands in all */
	uint32_t next; /* atomic: commands handed out so far */
};

/* Command @idx of the chained request @ch into @cmd. */
static int build_chunk(struct nvq_queue *q, struct nvq_cmd *cmd,
		       const struct nvq_chain *ch, uint32_t idx)
{
	uint64_t done = (uint64_t)idx * ch->per;
	uint32_t k = (uint32_t)MIN((uint64_t)ch->per, ch->nlb - done);

	if (ch->opc == nvq_cmd_write_zeroes) {
		memset(&cmd->sqe, 0, sizeof(cmd->sqe));
		cmd->sqe.opcode = ch->opc;
		cmd->sqe.cid = cmd->cid;
		cmd->sqe.nsid = ch->nsid;
		cmd->sqe.cdw10 = (uint32_t)(ch->slba + done);
		cmd->sqe.cdw11 = (uint32_t)((ch->slba + done) >> 32);
		cmd->sqe.cdw12 = (k - 1) |
				 (ch->flags & NVQ_IO_FUA ? NVQ_RW_FUA : 0);
		return 0;
	}
	return build_rw(q, cmd, ch->opc, ch->nsid,
			ch->iova + (done << ch->lbads), (size_t)k << ch->lbads,
			ch->slba + done, k, ch->flags);
}

/* The controller failed (timeout.c): every submission gets its errno. */
static int dead(struct nvq_queue *q)
{
	int err = __atomic_load_n(&q->dead, __ATOMIC_ACQUIRE);

	return nvq_err(err, "the controller failed: %s",
		       q->ctrl ? q->ctrl->fail_msg : "");
}

static inline int check_common(struct nvq_queue *q, unsigned int flags,
			       nvq_cb cb)
{
	if (unlikely(!q || !cb))
		return nvq_err(-EINVAL, "NULL queue or callback");
	if (unlikely(flags & ~(NVQ_IO_FUA | NVQ_IO_MORE)))
		return nvq_err(-EINVAL, "unknown I/O flags %#x",
			       flags & ~(NVQ_IO_FUA | NVQ_IO_MORE));
	if (unlikely(__atomic_load_n(&q->dead, __ATOMIC_RELAXED)))
		return dead(q);
	return 0;
}

static inline int check_range(const struct nvq_ctrl *c, const struct nvq_ns *ns,
			      uint32_t nsid, uint64_t slba, uint64_t nlb)
{
	if (unlikely(!ns))
		return nvq_ns_absent(c, nsid);
	if (unlikely(!nlb || slba >= ns->nlba || nlb > ns->nlba - slba))
		return nvq_err(
			-ERANGE,
			"blocks %llu..%llu are outside namespace %u (%llu blocks)",
			(unsigned long long)slba,
			(unsigned long long)(slba + nlb - 1), nsid,
			(unsigned long long)ns->nlba);
	return 0;
}

/* How many commands of at most @per blocks carry @nlb blocks. */
static inline uint32_t nr_cmds(uint64_t nlb, uint32_t per)
{
	return (uint32_t)((nlb - 1) / per + 1);
}

static int too_big(struct nvq_queue *q, uint32_t n)
{
	return nvq_err(
		-E2BIG,
		"request needs %u commands but queue %u has only %u slots", n,
		q->qid, q->nr_tags);
}

/*
 * A request that needs more commands than its queue has slots is not
 * refused: it is chained, as SPDK queues a request's children until
 * trackers free up and the block layer waits for tags. It starts with a
 * window of half the queue's slots; each of its commands that completes
 * hands its context to the request's next command (from the reaping
 * thread, posted like any submission), until all are submitted. The
 * descriptor is the one allocation: such a request moves megabytes.
 */

/*
 * Where a chained request must be refused: the thread that reaps an
 * exclusive queue in thread mode is its completion thread, which may not
 * submit beside the owner.
 */
static int chain_refused(struct nvq_queue *q, uint32_t n)
{
	return nvq_err(
		-E2BIG,
		"request needs %u commands but queue %u has only %u slots, and an exclusive queue in thread mode cannot chain it (its completion thread would submit beside its owner)",
		n, q->qid, q->nr_tags);
}

/* Start a chained request of ch->nr commands; the first window now. */
static int submit_chained(struct nvq_queue *q, struct nvq_chain *tmpl,
			  nvq_cb cb, void *arg)
{
	uint32_t win = MAX(1u, q->nr_tags / 2), i = 0;
	struct nvq_cmd *lead, *cmd;
	struct nvq_chain *ch;
	int rc;

	if (q->lock_mode == NVQ_LOCK_NONE && q->mode == NVQ_MODE_THREAD)
		return chain_refused(q, tmpl->nr);
	lead = nvq_queue_get_cmds(q, win);
	if (!lead)
		return -EAGAIN;
	ch = malloc(sizeof(*ch));
	if (!ch) {
		nvq_queue_put_cmds(q, lead);
		return nvq_err(-ENOMEM, "out of memory");
	}
	*ch = *tmpl;
	for (cmd = lead; cmd; cmd = cmd->next, i++) {
		rc = build_chunk(q, cmd, ch, i);
		if (rc) {
			nvq_queue_put_cmds(q, lead);
			free(ch);
			return rc;
		}
	}
	ch->next = win;
	lead->chain = ch;
	/* The request is all of its commands, not the window. */
	lead->nr = ch->nr;
	lead->cb = cb;
	lead->arg = arg;
	nvq_queue_post(q, lead, ch->flags);
	return 0;
}

/* Claim the index of the request's next command, or false: none left. */
static bool chain_claim(struct nvq_chain *ch, uint32_t *idx)
{
	uint32_t n = __atomic_load_n(&ch->next, __ATOMIC_RELAXED);

	while (n < ch->nr)
		if (__atomic_compare_exchange_n(&ch->next, &n, n + 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			*idx = n;
			return true;
		}
	return false;
}

/* The first error wins; after it, no more commands are submitted. */
static void chain_fail(struct nvq_cmd *lead, struct nvq_chain *ch, int err,
		       uint16_t status, uint32_t result)
{
	uint32_t left;

	if (!__atomic_exchange_n(&lead->failed, 1, __ATOMIC_ACQ_REL)) {
		lead->err = err;
		lead->status = status;
		lead->result = result;
	}
	/* Those never submitted are done too. */
	left = __atomic_exchange_n(&ch->next, ch->nr, __ATOMIC_ACQ_REL);
	if (left < ch->nr)
		__atomic_sub_fetch(&lead->remaining, ch->nr - left,
				   __ATOMIC_ACQ_REL);
}

int nvq_req_finish_chained(struct nvq_queue *q, struct nvq_cmd *cmd)
{
	struct nvq_cmd *lead = cmd->lead;
	struct nvq_chain *ch = lead->chain;
	struct nvq_cpl cpl = { 0 };
	uint32_t idx;
	nvq_cb cb;
	void *arg;

	if (cmd->cpl_err)
		chain_fail(lead, ch, cmd->cpl_err, cmd->cpl_status,
			   cmd->cpl_result);
	else if (!__atomic_load_n(&lead->failed, __ATOMIC_ACQUIRE) &&
		 chain_claim(ch, &idx)) {
		/* This command is done; the claimed one keeps the request
		 * alive, so remaining stays above 0. */
		__atomic_sub_fetch(&lead->remaining, 1, __ATOMIC_ACQ_REL);
		nvq_req_take(q, nvq_req_tag(q, cmd));
		cmd->next = NULL;
		if (!build_chunk(q, cmd, ch, idx)) {
			nvq_queue_post(q, cmd, ch->flags | NVQ_POST_CHAINED);
			return 0;
		}
		/* The claimed command cannot be built: it fails here. */
		chain_fail(lead, ch, -ENOMEM, 0, 0);
	}
	if (__atomic_sub_fetch(&lead->remaining, 1, __ATOMIC_ACQ_REL)) {
		if (cmd != lead)
			nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
		return 0;
	}
	if (__atomic_load_n(&lead->failed, __ATOMIC_ACQUIRE)) {
		cpl.err = lead->err;
		cpl.status = lead->status;
		cpl.result = lead->result;
	} else {
		cpl.status = cmd->cpl_status;
	}
	cb = lead->cb;
	arg = lead->arg;
	lead->chain = NULL;
	free(ch);
	if (cmd != lead)
		nvq_tags_put(&q->tags, nvq_req_tag(q, cmd));
	nvq_tags_put(&q->tags, nvq_req_tag(q, lead));
	cb(arg, &cpl);
	return 1;
}

static int nvq_rw_md_plain(struct nvq_queue *q, uint8_t opc, uint32_t nsid,
			   const void *buf, uint64_t slba, uint32_t nlb,
			   unsigned int flags, nvq_cb cb, void *arg)
	__attribute__((noinline, cold));

/*
 * Inlined into nvq_read() / nvq_write(): one call and nine arguments
 * worth of shuffling fewer per I/O (~15 instructions).
 */
static inline __attribute__((always_inline)) int
submit_rw(struct nvq_queue *q, uint8_t opc, uint32_t nsid, const void *buf,
	  uint64_t slba, uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg)
{
	struct nvq_cmd *lead, *cmd;
	const struct nvq_ns *ns;
	uint32_t per, n, done;
	uint64_t iova;
	size_t len;
	int rc;

	rc = check_common(q, flags, cb);
	if (unlikely(rc))
		return rc;
	ns = nvq_ctrl_ns_plain(q->ctrl, nsid);
	if (unlikely(!ns))
		return nvq_rw_md_plain(q, opc, nsid, buf, slba, nlb, flags, cb,
				       arg);
	rc = check_range(q->ctrl, ns, nsid, slba, nlb);
	if (unlikely(rc))
		return rc;
	if (unlikely((uintptr_t)buf & 3))
		return nvq_err(-EINVAL,
			       "buffer %p is not 4-byte aligned (PRP rule)",
			       buf);
	len = (size_t)nlb << ns->lbads;
	if (unlikely(nvq_mem_iova(q->ctrl->mem, mem_cache(q), buf, len, &iova)))
		return nvq_err(
			-EFAULT,
			"buffer %p (%zu bytes) is not in DMA memory: use nvq_dma_alloc() or nvq_dma_register()",
			buf, len);

	per = ns->max_blocks;
	if (likely(nlb <= per)) {
		lead = nvq_queue_get_cmds(q, 1);
		if (unlikely(!lead))
			return -EAGAIN;
		rc = build_rw(q, lead, opc, nsid, iova, len, slba, nlb, flags);
		if (unlikely(rc)) {
			nvq_queue_put_cmds(q, lead);
			return rc;
		}
	} else {
		n = nr_cmds(nlb, per);
		if (unlikely(n > q->nr_tags)) {
			struct nvq_chain ch = {
				.opc = opc,
				.nsid = nsid,
				.flags = flags & NVQ_IO_FUA,
				.lbads = ns->lbads,
				.per = per,
				.slba = slba,
				.iova = iova,
				.nlb = nlb,
				.nr = n,
			};

			return submit_chained(q, &ch, cb, arg);
		}
		lead = nvq_queue_get_cmds(q, n);
		if (!lead)
			return -EAGAIN;
		done = 0;
		for (cmd = lead; cmd; cmd = cmd->next) {
			uint32_t k = MIN(per, nlb - done);

			rc = build_rw(q, cmd, opc, nsid,
				      iova + ((uint64_t)done << ns->lbads),
				      (size_t)k << ns->lbads, slba + done, k,
				      flags);
			if (rc) {
				nvq_queue_put_cmds(q, lead);
				return rc;
			}
			done += k;
		}
	}
	lead->cb = cb;
	lead->arg = arg;
	nvq_queue_post(q, lead, flags);
	return 0;
}

int nvq_read(struct nvq_queue *q, uint32_t nsid, void *buf, uint64_t slba,
	     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg)
{
	return submit_rw(q, nvq_cmd_read, nsid, buf, slba, nlb, flags, cb, arg);
}

int nvq_write(struct nvq_queue *q, uint32_t nsid, const void *buf,
	      uint64_t slba, uint32_t nlb, unsigned int flags, nvq_cb cb,
	      void *arg)
{
	return submit_rw(q, nvq_cmd_write, nsid, buf, slba, nlb, flags, cb,
			 arg);
}

int nvq_flush(struct nvq_queue *q, uint32_t nsid, unsigned int flags, nvq_cb cb,
	      void *arg)
{
	struct nvq_cmd *cmd;
	int rc;

	rc = check_common(q, flags, cb);
	if (rc)
		return rc;
	/*
	 * Flush also takes the broadcast nsid (every namespace), unless
	 * VWC.FB is 10b: then the device fails it (NVMe 2.0, Identify
	 * Controller VWC).
	 */
	if (nsid == NVQ_NSID_ALL) {
		if (((q->ctrl->id->vwc >> 1) & 3) == 2)
			return nvq_err(
				-ENOTSUP,
				"the controller does not take Flush for all namespaces (VWC.FB 10b); flush each namespace");
	} else if (!nvq_ctrl_ns(q->ctrl, nsid)) {
		return nvq_ns_absent(q->ctrl, nsid);
	}
	cmd = nvq_queue_get_cmds(q, 1);
	if (!cmd)
		return -EAGAIN;
	sqe_init(cmd, nvq_cmd_flush, nsid);
	cmd->cb = cb;
	cmd->arg = arg;
	nvq_queue_post(q, cmd, flags);
	return 0;
}

int nvq_write_zeroes(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg)
{
	const struct nvq_ns *ns;
	struct nvq_cmd *lead, *cmd;
	uint32_t n, per, done = 0;
	int rc;

	rc = check_common(q, flags, cb);
	if (rc)
		return rc;
	ns = nvq_ctrl_ns(q->ctrl, nsid);
	rc = check_range(q->ctrl, ns, nsid, slba, nlb);
	if (rc)
		return rc;
	if (!(q->ctrl->id->oncs & NVQ_CTRL_ONCS_WRITE_ZEROES))
		return nvq_err(-ENOTSUP,
			       "the controller does not support Write Zeroes");
	/*
	 * No data moves: commands are sized by WZSL (Identify CNS 06h) and
	 * the 16-bit NLB, or by MDTS when the controller does not say, as
	 * Linux does.
	 */
	per = ns->wz_blocks;
	n = nr_cmds(nlb, per);
	if (n > q->nr_tags) {
		struct nvq_chain ch = {
			.opc = nvq_cmd_write_zeroes,
			.nsid = nsid,
			.flags = flags & NVQ_IO_FUA,
			.lbads = ns->lbads,
			.per = per,
			.slba = slba,
			.nlb = nlb,
			.nr = n,
		};

		return submit_chained(q, &ch, cb, arg);
	}
	lead = nvq_queue_get_cmds(q, n);
	if (!lead)
		return -EAGAIN;
	for (cmd = lead; cmd; cmd = cmd->next) {
		uint32_t k = MIN(per, nlb - done);

		sqe_init(cmd, nvq_cmd_write_zeroes, nsid);
		cmd->sqe.cdw10 = (uint32_t)(slba + done);
		cmd->sqe.cdw11 = (uint32_t)((slba + done) >> 32);
		cmd->sqe.cdw12 = (k - 1) |
				 (flags & NVQ_IO_FUA ? NVQ_RW_FUA : 0);
		done += k;
	}
	lead->cb = cb;
	lead->arg = arg;
	nvq_queue_post(q, lead, flags);
	return 0;
}

/* DSM ranges one command carries: the range list is one small pool block. */
#define DSM_RANGES_PER_CMD (256 / sizeof(struct nvq_dsm_range))

void nvq_dsm_shape(const struct nvq_ctrl *c, uint64_t *per_range,
		   uint64_t *ranges)
{
	/*
	 * The NVM command set's limits (Identify CNS 06h): blocks per range
	 * (DMRSL), ranges per command (DMRL), blocks per command (DMSL).
	 */
	uint64_t pr = c->dmrsl ? c->dmrsl : UINT32_MAX, k;

	if (c->dmsl && pr > c->dmsl)
		pr = c->dmsl;
	k = MIN((uint64_t)c->dmrl, DSM_RANGES_PER_CMD);
	if (c->dmsl)
		k = MAX(1, MIN(k, c->dmsl / pr));
	*per_range = pr;
	*ranges = k;
}

int nvq_deallocate(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		   uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg)
{
	const struct nvq_ctrl *c;
	struct nvq_cmd *lead, *cmd;
	uint64_t per_range, k, n, done = 0;
	int rc;

	rc = check_common(q, flags, cb);
	if (rc)
		return rc;
	rc = check_range(q->ctrl, nvq_ctrl_ns(q->ctrl, nsid), nsid, slba, nlb);
	if (rc)
		return rc;
	c = q->ctrl;
	if (!(c->id->oncs & NVQ_CTRL_ONCS_DSM))
		return nvq_err(
			-ENOTSUP,
			"the controller does not support Dataset Management");
	nvq_dsm_shape(c, &per_range, &k);
	n = ((nlb + per_range - 1) / per_range + k - 1) / k;
	if (n > q->nr_tags)
		return too_big(q, (uint32_t)n);
	lead = nvq_queue_get_cmds(q, (unsigned int)n);
	if (!lead)
		return -EAGAIN;
	for (cmd = lead; cmd; cmd = cmd->next) {
		struct nvq_dsm_range *range;
		uint64_t iova;
		unsigned int r;

		/* Read by the device: DMA memory, freed at completion. */
		range = nvq_dmapool_alloc(q->pools->small, &iova);
		if (!range) {
			nvq_queue_put_cmds(q, lead);
			return nvq_err(-ENOMEM, "no DMA memory for DSM ranges");
		}
		memset(range, 0, 256);
		cmd->dsm = range;
		cmd->dsm_iova = iova;
		for (r = 0; r < k && done < nlb; r++) {
			uint64_t len = MIN(per_range, nlb - done);

			range[r].nlb = (uint32_t)len;
			range[r].slba = slba + done;
			done += len;
		}
		sqe_init(cmd, nvq_cmd_dsm, nsid);
		/* r ranges of 16 bytes in one 256-byte block: no PRP list */
		nvq_dptr_build(q, &cmd->sqe, iova, (size_t)r * 16, &cmd->prp);
		cmd->sqe.cdw10 = r - 1; /* NR: 0's based */
		cmd->sqe.cdw11 = NVQ_DSM_AD;
	}
	lead->cb = cb;
	lead->arg = arg;
	nvq_queue_post(q, lead, flags);
	return 0;
}

void nvq_queue_kick(struct nvq_queue *q)
{
	if (q)
		nvq_queue_ring(q);
}

int nvq_poll(struct nvq_queue *q, unsigned int max)
{
	if (unlikely(!q))
		return nvq_err(-EINVAL, "nvq_poll: NULL queue");
	if (unlikely(q->mode == NVQ_MODE_THREAD))
		return nvq_err(
			-EINVAL,
			"nvq_poll: queue %u is reaped by its completion thread",
			q->qid);
	return nvq_queue_reap(q, max);
}

int nvq_wait(struct nvq_queue *q, unsigned int min_cpl, int timeout_ms)
{
	uint64_t deadline = 0;
	unsigned int total = 0;

	if (!q)
		return nvq_err(-EINVAL, "nvq_wait: NULL queue");
	if (q->mode == NVQ_MODE_THREAD)
		return nvq_err(
			-EINVAL,
			"nvq_wait: queue %u is reaped by its completion thread",
			q->qid);
	for (;;) {
		total += (unsigned int)nvq_queue_reap(q, 0);
		if (total >= min_cpl || timeout_ms == 0)
			break;
		if (timeout_ms > 0) {
			uint64_t now = nvq_now_ns();

			if (!deadline)
				deadline =
					now + (uint64_t)timeout_ms * 1000000ull;
			else if (now >= deadline)
				break;
		}
		/* The empty reap let a device on our CPUs run; a real
		 * device needs none of ours: spin. */
		if (q->mode == NVQ_MODE_POLL)
			continue;
		if (nvq_vector_sleep(q->vec, q, deadline) == -ETIMEDOUT) {
			total += (unsigned int)nvq_queue_reap(q, 0);
			break;
		}
	}
	return (int)total;
}

/* ------------------------------------------------------------------ */
/* Metadata and protection information (docs/metadata.md)              */
/* ------------------------------------------------------------------ */

#define IO_FLAGS_ALL \
	(NVQ_IO_FUA | NVQ_IO_MORE | NVQ_IO_PRACT | NVQ_IO_PRCHK_ALL)
/* PRINFO, CDW12 bits 29:26 (NVM Command Set 1.0, Read and Write). */

static uint32_t prinfo(unsigned int flags)
{
	uint32_t p = 0;

	if (flags & NVQ_IO_PRACT)
		p |= 1u << 29;
	if (flags & NVQ_IO_PRCHK_GUARD)
		p |= 1u << 28;
	if (flags & NVQ_IO_PRCHK_APP)
		p |= 1u << 27;
	if (flags & NVQ_IO_PRCHK_REF)
		p |= 1u << 26;
	return p;
}

/* The sizes struct nvq_io has had. */
#define NVQ_IO_SIZE_VER0 48u

static int submit_io(struct nvq_queue *q, uint8_t opc, const struct nvq_io *io,
		     nvq_cb cb, void *arg)
{
	uint64_t iova, md_iova = 0;
	const struct nvq_ns *ns;
	struct nvq_cmd *lead, *cmd;
	uint32_t per, n, bb, done = 0;
	size_t len, md_len = 0;
	unsigned int flags;
	int rc;

	if (!q || !cb || !io)
		return nvq_err(-EINVAL, "NULL queue, request or callback");
	if (io->size < NVQ_IO_SIZE_VER0)
		return nvq_err(
			-EINVAL,
			"struct nvq_io size %u is unknown: use nvq_io_init()",
			io->size);
	flags = io->flags;
	if (flags & ~IO_FLAGS_ALL)
		return nvq_err(-EINVAL, "unknown I/O flags %#x",
			       flags & ~IO_FLAGS_ALL);
	if (__atomic_load_n(&q->dead, __ATOMIC_RELAXED))
		return dead(q);
	ns = nvq_ctrl_ns(q->ctrl, io->nsid);
	rc = check_range(q->ctrl, ns, io->nsid, io->slba, io->nlb);
	if (rc)
		return rc;
	if (!io->buf || ((uintptr_t)io->buf & 3) || ((uintptr_t)io->md & 3))
		return nvq_err(
			-EINVAL,
			"data buffer %p is NULL or it or metadata buffer %p is not 4-byte aligned",
			io->buf, io->md);
	if (!ns->pi_type && (flags & (NVQ_IO_PRACT | NVQ_IO_PRCHK_ALL)))
		return nvq_err(
			-EINVAL,
			"namespace %u has no protection information: PRACT and PRCHK do not apply",
			io->nsid);
	if (io->md && (!ns->md || ns->ext))
		return nvq_err(
			-EINVAL,
			"namespace %u has %s: no separate metadata buffer",
			io->nsid,
			ns->md ?
				"an extended LBA format (metadata in the data buffer)" :
				"no metadata");
	if (ns->md && !ns->ext && !io->md &&
	    !((flags & NVQ_IO_PRACT) && ns->ms == 8))
		return nvq_err(
			-EINVAL,
			"namespace %u has %u bytes of separate metadata per block: give a metadata buffer (or PRACT with 8-byte PI metadata)",
			io->nsid, ns->ms);
	/*
	 * Bytes per block in the data buffer. Extended LBAs carry the
	 * metadata there, except PRACT on 8 bytes of it: the PI is all of
	 * it, and the host transfers none (NVM Command Set 1.0, 5.2.1.2 and
	 * 5.2.1.3; QEMU maps the data alone too).
	 */
	bb = ns->blk_bytes;
	if (ns->ext && (flags & NVQ_IO_PRACT) && ns->ms == 8)
		bb = 1u << ns->lbads;
	len = (size_t)io->nlb * bb;
	if (nvq_mem_iova(q->ctrl->mem, mem_cache(q), io->buf, len, &iova))
		return nvq_err(
			-EFAULT,
			"buffer %p (%zu bytes) is not in DMA memory: use nvq_dma_alloc() or nvq_dma_register()",
			io->buf, len);
	if (io->md) {
		md_len = (size_t)io->nlb * ns->ms;
		if (nvq_mem_iova(q->ctrl->mem, mem_cache(q), io->md, md_len,
				 &md_iova))
			return nvq_err(
				-EFAULT,
				"metadata buffer %p (%zu bytes) is not in DMA memory",
				io->md, md_len);
	}
	per = ns->max_blocks;
	n = nr_cmds(io->nlb, per);
	if (n > q->nr_tags)
		return too_big(q, n);
	lead = nvq_queue_get_cmds(q, n);
	if (!lead)
		return -EAGAIN;
	for (cmd = lead; cmd; cmd = cmd->next) {
		uint32_t k = MIN(per, io->nlb - done);

		rc = build_rw(q, cmd, opc, io->nsid, iova + (uint64_t)done * bb,
			      (size_t)k * bb, io->slba + done, k, flags);
		if (rc) {
			nvq_queue_put_cmds(q, lead);
			return rc;
		}
		if (io->md)
			cmd->sqe.mptr = md_iova + (uint64_t)done * ns->ms;
		cmd->sqe.cdw12 |= prinfo(flags);
		/* Types 1 and 2: the tag of the command's first block. */
		cmd->sqe.cdw14 = io->reftag + (ns->pi_type == 3 ? 0 : done);
		cmd->sqe.cdw15 = io->apptag | (uint32_t)io->appmask << 16;
		done += k;
	}
	lead->cb = cb;
	lead->arg = arg;
	nvq_queue_post(q, lead, flags);
	return 0;
}

int nvq_read_io(struct nvq_queue *q, const struct nvq_io *io, nvq_cb cb,
		void *arg)
{
	return submit_io(q, nvq_cmd_read, io, cb, arg);
}

int nvq_write_io(struct nvq_queue *q, const struct nvq_io *io, nvq_cb cb,
		 void *arg)
{
	return submit_io(q, nvq_cmd_write, io, cb, arg);
}

/*
 * nvq_read()/nvq_write() on a namespace with metadata: an extended format
 * carries it in the buffer; separate 8-byte PI metadata is inserted and
 * stripped by the controller (PRACT, as Linux does without an integrity
 * buffer, checking the guard and, types 1 and 2, the reference tag of the
 * LBA's low 32 bits); anything else needs the metadata API.
 */
static int nvq_rw_md_plain(struct nvq_queue *q, uint8_t opc, uint32_t nsid,
			   const void *buf, uint64_t slba, uint32_t nlb,
			   unsigned int flags, nvq_cb cb, void *arg)
{
	const struct nvq_ns *ns;
	struct nvq_io io;
	int rc;

	rc = check_common(q, flags, cb);
	if (rc)
		return rc;
	/* Not a namespace with metadata: not active, or not driven. */
	ns = nvq_ctrl_ns(q->ctrl, nsid);
	if (!ns || !ns->md)
		return check_range(q->ctrl, ns, nsid, slba, nlb);

	nvq_io_init(&io);
	io.nsid = ns->nsid;
	io.slba = slba;
	io.nlb = nlb;
	io.buf = (void *)(uintptr_t)buf;
	io.flags = flags;
	if (!ns->ext) {
		if (!ns->pi_type || ns->ms != 8)
			return nvq_err(
				-EINVAL,
				"namespace %u has %u bytes of separate metadata per block%s: use nvq_read_io()/nvq_write_io() with a metadata buffer",
				ns->nsid, ns->ms,
				ns->pi_type ? " beyond its PI" : "");
		io.flags |= NVQ_IO_PRACT | NVQ_IO_PRCHK_GUARD;
		if (ns->pi_type != 3) {
			io.flags |= NVQ_IO_PRCHK_REF;
			io.reftag = (uint32_t)slba;
		}
	}
	return submit_io(q, opc, &io, cb, arg);
}

int nvq_io_raw(struct nvq_queue *q, const struct nvq_sqe *sqe, void *buf,
	       size_t len, void *md, size_t md_len, unsigned int flags,
	       nvq_cb cb, void *arg)
{
	uint64_t iova = 0, md_iova = 0;
	struct nvq_cmd *cmd;
	unsigned int dir;
	int rc;

	if (!q || !sqe || !cb)
		return nvq_err(-EINVAL, "NULL queue, command or callback");
	if (flags & ~NVQ_IO_MORE)
		return nvq_err(-EINVAL, "unknown raw I/O flags %#x",
			       flags & ~NVQ_IO_MORE);
	if (sqe->flags & NVQ_SQE_FUSE_MASK)
		return nvq_err(-EINVAL, "fused commands are not supported");
	dir = sqe->opcode & 3;
	if (dir == 3)
		return nvq_err(
			-EINVAL,
			"opcode %#x is bidirectional, which nvq does not transfer",
			sqe->opcode);
	if ((dir == 0) != (len == 0) || (len && !buf))
		return nvq_err(-EINVAL,
			       "opcode %#x %s a data buffer (%zu bytes given)",
			       sqe->opcode, dir ? "needs" : "takes no", len);
	if (((uintptr_t)buf & 3) || ((uintptr_t)md & 3))
		return nvq_err(-EINVAL,
			       "buffer %p or metadata %p is not 4-byte aligned",
			       buf, md);
	if (len > q->ctrl->max_xfer)
		return nvq_err(-EINVAL,
			       "%zu bytes exceed the maximum transfer of %u",
			       len, q->ctrl->max_xfer);
	if (__atomic_load_n(&q->dead, __ATOMIC_RELAXED))
		return dead(q);
	if (len && nvq_mem_iova(q->ctrl->mem, mem_cache(q), buf, len, &iova))
		return nvq_err(-EFAULT,
			       "buffer %p (%zu bytes) is not in DMA memory",
			       buf, len);
	if (md && nvq_mem_iova(q->ctrl->mem, mem_cache(q), md,
			       md_len ? md_len : 1, &md_iova))
		return nvq_err(
			-EFAULT,
			"metadata buffer %p (%zu bytes) is not in DMA memory",
			md, md_len);
	cmd = nvq_queue_get_cmds(q, 1);
	if (!cmd)
		return -EAGAIN;
	cmd->sqe = *sqe;
	cmd->sqe.cid = cmd->cid;
	cmd->sqe.flags &= (uint8_t)~0xc0; /* PSDT 00b: PRPs */
	cmd->sqe.prp1 = 0;
	cmd->sqe.prp2 = 0;
	cmd->sqe.mptr = md_iova;
	if (len) {
		rc = nvq_dptr_build(q, &cmd->sqe, iova, len, &cmd->prp);
		if (rc) {
			nvq_queue_put_cmds(q, cmd);
			return nvq_err(
				rc,
				"cannot build the PRP list of a %zu-byte transfer",
				len);
		}
	}
	cmd->cb = cb;
	cmd->arg = arg;
	nvq_queue_post(q, cmd, flags);
	return 0;
}
