// SPDX-License-Identifier: MIT
/*
 * The controller's state machine: open, bring-up and shutdown (NVMe Base
 * 2.0, 3.5.1 "Memory-based Controller Initialization" and 3.6
 * "Shutdown"), through the transport's ops (struct nvq_ctrl_ops); admin
 * commands are in admin.c, namespaces in ns.c. Everything read from the device is checked before use: a
 * real SSD or QEMU may differ from the emulated controller in anything the
 * specification allows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl.h"
#include "internal.h"
#include "prp.h"
#include "qos.h"

static uint64_t next_uid = 1;

/*
 * Wait until (CSTS & @mask) == @want for at most @timeout_ms. CFS fails the
 * wait when @cfs_fails (while enabling; a disable is how CFS is cleared).
 */
static int wait_csts(struct nvq_ctrl *c, uint32_t mask, uint32_t want,
		     uint32_t timeout_ms, bool cfs_fails, const char *what)
{
	uint64_t deadline = nvq_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	unsigned int delay = 1;
	uint32_t v;

	for (;;) {
		v = nvq_ctrl_csts(c);
		if (v == NVQ_REG_GONE32)
			return nvq_err(
				-ENODEV,
				"%s: controller is gone (CSTS reads all-ones)",
				what);
		if ((v & mask) == want)
			return 0;
		if (cfs_fails && (v & NVQ_CSTS_CFS))
			return nvq_err(
				-EIO,
				"%s: controller fatal status (CSTS.CFS, CSTS %#x)",
				what, v);
		if (nvq_now_ns() > deadline)
			return nvq_err(-ETIMEDOUT,
				       "%s: timed out after %u ms (CSTS %#x%s)",
				       what, timeout_ms, v,
				       v & NVQ_CSTS_CFS ? ", fatal status" :
							  "");
		nvq_sleep_us(delay);
		if (delay < 1000)
			delay *= 2;
	}
}

static uint32_t cap_timeout_ms(uint64_t cap)
{
	uint32_t to = NVQ_CAP_TO(cap);

	/* CAP.TO 0 would mean "ready at once"; give slow devices 500 ms. */
	return (to ? to : 1) * 500u;
}

/* NVMe 2.0 CAP.CRMS.CRWMS and the Controller Ready Timeouts register. */
#define CAP_CRWMS (1ull << 59)
#define REG_CRTO 0x68
#define CRTO_CRWMT(crto) ((crto)&0xffff)
/* CAP.CSS bit 6: I/O Command Sets; CC.CSS 110b enables all of them. */
#define CAP_CSS_IOCSS (1u << 6)
#define CC_CSS_ALL (6u << NVQ_CC_CSS_SHIFT)

/*
 * How long CSTS.RDY may take to follow CC.EN. CAP.TO saturates at 127.5 s;
 * a 2.0 controller with CAP.CRMS.CRWMS reports the real bound for CC.CRIME
 * = 0 (ready with media, which nvq uses) in CRTO.CRWMT, and some report a
 * CRWMT smaller than CAP.TO: take the larger (NVMe 2.0, CRTO register).
 */
static uint32_t ready_timeout_ms(struct nvq_ctrl *c)
{
	uint32_t ms = cap_timeout_ms(c->cap), crto;

	if (!(c->cap & CAP_CRWMS))
		return ms;
	crto = nvq_ctrl_reg_read32(c, REG_CRTO);
	if (crto == NVQ_REG_GONE32)
		return ms;
	return MAX(ms, CRTO_CRWMT(crto) * 500u);
}

/* ------------------------------------------------------------------ */
/* Bring-up                                                            */
/* ------------------------------------------------------------------ */

int nvq_ctrl_disable(struct nvq_ctrl *c)
{
	uint32_t cc = nvq_ctrl_reg_read32(c, NVQ_REG_CC);
	uint32_t st = nvq_ctrl_csts(c);
	int rc;

	if (cc == NVQ_REG_GONE32 || st == NVQ_REG_GONE32)
		return nvq_err(-ENODEV,
			       "controller is gone (registers read all-ones)");
	/*
	 * Changing EN while RDY has not caught up with it is undefined; let
	 * a controller still enabling finish first (CFS ends that early).
	 */
	if ((cc & NVQ_CC_EN) && !(st & NVQ_CSTS_RDY) && !(st & NVQ_CSTS_CFS)) {
		rc = wait_csts(c, NVQ_CSTS_RDY, NVQ_CSTS_RDY, c->ready_ms, true,
			       "waiting for the previous enable");
		if (rc && rc != -EIO)
			return rc;
	}
	if (cc & NVQ_CC_EN)
		nvq_ctrl_reg_write32(c, NVQ_REG_CC, cc & ~NVQ_CC_EN);
	return wait_csts(c, NVQ_CSTS_RDY, 0, c->ready_ms, false,
			 "disabling the controller (CC.EN=0)");
}

int nvq_ctrl_enable(struct nvq_ctrl *c)
{
	uint32_t cc;

	/* As Linux does: 110b whenever the controller has I/O Command Sets;
	 * nvq_ctrl_scan_namespaces() then keeps the NVM ones. */
	cc = NVQ_CC_EN | (c->iocss ? CC_CSS_ALL : NVQ_CC_CSS_NVM) |
	     (0u << NVQ_CC_MPS_SHIFT) | NVQ_CC_AMS_RR | NVQ_CC_SHN_NONE |
	     (NVQ_SQES_LOG2 << NVQ_CC_IOSQES_SHIFT) |
	     (NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT);
	nvq_ctrl_reg_write32(c, NVQ_REG_CC, cc);
	c->enabled = true;
	return wait_csts(c, NVQ_CSTS_RDY, NVQ_CSTS_RDY, c->ready_ms, true,
			 "enabling the controller (CC.EN=1)");
}

static int check_cap(struct nvq_ctrl *c)
{
	uint64_t cap = c->cap;

	if (!(NVQ_CAP_CSS(cap) & (NVQ_CAP_CSS_NVM | CAP_CSS_IOCSS)))
		return nvq_err(
			-ENOTSUP,
			"controller supports neither the NVM command set nor I/O Command Sets (CAP.CSS %#x)",
			NVQ_CAP_CSS(cap));
	c->iocss = NVQ_CAP_CSS(cap) & CAP_CSS_IOCSS;
	if (NVQ_CAP_MPSMIN(cap) > 0 ||
	    NVQ_CAP_MPSMAX(cap) < NVQ_CAP_MPSMIN(cap))
		return nvq_err(
			-ENOTSUP,
			"controller memory page sizes %u..%u bytes exclude the 4096 nvq uses",
			4096u << NVQ_CAP_MPSMIN(cap),
			4096u << NVQ_CAP_MPSMAX(cap));
	if (NVQ_CAP_MQES(cap) < 1)
		return nvq_err(-EIO, "controller reports CAP.MQES 0 (invalid)");
	return 0;
}

/*
 * The NVM command set's own limits (Identify CNS 06h, CSI 00h): Write
 * Zeroes and Dataset Management are sized by them, not by MDTS, which
 * limits data transfers only. Asked of controllers that may know CNS 06h
 * (NVMe 2.0, or I/O Command Sets in CAP.CSS); when there is no answer,
 * Write Zeroes keeps MDTS as its limit, as Linux does.
 */
static void identify_nvm_limits(struct nvq_ctrl *c)
{
	struct nvq_id_ctrl_nvm *id;
	struct nvq_sqe sqe = { .opcode = nvq_admin_identify };
	void *buf;
	int rc = -ENOTSUP;

	c->wz_max_bytes = c->max_xfer;
	c->dmrl = NVQ_DSM_MAX_RANGES;
	if (c->vs < NVQ_VS(2, 0, 0) && !c->iocss)
		return;
	buf = nvq_mem_alloc(c->mem, NVQ_IDENTIFY_DATA_SIZE, c->node, NULL);
	if (!buf)
		return;
	sqe.cdw10 = NVQ_ID_CNS_CSI_CTRL;
	sqe.cdw11 = (uint32_t)NVQ_CSI_NVM << NVQ_IDENTIFY_CSI_SHIFT;
	rc = nvq_ctrl_admin(c, &sqe, &buf, NVQ_IDENTIFY_DATA_SIZE, NULL, NULL);
	if (!rc) {
		id = buf;
		/* In units of CAP.MPSMIN, which check_cap() made 4 KiB. */
		c->wz_max_bytes = id->wzsl && id->wzsl < 32 ?
					  (uint64_t)NVQ_PAGE_SIZE << id->wzsl :
					  0;
		if (id->dmrl)
			c->dmrl = id->dmrl;
		c->dmrsl = id->dmrsl;
		c->dmsl = id->dmsl;
	}
	/* Not knowing CNS 06h is no failure: the limits stay MDTS's. */
	nvq_err_clear();
	if (buf)
		nvq_mem_free(c->mem, buf);
}

static int identify_ctrl(struct nvq_ctrl *c)
{
	struct nvq_id_ctrl *id;
	int rc;

	id = malloc(sizeof(*id));
	if (!id)
		return nvq_err(-ENOMEM, "out of memory");
	rc = nvq_ctrl_identify(c, NVQ_ID_CNS_CTRL, 0, id, NULL);
	if (rc) {
		free(id);
		return rc;
	}
	c->id = id;
	/* SQES/CQES: bits 3:0 required size, 7:4 maximum (log2). */
	if ((id->sqes & 0xf) > NVQ_SQES_LOG2 || (id->sqes >> 4) < NVQ_SQES_LOG2)
		return nvq_err(
			-ENOTSUP,
			"controller SQ entry sizes (SQES %#x) exclude 64 bytes",
			id->sqes);
	if ((id->cqes & 0xf) > NVQ_CQES_LOG2 || (id->cqes >> 4) < NVQ_CQES_LOG2)
		return nvq_err(
			-ENOTSUP,
			"controller CQ entry sizes (CQES %#x) exclude 16 bytes",
			id->cqes);
	/* MDTS is in units of CAP.MPSMIN, which check_cap() made 4 KiB. */
	if (id->mdts == 0 || id->mdts > 9)
		c->max_xfer = NVQ_MAX_XFER;
	else
		c->max_xfer = NVQ_PAGE_SIZE << id->mdts;
	return 0;
}

/*
 * The QoS knobs of nvq_opts. Lacking permission is not an error: I/O runs
 * without limits, and the reason goes to the notes of nvq_open().
 */
static int setup_qos(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_info info;
	int rc;

	rc = nvq_qos_ctrl_create(&c->qos);
	if (rc) {
		c->qos = NULL;
		return rc;
	}
	rc = nvq_qos_set_timeout(c->qos, c->opts.cpu_lat_timeout_ms ?
						 c->opts.cpu_lat_timeout_ms :
						 NVQ_QOS_TIMEOUT_MS_DEFAULT);
	/*
	 * The method first: with the limit still off, it measures nothing.
	 * "auto" leaves the default ($NVQ_QOS_METHOD, else auto).
	 */
	if (!rc && c->opts.cpu_lat_method != NVQ_QOS_METHOD_AUTO)
		rc = nvq_qos_set_method(c->qos, c->opts.cpu_lat_method);
	if (!rc)
		rc = nvq_qos_set_limit(c->qos, c->opts.cpu_lat_limit_us);
	if (rc || c->opts.cpu_lat_limit_us == NVQ_QOS_OFF)
		return rc;
	nvq_qos_info(c->qos, &info);
	nvq_qos_method_info(c->qos, &mi);
	if (info.status[0] && mi.method == NVQ_QOS_METHOD_CPUIDLE)
		nvq_note(notes, notes_len, "CPU latency limit not applied: %s",
			 info.status);
	return 0;
}

/*
 * Negotiate the number of I/O queues (Set Features Number of Queues, a
 * core matter on every transport) and their depth, then let the transport
 * create them.
 */
static int setup_io_queues(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	unsigned int want, granted;
	uint32_t result = 0, depth;
	int rc;

	want = c->opts.nr_queues ? c->opts.nr_queues : c->nr_cpus;
	want = MIN(want, NVQ_MAX_QUEUES);
	rc = nvq_ctrl_admin_simple(c, nvq_admin_set_features,
				   NVQ_FEAT_NUM_QUEUES,
				   NVQ_NUM_QUEUES(want, want), 0, 0, &result);
	if (rc)
		return rc;
	granted = MIN((result & 0xffff) + 1, (result >> 16) + 1);
	c->nr_queues = MIN(want, granted);

	depth = c->opts.queue_depth ? c->opts.queue_depth : 256;
	depth = MIN(depth, NVQ_CAP_MQES(c->cap) + 1);
	return c->ops->io_queues_create(c, depth, notes, notes_len);
}

/*
 * NVQ_PRP_POOLS, a benchmark knob (docs/numa.md): where PRP list blocks
 * come from. Unset or empty: the default.
 */
static int pools_mode(enum nvq_pools_mode *mode)
{
	const char *v = getenv("NVQ_PRP_POOLS");

	/* The cache: docs/numa.md has the numbers that made it the default. */
	*mode = NVQ_POOLS_CACHE;
	if (!v || !*v)
		return 0;
	if (!strcmp(v, "node"))
		*mode = NVQ_POOLS_NODE;
	else if (!strcmp(v, "device"))
		*mode = NVQ_POOLS_DEVICE;
	else if (!strcmp(v, "cache"))
		*mode = NVQ_POOLS_CACHE;
	else
		return nvq_err(-EINVAL,
			       "NVQ_PRP_POOLS=%s: expected device, node or "
			       "cache",
			       v);
	return 0;
}

/*
 * The PRP list pools: one set per NUMA node, each on its node, or (the
 * device-wide baseline) one set on the device's node that every node's
 * entry borrows.
 */
static int setup_pools(struct nvq_ctrl *c)
{
	enum nvq_pools_mode mode;
	int i, rc;

	rc = pools_mode(&mode);
	if (rc)
		return rc;
	c->pools = calloc((size_t)c->nr_nodes, sizeof(*c->pools));
	if (!c->pools)
		return nvq_err(-ENOMEM, "out of memory");
	for (i = 0; i < c->nr_nodes; i++) {
		if (mode == NVQ_POOLS_DEVICE && i != c->node)
			continue;
		rc = nvq_pools_create(c->mem, i, &c->pools[i]);
		if (rc)
			return rc;
		c->pools[i].mode = mode;
	}
	if (mode == NVQ_POOLS_DEVICE)
		for (i = 0; i < c->nr_nodes; i++)
			if (i != c->node) {
				c->pools[i] = c->pools[c->node];
				c->pools[i].borrowed = true;
			}
	return 0;
}

/*
 * Each I/O queue takes its PRP lists from the pools of the node of the
 * CPUs that use it (CPU n uses queue n % nr_queues), or, when those span
 * nodes, of the node of the CPU its interrupt goes to.
 */
static int place_queues(struct nvq_ctrl *c)
{
	unsigned int i;
	int rc;

	for (i = 0; i < c->nr_queues; i++) {
		struct nvq_queue *q = c->queues[i];
		int irq_cpu = q->vec ? q->vec->cpu : -1;
		bool spans;
		int node;

		node = nvq_pools_queue_node(i, c->nr_queues, c->nr_cpus,
					    irq_cpu, c->nr_nodes, nvq_cpu_node,
					    &spans);
		/* One set for the device: its node is where the pools are. */
		if (c->pools[node].borrowed)
			node = c->node;
		if (node == q->node && spans == q->node_spans)
			continue;
		rc = nvq_queue_set_pools(q, &c->pools[node], node, spans);
		if (rc)
			return nvq_err(rc, "queue %u: out of memory", q->qid);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Shutdown and teardown                                               */
/* ------------------------------------------------------------------ */

static void shutdown_ctrl(struct nvq_ctrl *c)
{
	uint32_t rtd3e = c->id ? c->id->rtd3e : 0;
	uint32_t ms = 5000, cc;

	/* RTD3E in us, clamped to 5..60 s as the kernel does. */
	if (rtd3e)
		ms = MIN(MAX(rtd3e / 1000, 5000u), 60000u);
	cc = nvq_ctrl_reg_read32(c, NVQ_REG_CC);
	if (cc == NVQ_REG_GONE32)
		return;
	/* Never got ready (fatal status at enable): nothing to flush. */
	if (!(nvq_ctrl_csts(c) & NVQ_CSTS_RDY)) {
		nvq_ctrl_disable(c);
		return;
	}
	cc = (cc & ~NVQ_CC_SHN_MASK) | NVQ_CC_SHN_NORMAL;
	nvq_ctrl_reg_write32(c, NVQ_REG_CC, cc);
	if (!wait_csts(c, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT, ms, false,
		       "shutting down"))
		return;
	/* No orderly shutdown: a reset at least stops all DMA. */
	nvq_ctrl_disable(c);
}

static void teardown(struct nvq_ctrl *c)
{
	unsigned int i;
	bool alive;

	/* The watchdog may fail the controller (c->enabled) until joined. */
	nvq_watchdog_stop(c);
	alive = c->enabled && c->aq;
	if (c->ops)
		c->ops->quiesce(c);
	/*
	 * No more I/O: put the CPUs' PM QoS settings back now rather than
	 * after a shutdown that may take seconds.
	 */
	nvq_qos_ctrl_destroy(c->qos);
	c->qos = NULL;

	if (alive && nvq_ctrl_csts(c) == NVQ_REG_GONE32)
		alive = false;
	if (c->ops)
		alive = c->ops->io_queues_delete(c, alive);
	if (c->enabled && nvq_ctrl_csts(c) != NVQ_REG_GONE32)
		shutdown_ctrl(c);
	if (c->ops)
		c->ops->queues_free(c);
	if (c->pools) {
		for (i = 0; i < (unsigned int)c->nr_nodes; i++)
			nvq_pools_destroy(&c->pools[i]);
		free(c->pools);
	}
	/* Rings, shadow pages and abandoned admin buffers go with it. */
	if (c->mem)
		nvq_mem_destroy(c->mem);
	if (c->ops)
		c->ops->close(c);
	if (c->ns)
		for (i = 0; i < c->nr_ns; i++)
			free(c->ns[i].id);
	free(c->ns);
	free(c->id);
	free(c->uri);
	pthread_mutex_destroy(&c->admin_lock);
	free(c);
}

/*
 * Copy the caller's options, whatever release it was built with: the
 * fields it knows, defaults for the rest. A newer caller's fields that
 * this library does not know must be zero (the clone3() rule), so that an
 * option it relies on is never silently ignored.
 */
static int copy_opts(struct nvq_opts *dst, const struct nvq_opts *src)
{
	size_t n = src->size, i;

	/* nvq_open() must not read past what the caller owns. */

	if (n != NVQ_OPTS_SIZE_VER0 && n != NVQ_OPTS_SIZE_VER1 &&
	    n != NVQ_OPTS_SIZE_VER2 && n < NVQ_OPTS_SIZE_VER3)
		return nvq_err(
			-EINVAL,
			"nvq_open: opts.size %zu is not a released size of struct nvq_opts (set up opts with nvq_opts_init())",
			n);
	for (i = sizeof(*dst); i < n; i++)
		if (((const unsigned char *)src)[i])
			return nvq_err(
				-E2BIG,
				"nvq_open: opts has fields this library (%s) does not know (byte %zu of %zu is set); upgrade libnvq",
				nvq_version(), i, n);
	nvq_opts_init(dst);
	memcpy(dst, src, MIN(n, sizeof(*dst)));
	dst->size = sizeof(*dst);
	return 0;
}

static int check_opts(const struct nvq_opts *o)
{
	if (o->mode != NVQ_MODE_POLL && o->mode != NVQ_MODE_WAIT &&
	    o->mode != NVQ_MODE_THREAD)
		return nvq_err(-EINVAL, "unknown completion mode %d", o->mode);
	if (o->queue_depth == 1 || o->queue_depth > 65536)
		return nvq_err(
			-EINVAL,
			"queue depth %u is out of range (2..65536, 0 = default)",
			o->queue_depth);
	if (o->nr_queues > 65535)
		return nvq_err(-EINVAL,
			       "%u queues is out of range (at most 65535)",
			       o->nr_queues);
	if (o->cpu_lat_limit_us != NVQ_QOS_OFF &&
	    o->cpu_lat_limit_us != NVQ_QOS_AUTO &&
	    (o->cpu_lat_limit_us < 0 ||
	     o->cpu_lat_limit_us > NVQ_QOS_LIMIT_MAX))
		return nvq_err(
			-EINVAL,
			"CPU latency limit %d is out of range (-1 off, -2 auto, 0..%d us)",
			o->cpu_lat_limit_us, NVQ_QOS_LIMIT_MAX);
	if (o->cpu_lat_timeout_ms > NVQ_QOS_TIMEOUT_MS_MAX)
		return nvq_err(
			-EINVAL,
			"CPU latency timeout %u ms is out of range (1..%d, 0 = default)",
			o->cpu_lat_timeout_ms, NVQ_QOS_TIMEOUT_MS_MAX);
	if ((unsigned int)o->cpu_lat_method > NVQ_QOS_METHOD_HYBRID)
		return nvq_err(
			-EINVAL,
			"CPU latency method %d is unknown (0 auto, 1 cpuidle, 2 poll, 3 hybrid)",
			(int)o->cpu_lat_method);
	if (o->io_timeout_ms > NVQ_TIMEOUT_MS_MAX ||
	    o->admin_timeout_ms > NVQ_TIMEOUT_MS_MAX)
		return nvq_err(
			-EINVAL,
			"command timeout %u ms is out of range (1..%u, 0 = default)",
			MAX(o->io_timeout_ms, o->admin_timeout_ms),
			NVQ_TIMEOUT_MS_MAX);
	return 0;
}

/*
 * The lock mode of shared queues. One lock for both halves exists only in
 * the benchmark build of the library (NVQ_BENCH_SINGLE_LOCK), so that the
 * library applications link pays nothing for it on the completion path.
 */
static int lock_mode(unsigned int flags, enum nvq_lock_mode *mode)
{
	*mode = NVQ_LOCK_SPLIT;
	if (!(flags & NVQ_OPEN_SINGLE_LOCK))
		return 0;
#ifdef NVQ_BENCH_SINGLE_LOCK
	*mode = NVQ_LOCK_SINGLE;
	return 0;
#else
	return nvq_err(-EOPNOTSUPP,
		       "single-lock queues exist only in the benchmark build");
#endif
}

/*
 * The namespace the URI names must be active (one nvq drives or one it
 * knows and says why not, nvq_ns_absent()): else -ENOENT naming the
 * active ones, so that a typo fails at the open, not at the first I/O.
 */
static int check_uri_nsid(struct nvq_ctrl *c)
{
	char list[128] = "";
	size_t l = 0;
	unsigned int i;

	if (!c->uri_nsid || nvq_ctrl_ns(c, c->uri_nsid))
		return 0;
	for (i = 0; i < c->nr_bad_ns; i++)
		if (c->bad_ns[i].nsid == c->uri_nsid)
			return 0;
	for (i = 0; i < c->nr_ns && l < sizeof(list) - 16; i++)
		l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%u",
				      i ? ", " : "", c->ns[i].nsid);
	if (i < c->nr_ns)
		snprintf(list + l, sizeof(list) - l, ", ...");
	return nvq_err(-ENOENT, "namespace %u is not active (active: %s)",
		       c->uri_nsid, c->nr_ns ? list : "none");
}

/* Tear down a half-open controller, keeping the message of the failure. */
static int fail_open(struct nvq_ctrl *c, int rc)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", nvq_errmsg());
	teardown(c);
	return nvq_err(rc, "%s", msg);
}
/* The transport saw the device break (a connection died): reset. */
static void transport_fault(void *arg, int err, const char *why)
{
	nvq_ctrl_request_reset(arg, err, why);
}

int nvq_open_flags(const char *uri, const struct nvq_opts *opts,
		   unsigned int flags, struct nvq_ctrl **ctrlp)
{
	struct nvq_ctrl *c;
	char notes[NVQ_NOTES_LEN] = "";
	char *dev;
	long ncpu;
	int rc = 0;

	if (!ctrlp)
		return nvq_err(-EINVAL, "nvq_open: NULL ctrl pointer");
	*ctrlp = NULL;
	if (!uri)
		return nvq_err(-EINVAL, "nvq_open: NULL URI");
	c = calloc(1, sizeof(*c));
	if (!c)
		return nvq_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&c->admin_lock, NULL);
	if (opts)
		rc = copy_opts(&c->opts, opts);
	else
		nvq_opts_init(&c->opts);
	if (!rc)
		rc = check_opts(&c->opts);
	if (!rc)
		rc = lock_mode(flags, &c->lock_mode);
	if (rc)
		goto fail;
	c->uid = __atomic_fetch_add(&next_uid, 1, __ATOMIC_RELAXED);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c->nr_cpus = ncpu > 0 ? (unsigned int)ncpu : 1;
	c->uri = strdup(uri);
	dev = malloc(strlen(uri) + 1);
	if (!c->uri || !dev) {
		free(dev);
		rc = nvq_err(-ENOMEM, "out of memory");
		goto fail;
	}
	/* The transport opens the device; the /NSID is the controller's. */
	rc = nvq_uri_split_nsid(uri, dev, strlen(uri) + 1, &c->uri_nsid);
	if (!rc)
		rc = nvq_transport_open(dev, &c->t);
	free(dev);
	if (rc) {
		c->t = NULL;
		goto fail;
	}
	c->ops = &nvq_pcie_ctrl_ops;
	c->t->fault = transport_fault;
	c->t->fault_arg = c;
	c->nr_nodes = nvq_numa_nodes();
	c->node = c->t->numa_node >= 0 && c->t->numa_node < c->nr_nodes ?
			  c->t->numa_node :
			  0;
	rc = nvq_mem_create(c->t, &c->mem);
	if (rc) {
		c->mem = NULL;
		goto fail;
	}
	rc = setup_pools(c);
	if (rc)
		goto fail;

	c->cap = c->ops->reg_read64(c, NVQ_REG_CAP);
	if (c->cap == NVQ_REG_GONE64) {
		rc = nvq_err(-ENODEV,
			     "%s: controller is gone (CAP reads all-ones)",
			     uri);
		goto fail;
	}
	c->vs = nvq_ctrl_reg_read32(c, NVQ_REG_VS);
	c->dstrd = NVQ_CAP_DSTRD(c->cap);
	c->ready_ms = ready_timeout_ms(c);
	/* Linux's defaults: admin_timeout 60 s, io_timeout 30 s; a
	 * controller whose CAP.TO is longer gets that. */
	c->admin_timeout_ms = c->opts.admin_timeout_ms ?
				      c->opts.admin_timeout_ms :
				      MAX(cap_timeout_ms(c->cap),
					  NVQ_ADMIN_TIMEOUT_MS_DEFAULT);
	c->io_timeout_ms = c->opts.io_timeout_ms ? c->opts.io_timeout_ms :
						   NVQ_IO_TIMEOUT_MS_DEFAULT;
	c->admin_owns_vec0 = true;
	rc = check_cap(c);
	if (!rc)
		rc = nvq_ctrl_disable(c);
	if (!rc)
		rc = c->ops->admin_queue_create(c);
	if (!rc)
		rc = nvq_ctrl_enable(c);
	if (!rc)
		rc = identify_ctrl(c);
	if (!rc)
		identify_nvm_limits(c);
	if (!rc)
		rc = nvq_ctrl_scan_namespaces(c, notes, sizeof(notes));
	if (!rc)
		rc = check_uri_nsid(c);
	if (!rc)
		rc = setup_qos(c, notes, sizeof(notes));
	if (!rc)
		rc = setup_io_queues(c, notes, sizeof(notes));
	if (!rc)
		rc = place_queues(c);
	if (!rc)
		rc = nvq_watchdog_start(c);
	if (rc)
		goto fail;
	/* What was skipped is worth telling, though nvq_open() succeeded. */
	memcpy(c->notes, notes, sizeof(c->notes));
	nvq_err_clear();
	*ctrlp = c;
	return 0;

fail:
	return fail_open(c, rc);
}

int nvq_open(const char *uri, const struct nvq_opts *opts,
	     struct nvq_ctrl **ctrl)
{
	return nvq_open_flags(uri, opts, 0, ctrl);
}

void nvq_close(struct nvq_ctrl *ctrl)
{
	if (ctrl)
		teardown(ctrl);
}

const char *nvq_ctrl_notes(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->notes : "";
}

struct nvq_qos_ctrl *nvq_ctrl_qos(struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->qos : NULL;
}

struct nvq_qos_queue *nvq_queue_qos(struct nvq_queue *q)
{
	return q ? q->qos : NULL;
}
