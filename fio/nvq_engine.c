// SPDX-License-Identifier: MIT
/*
 * fio external ioengine for nvq.
 *
 *   fio --ioengine=external:/path/libnvq_fio.so --thread=1 \
 *       --filename=emu.size=1G --rw=randread --bs=4k --iodepth=32 ...
 *
 * Built against the headers of the very fio version that loads it (the
 * engine reads fio's structures directly); uses nothing of nvq but the
 * public API, include/nvq/nvq.h.
 *
 * fio splits filename= at ':', so the first '.' of a file name stands for
 * the ':' after the URI scheme (emu.size=1G is emu:size=1G); the uri=
 * option names a controller verbatim instead. Jobs in one process that
 * name the same URI share one controller (reference counted), each on its
 * own I/O queue while the controller has enough of them. In thread mode a
 * controller stays open until the engine is unloaded, so that a RAM-backed
 * emulated device keeps its data from one job to the next. The completion
 * mode, the CPU latency QoS knobs (cpu_lat_limit_us, cpu_lat_timeout_ms,
 * cpu_lat_method)
 * and the command timeouts (io_timeout_ms, admin_timeout_ms), given to
 * nvq_open() through struct nvq_opts, belong to the controller: jobs
 * running at the same time on one must agree on them.
 *
 * Submission: ->queue() places the command in the submission queue with
 * NVQ_IO_MORE and ->commit() rings one doorbell for the whole batch.
 * Completions: ->getevents() reaps with nvq_poll() (mode=poll) or sleeps in
 * nvq_wait() (mode=wait); the callbacks put finished requests on a ring
 * that ->event() reads.
 *
 * When fio stops a job (a signal, the end of runtime=: td->terminate) it
 * waits in ->getevents() for what is in flight. A device that stopped
 * answering must not hold it there: after TERMINATE_GRACE_MS the engine
 * gives up on those commands and hands them back to fio as failed with
 * ECANCELED. Waits are cut into WAIT_SLICE_MS slices to notice that, and
 * past runtime= getevents() returns early so that fio notices it too. The device may still hold them, so the job's memory (and
 * the controller, which cancels them for good in nvq_close()) stays until
 * the controller closes.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fio.h"
#include "optgroup.h"
#include "verify.h"

#include <nvq/nvq.h>

#include "transport.h" /* the library's URI grammar: the /NSID */

#define ENGINE_NAME "nvq"

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* Empty polls between two sched_yield() calls while mode=poll waits. */
#define POLL_SPINS_PER_YIELD 256

/* How long teardown waits for the device to finish outstanding commands. */
#define DRAIN_TIMEOUT_MS 30000
/* Once fio terminates the job: how long what is in flight may still take. */
#define TERMINATE_GRACE_MS 50
/* Longest sleep in nvq_wait() before a look at td->terminate. */
#define WAIT_SLICE_MS 20

/* Per-job options (td->eo). */
struct nvq_fio_options {
	void *pad; /* fio stores the thread_data here: must stay first */
	char *uri;
	unsigned int mode;
	unsigned int nsid;
	unsigned int queues;
	unsigned int qdepth;
	unsigned int queue_stats;
	char *cpu_lat_limit; /* as written; parsed into cpu_lat_limit_us */
	int cpu_lat_limit_us; /* NVQ_QOS_OFF, NVQ_QOS_AUTO or microseconds */
	unsigned int cpu_lat_timeout_ms;
	char *cpu_lat_method_s; /* as written; parsed into cpu_lat_method */
	enum nvq_qos_method cpu_lat_method;
	char *io_timeout; /* as written; parsed into io_timeout_ms */
	char *admin_timeout;
	unsigned int io_timeout_ms; /* 0: the library's default */
	unsigned int admin_timeout_ms;
	/* Metadata and PI: fio's io_uring_cmd options (fio 3.36) */
	unsigned int md_per_io_size;
	unsigned int pi_act;
	char *pi_chk; /* as written; parsed into prchk, NULL: not given */
	unsigned int apptag;
	unsigned int apptag_mask;
	unsigned int prchk; /* NVQ_IO_PRCHK_* */
	bool prchk_set;
};

/* What belongs to a controller rather than to a job (see the top). */
struct ctrl_settings {
	enum nvq_mode mode;
	int cpu_lat_limit_us;
	unsigned int cpu_lat_timeout_ms;
	enum nvq_qos_method cpu_lat_method;
	unsigned int io_timeout_ms; /* as the options say: 0 = default */
	unsigned int admin_timeout_ms;
};

/* A controller opened by this process, shared by every job naming it. */
struct dev {
	struct dev *next;
	char *uri;
	struct nvq_ctrl *ctrl;
	struct ctrl_settings set; /* what it runs with */
	/* the library's default timeouts, for a job that wants them back */
	unsigned int def_io_ms, def_admin_ms;
	unsigned int refs; /* jobs (and size probes) holding it */
	unsigned int nr_queues;
	unsigned int *users; /* jobs per I/O queue */
	bool exclusive; /* lock-free queues: at most one job each */
	/* Said why the CPU latency limit does not apply / what auto chose. */
	bool said_status, said_auto;
};

/* One controller as used by one job: the job's queue on it. */
struct jdev {
	struct dev *dev;
	struct nvq_queue *q;
	unsigned int qidx;
	bool shared; /* another job submits on this queue too */
	bool pending; /* commands placed with NVQ_IO_MORE, doorbell not rung */
	bool registered; /* the job's I/O buffers are registered with it */
	bool md_registered; /* ... and its metadata buffers */
};

/* One fio file: a namespace on one of the job's controllers. */
struct jfile {
	struct jdev *jd;
	uint32_t nsid;
	unsigned int lba_shift;
	uint64_t lba_mask;
	uint64_t base_lba; /* where this file's region of the namespace starts */
	uint64_t nlba; /* LBAs in the region */
	/*
	 * Metadata (fio's io_uring_cmd rules): @blk is the bytes of one LBA
	 * in the data buffer, fio's block unit (lba_size + ms with an
	 * extended format whose metadata is transferred); @md_blk the
	 * separate metadata bytes per LBA, 0 for none.
	 */
	bool md_io; /* nvq_read_io() / nvq_write_io() */
	bool host_pi; /* pi_act=0: the engine generates and checks the PI */
	bool ext;
	uint8_t pi_type;
	uint32_t blk;
	uint32_t md_blk;
	uint32_t ms;
	unsigned int io_flags; /* NVQ_IO_PRACT, NVQ_IO_PRCHK_* */
};

/* Where a request is (struct req.state, atomic). */
enum {
	REQ_IDLE, /* not submitted, or its callback ran */
	REQ_INFLIGHT, /* submitted, callback not yet run */
	REQ_ABANDONED, /* given up on at termination: the device has it */
};

/* Per io_u: what the completion callback needs, and the NVMe result. */
struct req {
	struct job *job;
	struct io_u *io_u;
	struct req *next_all; /* every req of the job, for the final free */
	int state; /* REQ_*, atomic */
	int err; /* negative errno, 0 on success */
	uint16_t status; /* NVMe status when err == -EIO */
	void *md; /* md_per_io_size bytes of separate metadata, or NULL */
	/* pi_act=0 reads: the PI to check when the read completes */
	const struct jfile *pi_file;
	uint64_t pi_slba;
	uint32_t pi_nlb;
	char msg[160]; /* why a request was refused, for ->errdetails() */
};

struct job {
	struct thread_data *td;
	struct nvq_fio_options *o;
	struct jdev *jdevs;
	unsigned int nr_jdevs;
	struct jfile *jfiles;
	unsigned int nr_jfiles;

	/*
	 * Finished requests, reaped by this job's thread, in completion order.
	 * [head, head + returned) were handed to fio by the last getevents()
	 * and are read through event(); they are consumed by the next call.
	 */
	struct req **ring;
	unsigned int mask, head, tail, returned;

	/*
	 * Requests that another job's thread reaped on a shared queue. They
	 * move to the ring in this job's thread.
	 */
	pthread_mutex_t remote_lock;
	struct req **remote;
	unsigned int nr_remote; /* atomic: read without the lock */
	unsigned int remote_done; /* atomic: completions counted remotely */

	/* io_us queued since the last commit: they get their issue time. */
	struct io_u **queued;
	unsigned int nr_queued;

	unsigned long long submitted; /* commands accepted by nvq */
	unsigned long long local_done; /* callbacks run in this thread */

	unsigned long long refused; /* requests failed at submission */

	void *buf; /* td->orig_buffer, DMA memory of jdevs[0] */
	void *md; /* the io_us' metadata buffers, DMA memory of jdevs[0] */
	size_t md_len;
	unsigned int md_stride, md_slots;
	bool stuck; /* commands never completed: keep the memory alive */
	struct req *reqs; /* all of them (next_all) */
	struct job *next_stuck; /* on stuck_jobs until the controllers close */
	uint64_t term_seen_ms; /* when getevents() first saw td->terminate */
	unsigned int abandoned; /* requests given up on */
	unsigned int late; /* atomic: of those, callbacks that ran since */
	/* Every queue of the job is exclusive: only its thread reaps them. */
	bool owner_only;
};

/*
 * The job whose thread is running: on a shared queue a completion callback
 * compares it with the request's job to tell whether it runs in the
 * owner's thread. Set once in init(): fio calls every hook of a job from
 * that job's thread (FIO_NO_OFFLOAD).
 */
static __thread struct job *cur_job;

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev *devs;
static pid_t devs_pid;
/*
 * Jobs whose commands a device still holds (under devs_lock): their memory
 * is freed once every controller closed, when no callback can come.
 */
static struct job *stuck_jobs;

static struct ioengine_ops *engine_ops(void);

/* ------------------------------------------------------------------ */
/* Device naming                                                       */
/* ------------------------------------------------------------------ */

/* "0000.01.00.0": a PCI address with dots where fio cannot take colons. */
static bool dotted_bdf(const char *s)
{
	unsigned int d, b, dv, f;
	int n = -1;

	/* the address, then the end, a /NSID or the ,options */
	return sscanf(s, "%4x.%2x.%2x.%1x%n", &d, &b, &dv, &f, &n) == 4 &&
	       n > 0 && (!s[n] || s[n] == '/' || s[n] == ',');
}

/*
 * The controller URI for file @f: the uri= option if given, else the file
 * name with its first '.' turned into ':' (and, for vfio, the dots of a
 * dotted PCI address into colons). A name without '.' or ':' is taken as
 * a scheme with no parameters ("emu" -> "emu:").
 */
static int file_name_uri(const struct nvq_fio_options *o,
			 const struct fio_file *f, char *buf, size_t len)
{
	const char *name = o->uri && o->uri[0] ? o->uri : f->file_name;
	char *dot;
	int n;

	if (!name || !name[0])
		return -EINVAL;
	n = snprintf(buf, len, "%s", name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (o->uri && o->uri[0])
		return 0;
	if (strchr(buf, ':'))
		return 0; /* fio passed an escaped "\:" through */
	dot = strchr(buf, '.');
	if (!dot) {
		if (strlen(buf) + 2 > len)
			return -ENAMETOOLONG;
		strcat(buf, ":");
		return 0;
	}
	*dot = ':';
	if (!strncmp(buf, "vfio:", 5) && dotted_bdf(dot + 1)) {
		dot[5] = ':';
		dot[8] = ':';
	}
	return 0;
}

/*
 * The URI to open for file @f into @buf, and in *@nsid the namespace it
 * names with a "/NSID" suffix (0: none), in the library's grammar
 * (nvq_uri_split_nsid(), as nvq_open() and nvq-perf's -d read it). The
 * suffix comes off, so that files naming namespaces of one emu: share its
 * controller.
 */
static int file_uri(const struct nvq_fio_options *o, const struct fio_file *f,
		    char *buf, size_t len, uint32_t *nsid)
{
	char raw[PATH_MAX];
	uint32_t n = 0;
	int rc;

	rc = file_name_uri(o, f, raw, sizeof(raw));
	if (rc)
		return rc;
	rc = nvq_uri_split_nsid(raw, buf, len, &n);
	if (rc) {
		log_err("nvq: %s\n", nvq_errmsg());
		return rc;
	}
	if (nsid)
		*nsid = n;
	return 0;
}

/* After a failed open of a name that came from filename=: how to write it. */
static void naming_hint(struct thread_data *td, const struct fio_file *f)
{
	const struct nvq_fio_options *o = td->eo;

	if (o->uri && o->uri[0])
		return;
	log_err("nvq: %s: filename '%s' names no usable nvq device. Write the "
		"URI with '.' for the first ':' (filename=emu.size=1G) or use "
		"uri=emu:size=1G\n",
		td->o.name, f->file_name);
}

static const char *mode_name(enum nvq_mode m)
{
	return m == NVQ_MODE_WAIT ? "wait" : "poll";
}

/* A cpu_lat_limit_us value as a user would write it. */
static const char *limit_name(int us, char *buf, size_t len)
{
	if (us == NVQ_QOS_OFF)
		return "off";
	if (us == NVQ_QOS_AUTO)
		return "auto";
	snprintf(buf, len, "%d", us);
	return buf;
}

static void settings_of(const struct nvq_fio_options *o,
			struct ctrl_settings *set)
{
	set->mode = o->mode;
	set->cpu_lat_limit_us = o->cpu_lat_limit_us;
	set->cpu_lat_timeout_ms = o->cpu_lat_timeout_ms;
	set->cpu_lat_method = o->cpu_lat_method;
	set->io_timeout_ms = o->io_timeout_ms;
	set->admin_timeout_ms = o->admin_timeout_ms;
}

/*
 * The settings that belong to a controller rather than to a job: jobs
 * sharing one must agree on them. On a mismatch, write what differs into
 * @buf (as "mode=wait against mode=poll") and return false.
 */
static bool same_ctrl_settings(const struct nvq_fio_options *o,
			       const struct ctrl_settings *b, char *buf,
			       size_t len)
{
	char x[16], y[16];

	if (o->mode != b->mode)
		snprintf(buf, len, "mode=%s against mode=%s",
			 mode_name(o->mode), mode_name(b->mode));
	else if (o->cpu_lat_limit_us != b->cpu_lat_limit_us)
		snprintf(buf, len, "cpu_lat_limit_us=%s against %s",
			 limit_name(o->cpu_lat_limit_us, x, sizeof(x)),
			 limit_name(b->cpu_lat_limit_us, y, sizeof(y)));
	else if (o->cpu_lat_timeout_ms != b->cpu_lat_timeout_ms)
		snprintf(buf, len, "cpu_lat_timeout_ms=%u against %u",
			 o->cpu_lat_timeout_ms, b->cpu_lat_timeout_ms);
	else if (o->cpu_lat_method != b->cpu_lat_method)
		snprintf(buf, len, "cpu_lat_method=%s against %s",
			 nvq_qos_method_name(o->cpu_lat_method),
			 nvq_qos_method_name(b->cpu_lat_method));
	else if (o->io_timeout_ms != b->io_timeout_ms)
		snprintf(buf, len, "io_timeout_ms=%u against %u",
			 o->io_timeout_ms, b->io_timeout_ms);
	else if (o->admin_timeout_ms != b->admin_timeout_ms)
		snprintf(buf, len, "admin_timeout_ms=%u against %u",
			 o->admin_timeout_ms, b->admin_timeout_ms);
	else
		return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Controllers shared between jobs                                     */
/* ------------------------------------------------------------------ */

/* Jobs of this fio run that use this engine: one queue each. */
static unsigned int count_engine_jobs(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < thread_number; i++)
		if (tnumber_to_td(i)->io_ops == engine_ops())
			n++;
	return n ? n : 1;
}

static void dev_free(struct dev *d)
{
	if (d->ctrl)
		nvq_close(d->ctrl);
	free(d->users);
	free(d->uri);
	free(d);
}

/*
 * Say once per controller what a CPU latency limit amounts to when it is
 * not simply applied: why it cannot be (no permission: I/O runs without
 * it), or what "auto" picked.
 */
static void qos_report(struct dev *d)
{
	struct nvq_qos_info info;

	if (d->set.cpu_lat_limit_us == NVQ_QOS_OFF)
		return;
	nvq_qos_info(nvq_ctrl_qos(d->ctrl), &info);
	if (info.status[0] && !d->said_status) {
		log_info("nvq: %s: %s\n", d->uri, info.status);
		d->said_status = true;
	}
	if (d->set.cpu_lat_limit_us == NVQ_QOS_AUTO && info.reason[0] &&
	    !d->said_auto) {
		log_info("nvq: %s: cpu_lat_limit_us=auto: %s\n", d->uri,
			 info.reason);
		d->said_auto = true;
	}
}

/*
 * Give a controller that no job holds the QoS knobs and the command
 * timeouts of the next job (0: back to the library's defaults).
 */
static int settings_apply(struct dev *d, const struct nvq_fio_options *o)
{
	struct nvq_qos_ctrl *qc = nvq_ctrl_qos(d->ctrl);
	int rc;

	rc = nvq_qos_set_timeout(qc, o->cpu_lat_timeout_ms);
	/* auto after auto keeps the controller's default ($NVQ_QOS_METHOD) */
	if (!rc && (o->cpu_lat_method != NVQ_QOS_METHOD_AUTO ||
		    d->set.cpu_lat_method != NVQ_QOS_METHOD_AUTO))
		rc = nvq_qos_set_method(qc, o->cpu_lat_method);
	if (!rc)
		rc = nvq_qos_set_limit(qc, o->cpu_lat_limit_us);
	if (rc) {
		log_err("nvq: %s: cannot set the CPU latency QoS knobs: %s\n",
			d->uri, nvq_errmsg());
		return rc;
	}
	rc = nvq_ctrl_set_timeouts(
		d->ctrl, o->io_timeout_ms ? o->io_timeout_ms : d->def_io_ms,
		o->admin_timeout_ms ? o->admin_timeout_ms : d->def_admin_ms);
	if (rc) {
		log_err("nvq: %s: cannot set the command timeouts: %s\n",
			d->uri, nvq_errmsg());
		return rc;
	}
	settings_of(o, &d->set);
	d->said_status = false;
	d->said_auto = false;
	qos_report(d);
	return 0;
}

/*
 * Take a reference on the controller named @uri, opening it if this process
 * has not yet. A controller that no job holds any more but that lingers
 * (thread mode) is reopened when the new job wants another completion mode.
 * @probe: called from fio's main thread before the jobs start (file size),
 * where looking at every job is safe.
 */
static int dev_get(struct thread_data *td, const char *uri, bool probe,
		   struct dev **out)
{
	struct nvq_fio_options *o = td->eo;
	enum nvq_mode mode = o->mode;
	unsigned int jobs;
	struct nvq_opts opts;
	struct dev *d, **pp;
	char why[96];
	int rc;

	pthread_mutex_lock(&devs_lock);
	if (devs_pid != getpid()) {
		/*
		 * A forked job process: the controllers of the parent are not
		 * usable here (their threads stayed behind). Forget them.
		 */
		devs = NULL;
		devs_pid = getpid();
	}
	for (pp = &devs; (d = *pp); pp = &d->next) {
		if (strcmp(d->uri, uri))
			continue;
		if (same_ctrl_settings(o, &d->set, why, sizeof(why)))
			goto found;
		if (d->refs) {
			log_err("nvq: %s: %s is in use by another job with "
				"other settings (%s); jobs sharing a "
				"controller need the same mode, "
				"cpu_lat_limit_us, cpu_lat_method, cpu_lat_timeout_ms, "
				"io_timeout_ms and admin_timeout_ms\n",
				td->o.name, uri, why);
			pthread_mutex_unlock(&devs_lock);
			return -EINVAL;
		}
		/*
		 * Nobody holds it (a later job in thread mode): the QoS knobs
		 * and timeouts change in place, which keeps a RAM device's
		 * data; another completion mode needs a new controller.
		 */
		if (d->set.mode == mode) {
			rc = settings_apply(d, o);
			if (rc) {
				pthread_mutex_unlock(&devs_lock);
				return rc;
			}
			goto found;
		}
		*pp = d->next;
		dev_free(d);
		break;
	}

	d = calloc(1, sizeof(*d));
	if (!d || !(d->uri = strdup(uri))) {
		free(d);
		pthread_mutex_unlock(&devs_lock);
		log_err("nvq: out of memory\n");
		return -ENOMEM;
	}
	/* Jobs that may use the controller; 0 = not known here. */
	if (!td->o.use_thread)
		jobs = 1; /* a job process has the controller alone */
	else if (probe)
		jobs = count_engine_jobs();
	else
		jobs = 0;
	nvq_opts_init(&opts);
	opts.mode = mode;
	opts.cpu_lat_limit_us = o->cpu_lat_limit_us;
	opts.cpu_lat_timeout_ms = o->cpu_lat_timeout_ms;
	opts.cpu_lat_method = o->cpu_lat_method;
	opts.io_timeout_ms = o->io_timeout_ms;
	opts.admin_timeout_ms = o->admin_timeout_ms;
	if (o->queues)
		opts.nr_queues = o->queues;
	else
		opts.nr_queues = jobs ? jobs : td->o.numjobs;
	/*
	 * When every job gets a queue of its own, the queues need no locks
	 * (the SPDK model); otherwise jobs may have to share one.
	 */
	opts.exclusive = jobs && opts.nr_queues >= jobs;
	/* NVMe queues hold one entry less than their size. */
	opts.queue_depth = o->qdepth ? o->qdepth : 2 * td->o.iodepth + 1;
	if (opts.queue_depth < 256)
		opts.queue_depth = 256;

	rc = nvq_open(uri, &opts, &d->ctrl);
	if (!rc && opts.exclusive && nvq_ctrl_queue_count(d->ctrl) < jobs) {
		/* The controller granted fewer queues than there are jobs. */
		nvq_close(d->ctrl);
		opts.exclusive = false;
		rc = nvq_open(uri, &opts, &d->ctrl);
	}
	if (rc) {
		log_err("nvq: cannot open controller '%s': %s\n", uri,
			nvq_errmsg());
		d->ctrl = NULL;
		dev_free(d);
		pthread_mutex_unlock(&devs_lock);
		return rc;
	}
	d->exclusive = opts.exclusive;
	settings_of(o, &d->set);
	/* what 0 means, read back now that no option overrides it */
	nvq_ctrl_timeouts(d->ctrl, &d->def_io_ms, &d->def_admin_ms);
	if (o->io_timeout_ms)
		d->def_io_ms = NVQ_IO_TIMEOUT_MS_DEFAULT;
	if (o->admin_timeout_ms)
		d->def_admin_ms = NVQ_ADMIN_TIMEOUT_MS_DEFAULT;
	qos_report(d);
	d->nr_queues = nvq_ctrl_queue_count(d->ctrl);
	d->users = calloc(d->nr_queues ? d->nr_queues : 1, sizeof(*d->users));
	if (!d->users || !d->nr_queues) {
		rc = d->nr_queues ? -ENOMEM : -ENODEV;
		log_err("nvq: %s: %s\n", uri,
			d->nr_queues ? "out of memory" : "no I/O queues");
		dev_free(d);
		pthread_mutex_unlock(&devs_lock);
		return rc;
	}
	d->next = devs;
	devs = d;
found:
	d->refs++;
	pthread_mutex_unlock(&devs_lock);
	*out = d;
	return 0;
}

/*
 * Drop a reference. In thread mode the controller stays open for later
 * jobs; in process mode it closes (a forked child must not inherit it).
 * Returns true when it closed.
 */
static bool dev_put(struct dev *d, bool linger)
{
	struct dev **pp;

	pthread_mutex_lock(&devs_lock);
	if (--d->refs || linger) {
		pthread_mutex_unlock(&devs_lock);
		return false;
	}
	for (pp = &devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	pthread_mutex_unlock(&devs_lock);
	dev_free(d);
	return true;
}

/* The least used I/O queue: each job gets its own while there are enough. */
static int dev_claim_queue(struct dev *d, unsigned int *idx, bool *shared)
{
	unsigned int i, best = 0;

	pthread_mutex_lock(&devs_lock);
	for (i = 1; i < d->nr_queues; i++)
		if (d->users[i] < d->users[best])
			best = i;
	if (d->users[best] && d->exclusive) {
		pthread_mutex_unlock(&devs_lock);
		log_err("nvq: all %u I/O queues of %s are taken by other jobs; "
			"set queues= to at least the number of jobs using it\n",
			d->nr_queues, d->uri);
		return -EBUSY;
	}
	*shared = d->users[best] > 0;
	d->users[best]++;
	pthread_mutex_unlock(&devs_lock);
	*idx = best;
	return 0;
}

static void dev_release_queue(struct dev *d, unsigned int idx)
{
	pthread_mutex_lock(&devs_lock);
	d->users[idx]--;
	pthread_mutex_unlock(&devs_lock);
}

static void job_release(struct job *j);

/*
 * Close what lingers when fio unloads the engine (or exits); then no
 * callback can come any more, and the stuck jobs' memory goes too.
 */
__attribute__((destructor)) static void devs_close_all(void)
{
	struct dev *d, *next;
	struct job *sj, *snext;
	bool all = true;

	pthread_mutex_lock(&devs_lock);
	d = devs_pid == getpid() ? devs : NULL;
	devs = NULL;
	sj = stuck_jobs;
	stuck_jobs = NULL;
	pthread_mutex_unlock(&devs_lock);
	for (; d; d = next) {
		next = d->next;
		if (d->refs) {
			all = false;
			continue; /* still in use: leave it to process exit */
		}
		dev_free(d);
	}
	for (; all && sj; sj = snext) {
		snext = sj->next_stuck;
		job_release(sj);
	}
}

/*
 * Namespace of @f on @ctrl: the URI's /NSID (@uri_nsid), nsid= or the first
 * active namespace.
 */
static int pick_ns(struct thread_data *td, struct nvq_ctrl *ctrl,
		   const char *uri, uint32_t uri_nsid, struct nvq_ns_info *info)
{
	struct nvq_fio_options *o = td->eo;
	uint32_t nsid = uri_nsid ? uri_nsid : o->nsid;
	int rc;

	if (uri_nsid && o->nsid && uri_nsid != o->nsid) {
		log_err("nvq: %s: nsid=%u, but the file names namespace %u of "
			"%s (/%u): give one or make them agree\n",
			td->o.name, o->nsid, uri_nsid, uri, uri_nsid);
		return -EINVAL;
	}

	if (!nsid) {
		rc = nvq_ns_list(ctrl, &nsid, 1);
		if (rc <= 0) {
			log_err("nvq: %s has no active namespace\n", uri);
			return -ENODEV;
		}
	}
	rc = nvq_ns_info(ctrl, nsid, info);
	if (rc) {
		log_err("nvq: %s: %s\n", uri, nvq_errmsg());
		return rc;
	}
	if (!info->lba_size || (info->lba_size & (info->lba_size - 1))) {
		log_err("nvq: %s: namespace %u has an unusable LBA size %u\n",
			uri, nsid, info->lba_size);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

static void io_done(void *arg, const struct nvq_cpl *cpl)
{
	struct req *r = arg;
	struct job *j = r->job;

	if (unlikely(__atomic_exchange_n(&r->state, REQ_IDLE,
					 __ATOMIC_ACQ_REL) == REQ_ABANDONED)) {
		/* fio had it back as cancelled long ago: only count it */
		__atomic_fetch_add(&j->late, 1, __ATOMIC_RELEASE);
		return;
	}
	r->err = cpl->err;
	r->status = cpl->status;
	if (likely(j->owner_only || j == cur_job)) {
		j->ring[j->tail++ & j->mask] = r;
		j->local_done++;
		return;
	}
	/* Reaped by another job's thread on a shared queue. */
	pthread_mutex_lock(&j->remote_lock);
	if (!j->stuck) {
		j->remote[j->nr_remote] = r;
		__atomic_store_n(&j->nr_remote, j->nr_remote + 1,
				 __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&j->remote_done, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&j->remote_lock);
}

static unsigned long long job_inflight(struct job *j)
{
	return j->submitted - j->local_done -
	       __atomic_load_n(&j->remote_done, __ATOMIC_ACQUIRE);
}

static void take_remote(struct job *j)
{
	unsigned int i;

	if (likely(!__atomic_load_n(&j->nr_remote, __ATOMIC_ACQUIRE)))
		return;
	pthread_mutex_lock(&j->remote_lock);
	for (i = 0; i < j->nr_remote; i++)
		j->ring[j->tail++ & j->mask] = j->remote[i];
	__atomic_store_n(&j->nr_remote, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&j->remote_lock);
}

static void kick(struct job *j)
{
	unsigned int i;

	for (i = 0; i < j->nr_jdevs; i++) {
		if (j->jdevs[i].pending) {
			nvq_queue_kick(j->jdevs[i].q);
			j->jdevs[i].pending = false;
		}
	}
}

static int reap_error(struct job *j, struct jdev *jd, int rc)
{
	log_err("nvq: %s: reaping completions on queue %u failed: %s\n",
		jd->dev->uri, nvq_queue_id(jd->q), nvq_errmsg());
	td_verror(j->td, -rc, "nvq_poll");
	return rc;
}

/* Reap what the queues hold now, without sleeping. */
static int reap_nowait(struct job *j)
{
	unsigned int i;
	int rc;

	for (i = 0; i < j->nr_jdevs; i++) {
		rc = nvq_poll(j->jdevs[i].q, 0);
		if (unlikely(rc < 0))
			return reap_error(j, &j->jdevs[i], rc);
	}
	take_remote(j);
	return 0;
}

/*
 * Reap, sleeping on the interrupt in mode=wait until about @want more of
 * this job's requests completed or @timeout_ms passed (-1 = no limit).
 *
 * Only on an exclusive queue is every completion this job's own. On a
 * queue that may be shared (now or by a job that joins later), another
 * job's thread may reap this job's completions and consume the interrupt
 * that would have woken it: sleep in short slices there and pick those up
 * from the remote list. The same for a job on several controllers.
 */
static int reap_wait(struct job *j, unsigned int want, int timeout_ms)
{
	struct jdev *jd = &j->jdevs[0];
	unsigned int before = j->tail;
	int rc;

	if (j->nr_jdevs > 1 || !jd->dev->exclusive) {
		rc = reap_nowait(j);
		if (rc || j->tail - before >= want)
			return rc;
		want = 1;
		if (timeout_ms < 0 || timeout_ms > 1)
			timeout_ms = 1;
	}
	rc = nvq_wait(jd->q, want, timeout_ms);
	if (unlikely(rc < 0 && rc != -EINTR && rc != -ETIMEDOUT))
		return reap_error(j, jd, rc);
	take_remote(j);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Commands of this job still in a device. Read under remote_lock: once it
 * reads 0 there, a callback that ran in another job's thread is done with
 * this job's memory (it counts itself under that lock).
 */
static unsigned long long inflight_locked(struct job *j)
{
	unsigned long long n;

	pthread_mutex_lock(&j->remote_lock);
	n = job_inflight(j);
	pthread_mutex_unlock(&j->remote_lock);
	return n;
}

/*
 * Wait until no command of this job is left in a device. Returns false
 * (and marks the job stuck, so its memory stays valid for late callbacks)
 * when the device does not finish them.
 */
static bool drain(struct job *j)
{
	unsigned long long n;
	uint64_t deadline = 0;
	int rc;

	if (!j)
		return true;
	if (j->stuck)
		return false;
	cur_job = j;
	kick(j);
	while ((n = inflight_locked(j))) {
		/* Keep the ring from overflowing: nobody consumes it now. */
		j->head = j->tail;
		j->returned = 0;
		/* given up on already: waiting again would not help */
		if (j->abandoned != __atomic_load_n(&j->late, __ATOMIC_ACQUIRE))
			break;
		if (!deadline)
			deadline = now_ms() + (j->td->terminate ?
						       TERMINATE_GRACE_MS :
						       DRAIN_TIMEOUT_MS);
		else if (now_ms() > deadline)
			break;
		if (j->o->mode == NVQ_MODE_WAIT) {
			rc = reap_wait(j, 1, 10);
		} else {
			sched_yield();
			rc = reap_nowait(j);
		}
		if (rc)
			break;
	}
	if (!n)
		return true;
	log_err("nvq: %s: %llu commands did not complete; leaving them to "
		"the controller's close, which cancels them\n",
		j->td->o.name, n);
	pthread_mutex_lock(&j->remote_lock);
	j->stuck = true;
	pthread_mutex_unlock(&j->remote_lock);
	return false;
}

/* ------------------------------------------------------------------ */
/* ioengine hooks                                                      */
/* ------------------------------------------------------------------ */

static int fio_nvq_commit(struct thread_data *td)
{
	struct job *j = td->io_ops_data;
	struct timespec now;
	unsigned int i;

	if (!j->nr_queued)
		return 0;
	kick(j);
	if (fio_fill_issue_time(td)) {
		fio_gettime(&now, NULL);
		for (i = 0; i < j->nr_queued; i++) {
			j->queued[i]->issue_time = now;
			io_u_queued(td, j->queued[i]);
		}
		if (td->o.read_iolog_file)
			td->last_issue = now;
	}
	io_u_mark_submit(td, j->nr_queued);
	j->nr_queued = 0;
	return 0;
}

/* Fail @io_u at submission with errno @err and a message for the user. */
static enum fio_q_status refuse(struct thread_data *td, struct io_u *io_u,
				int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum fio_q_status refuse(struct thread_data *td, struct io_u *io_u,
				int err, const char *fmt, ...)
{
	struct req *r = io_u->engine_data;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	/*
	 * fio does not log an error returned at submission, so say why here:
	 * the first time, and the count at the end (continue_on_error).
	 */
	if (!r->job->refused++)
		log_err("nvq: %s: %s\n", td->o.name, r->msg);
	r->err = -err;
	io_u->error = err;
	return FIO_Q_COMPLETED;
}

/* The reference tag of an I/O at @slba: the LBA's for PI types 1 and 2,
 * none for type 3, as fio sets them. */
static uint32_t pi_reftag(const struct jfile *jf, uint64_t slba)
{
	return jf->pi_type && jf->pi_type != 3 ? (uint32_t)slba : 0;
}

/* A read or write of a namespace with metadata. */
static int submit_md(struct jdev *jd, struct jfile *jf, struct io_u *io_u,
		     struct req *r, uint64_t slba, uint32_t nlb)
{
	const struct nvq_fio_options *o = r->job->o;
	struct nvq_io io;

	nvq_io_init(&io);
	io.nsid = jf->nsid;
	io.slba = slba;
	io.nlb = nlb;
	io.buf = io_u->xfer_buf;
	io.md = jf->md_blk ? r->md : NULL;
	io.flags = jf->io_flags | NVQ_IO_MORE;
	io.reftag = pi_reftag(jf, slba);
	io.apptag = (uint16_t)o->apptag;
	io.appmask = (uint16_t)o->apptag_mask;
	if (io_u->ddir == DDIR_READ)
		return nvq_read_io(jd->q, &io, io_done, r);
	return nvq_write_io(jd->q, &io, io_done, r);
}

static int submit(struct jdev *jd, struct jfile *jf, struct io_u *io_u,
		  struct req *r, uint64_t slba, uint32_t nlb)
{
	if (unlikely(jf->md_io) && ddir_rw(io_u->ddir))
		return submit_md(jd, jf, io_u, r, slba, nlb);
	switch (io_u->ddir) {
	case DDIR_READ:
		return nvq_read(jd->q, jf->nsid, io_u->xfer_buf, slba, nlb,
				NVQ_IO_MORE, io_done, r);
	case DDIR_WRITE:
		return nvq_write(jd->q, jf->nsid, io_u->xfer_buf, slba, nlb,
				 NVQ_IO_MORE, io_done, r);
	case DDIR_TRIM:
		return nvq_deallocate(jd->q, jf->nsid, slba, nlb, NVQ_IO_MORE,
				      io_done, r);
	default:
		/* fsync, fdatasync, sync_file_range: the cache is the device's */
		return nvq_flush(jd->q, jf->nsid, NVQ_IO_MORE, io_done, r);
	}
}

/*
 * A read or write of a namespace with metadata, before its submission:
 * the metadata buffer must hold it; pi_act=0 writes get the PI the host
 * computes (fio does it in its prep), reads are marked for the check of
 * theirs in ->event(). 0 or a negative errno with r->msg set.
 */
static int prep_md(struct job *j, const struct jfile *jf, struct io_u *io_u,
		   struct req *r, uint64_t slba, uint32_t nlb, char *why,
		   size_t len)
{
	const struct nvq_fio_options *o = j->o;
	uint64_t need = (uint64_t)nlb * jf->md_blk;
	int rc;

	if (need > o->md_per_io_size || (need && !r->md)) {
		snprintf(why, len,
			 "%s of %u blocks needs %llu bytes of metadata: "
			 "md_per_io_size=%u",
			 io_ddir_name(io_u->ddir), nlb,
			 (unsigned long long)need, o->md_per_io_size);
		return -EINVAL;
	}
	if (!jf->host_pi)
		return 0;
	if (io_u->ddir == DDIR_READ) {
		r->pi_file = jf;
		r->pi_slba = slba;
		r->pi_nlb = nlb;
		return 0;
	}
	rc = nvq_pi_generate(jf->jd->dev->ctrl, jf->nsid, io_u->xfer_buf,
			     jf->md_blk ? r->md : NULL, nlb,
			     pi_reftag(jf, slba), (uint16_t)o->apptag);
	if (rc)
		snprintf(why, len, "generating the PI: %s", nvq_errmsg());
	return rc;
}

static enum fio_q_status fio_nvq_queue(struct thread_data *td,
				       struct io_u *io_u)
{
	struct job *j = td->io_ops_data;
	struct jfile *jf = FILE_ENG_DATA(io_u->file);
	struct req *r = io_u->engine_data;
	struct jdev *jd = jf->jd;
	uint64_t slba = 0, nlb = 0;
	bool retried = false;
	int rc;

	r->msg[0] = '\0';
	r->pi_file = NULL;
	if (likely(ddir_rw(io_u->ddir) || io_u->ddir == DDIR_TRIM)) {
		if (unlikely(jf->md_io)) {
			/* extended LBAs: not a power of two */
			if (io_u->offset % jf->blk ||
			    io_u->xfer_buflen % jf->blk || !io_u->xfer_buflen)
				goto misaligned;
			slba = io_u->offset / jf->blk;
			nlb = io_u->xfer_buflen / jf->blk;
		} else {
			if (unlikely(((io_u->offset | io_u->xfer_buflen) &
				      jf->lba_mask) ||
				     !io_u->xfer_buflen))
				goto misaligned;
			slba = io_u->offset >> jf->lba_shift;
			nlb = io_u->xfer_buflen >> jf->lba_shift;
		}
		if (unlikely(slba >= jf->nlba || nlb > jf->nlba - slba))
			return refuse(td, io_u, EINVAL,
				      "%s %llu bytes at %llu: past the end "
				      "of the file's %llu bytes",
				      io_ddir_name(io_u->ddir),
				      io_u->xfer_buflen, io_u->offset,
				      (unsigned long long)(jf->nlba * jf->blk));
		slba += jf->base_lba;
		if (unlikely(nlb > UINT32_MAX))
			return refuse(td, io_u, EINVAL,
				      "%s of %llu bytes is too large",
				      io_ddir_name(io_u->ddir),
				      io_u->xfer_buflen);
		if (unlikely(jf->md_io) && ddir_rw(io_u->ddir)) {
			char why[160];

			rc = prep_md(j, jf, io_u, r, slba, (uint32_t)nlb, why,
				     sizeof(why));
			if (rc)
				return refuse(td, io_u, -rc, "%s", why);
		}
	} else if (unlikely(!ddir_sync(io_u->ddir))) {
		return refuse(td, io_u, EINVAL, "cannot do %s",
			      io_ddir_name(io_u->ddir));
	}

	/* Its previous command is still in a device that stopped answering. */
	if (unlikely(__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
		     REQ_ABANDONED))
		return refuse(td, io_u, ECANCELED,
			      "the device still holds this request's previous "
			      "command");
	for (;;) {
		__atomic_store_n(&r->state, REQ_INFLIGHT, __ATOMIC_RELEASE);
		rc = submit(jd, jf, io_u, r, slba, (uint32_t)nlb);
		if (likely(!rc))
			break;
		__atomic_store_n(&r->state, REQ_IDLE, __ATOMIC_RELEASE);
		if (rc != -EAGAIN)
			return refuse(td, io_u, -rc, "%s", nvq_errmsg());
		if (retried)
			return FIO_Q_BUSY;
		/*
		 * The submission queue is full: let the device see what this
		 * job placed, reap what finished, and try once more. fio
		 * commits and reaps before it requeues a busy io_u.
		 */
		kick(j);
		rc = reap_nowait(j);
		if (rc)
			return refuse(td, io_u, -rc, "%s", nvq_errmsg());
		retried = true;
	}
	jd->pending = true;
	j->submitted++;
	j->queued[j->nr_queued++] = io_u;
	return FIO_Q_QUEUED;

misaligned:
	return refuse(td, io_u, EINVAL,
		      "%s %llu bytes at %llu: not a multiple of the %u-byte "
		      "LBA%s of namespace %u",
		      io_ddir_name(io_u->ddir), io_u->xfer_buflen, io_u->offset,
		      jf->blk, jf->ext && jf->md_io ? " with metadata" : "",
		      jf->nsid);
}

/*
 * fio is stopping the job and the device has not finished what it holds
 * within TERMINATE_GRACE_MS: give those commands up, handing them to fio
 * as failed with ECANCELED. A callback that still comes (nvq_close()
 * cancels them) finds the request abandoned and only counts itself.
 */
static void abandon_inflight(struct thread_data *td, struct job *j)
{
	struct io_u *io_u;
	unsigned int i, n = 0;

	io_u_qiter(&td->io_u_all, io_u, i)
	{
		struct req *r = io_u->engine_data;
		int want = REQ_INFLIGHT;

		if (!r || !__atomic_compare_exchange_n(
				  &r->state, &want, REQ_ABANDONED, false,
				  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		r->err = -ECANCELED;
		r->status = 0;
		snprintf(r->msg, sizeof(r->msg),
			 "no completion %u ms after fio stopped the job: "
			 "given up",
			 TERMINATE_GRACE_MS);
		j->ring[j->tail++ & j->mask] = r;
		n++;
	}
	j->abandoned += n;
	if (n)
		log_err("nvq: %s: %u commands still in the device when the "
			"job stopped; given up (ECANCELED)\n",
			td->o.name, n);
}

/*
 * fio's own runtime= test (backend.c, runtime_exceeded()), which it makes
 * only between calls into the engine: a device that stopped answering
 * must not keep a job in ->getevents() past its runtime.
 */
static bool runtime_over(struct thread_data *td)
{
	if (!td->o.timeout || (td->o.ramp_time && !td->ramp_time_over))
		return false;
	return utime_since_now(&td->epoch) >= td->o.timeout;
}

static int fio_nvq_getevents(struct thread_data *td, unsigned int min,
			     unsigned int max, const struct timespec *t)
{
	struct job *j = td->io_ops_data;
	uint64_t deadline = 0;
	unsigned int avail, spins = 0;
	int rc, tmo;

	if (j->nr_queued)
		fio_nvq_commit(td);
	j->head += j->returned;
	j->returned = 0;

	rc = reap_nowait(j);
	if (rc)
		return rc;
	while ((avail = j->tail - j->head) < min) {
		tmo = -1;
		if (t) {
			uint64_t now = now_ms();

			if (!deadline)
				deadline = now + (uint64_t)t->tv_sec * 1000 +
					   (uint64_t)t->tv_nsec / 1000000;
			if (now >= deadline)
				break;
			tmo = (int)(deadline - now);
		}
		if (unlikely(td->terminate)) {
			uint64_t now = now_ms();

			if (!j->term_seen_ms)
				j->term_seen_ms = now;
			if (now - j->term_seen_ms >= TERMINATE_GRACE_MS) {
				abandon_inflight(td, j);
				avail = j->tail - j->head;
				break; /* fewer than @min if that is all */
			}
		} else if (unlikely(runtime_over(td))) {
			/* fio sees it and stops the job; then the above */
			break;
		}
		/* never sleep so long that td->terminate goes unseen */
		if (tmo < 0 || tmo > WAIT_SLICE_MS)
			tmo = WAIT_SLICE_MS;
		if (j->o->mode == NVQ_MODE_WAIT) {
			rc = reap_wait(j, min - avail, tmo);
		} else {
			/*
			 * Spin, but give the CPU away now and then: on a
			 * machine with more busy threads than CPUs the device
			 * (the emulated one is a thread) may need this one.
			 */
			if (!(++spins % POLL_SPINS_PER_YIELD))
				sched_yield();
			rc = reap_nowait(j);
		}
		if (rc)
			return rc;
	}
	j->returned = avail < max ? avail : max;
	return (int)j->returned;
}

/*
 * pi_act=0: check the PI a read returned, for the pi_chk fields, as fio's
 * io_uring_cmd engine does; a mismatch fails the io_u (EIO, the status a
 * controller would report).
 */
static void check_pi(struct job *j, struct req *r)
{
	const struct jfile *jf = r->pi_file;
	const struct nvq_fio_options *o = j->o;
	uint32_t bad = 0;
	int st;

	r->pi_file = NULL;
	st = nvq_pi_verify(jf->jd->dev->ctrl, jf->nsid, r->io_u->xfer_buf,
			   jf->md_blk ? r->md : NULL, r->pi_nlb,
			   pi_reftag(jf, r->pi_slba), (uint16_t)o->apptag,
			   (uint16_t)o->apptag_mask,
			   jf->io_flags & NVQ_IO_PRCHK_ALL, &bad);
	if (!st)
		return;
	r->err = st > 0 ? -EIO : st;
	r->status = st > 0 ? (uint16_t)st : 0;
	if (st > 0)
		snprintf(r->msg, sizeof(r->msg),
			 "host PI check: LBA %llu: NVMe status %#x: %s",
			 (unsigned long long)(r->pi_slba + bad), st,
			 nvq_status_str((uint16_t)st));
	else
		snprintf(r->msg, sizeof(r->msg), "host PI check: %s",
			 nvq_errmsg());
}

static struct io_u *fio_nvq_event(struct thread_data *td, int event)
{
	struct job *j = td->io_ops_data;
	struct req *r = j->ring[(j->head + (unsigned int)event) & j->mask];

	if (unlikely(r->pi_file) && !r->err)
		check_pi(j, r);
	r->io_u->error = -r->err;
	r->io_u->resid = r->err ? r->io_u->xfer_buflen : 0;
	return r->io_u;
}

static char *fio_nvq_errdetails(struct io_u *io_u)
{
	struct req *r = io_u->engine_data;
	char *s = NULL;

	if (r && r->msg[0]) {
		if (asprintf(&s, "nvq: %s", r->msg) < 0)
			s = NULL;
		return s;
	}
	if (r && r->err == -EIO && r->status) {
		if (asprintf(&s, "nvq: NVMe status %#x: %s", r->status,
			     nvq_status_str(r->status)) < 0)
			s = NULL;
		return s;
	}
	if (asprintf(&s, "nvq: %s", strerror(io_u->error)) < 0)
		s = NULL;
	return s;
}

/* Free the job and its requests: no callback may come for them any more. */
static void job_release(struct job *j)
{
	struct req *r, *next;

	for (r = j->reqs; r; r = next) {
		next = r->next_all;
		free(r);
	}
	pthread_mutex_destroy(&j->remote_lock);
	free(j->jdevs);
	free(j->jfiles);
	free(j->ring);
	free(j->remote);
	free(j->queued);
	free(j);
}

static void job_free(struct job *j)
{
	bool open = false;
	unsigned int i;

	if (!j)
		return;
	/* a device still holding commands may write it: until the close */
	if (j->md && !j->stuck) {
		for (i = 1; i < j->nr_jdevs; i++)
			if (j->jdevs[i].md_registered)
				nvq_dma_unregister(j->jdevs[i].dev->ctrl,
						   j->md);
		nvq_dma_free(j->jdevs[0].dev->ctrl, j->md);
		j->md = NULL;
	}
	for (i = 0; i < j->nr_jdevs; i++) {
		dev_release_queue(j->jdevs[i].dev, j->jdevs[i].qidx);
		if (!dev_put(j->jdevs[i].dev, j->td->o.use_thread))
			open = true;
	}
	if (j->stuck && open) {
		/* late callbacks may still write to it: until the close */
		pthread_mutex_lock(&devs_lock);
		j->next_stuck = stuck_jobs;
		stuck_jobs = j;
		pthread_mutex_unlock(&devs_lock);
		return;
	}
	job_release(j);
}

/* The job's queue on the controller named @uri, opening it if needed. */
static struct jdev *job_jdev(struct job *j, const char *uri)
{
	struct jdev *jd;
	struct dev *d;
	unsigned int i;

	for (i = 0; i < j->nr_jdevs; i++)
		if (!strcmp(j->jdevs[i].dev->uri, uri))
			return &j->jdevs[i];
	if (dev_get(j->td, uri, false, &d))
		return NULL;
	jd = &j->jdevs[j->nr_jdevs];
	if (dev_claim_queue(d, &jd->qidx, &jd->shared)) {
		dev_put(d, j->td->o.use_thread);
		return NULL;
	}
	j->nr_jdevs++;
	jd->dev = d;
	jd->q = nvq_ctrl_queue(d->ctrl, jd->qidx);
	if (jd->shared)
		log_info("nvq: %s: %s has %u I/O queues for more jobs; "
			 "sharing queue %u\n",
			 j->td->o.name, uri, d->nr_queues, nvq_queue_id(jd->q));
	return jd;
}

/* File @i of the job, NULL past the last (fio's for_each_file()). */
static struct fio_file *job_file(struct thread_data *td, unsigned int i)
{
	if (!td->files_index || i >= td->o.nr_files)
		return NULL;
	return td->files[i];
}

/*
 * Files of one job that name the same namespace (uri= with nrfiles=N, or
 * one controller named twice in filename=) would all start at LBA 0 and
 * overwrite each other's blocks. As fio does for N files in one sized
 * area, each gets its own region instead: the namespace split in
 * @*count equal parts, @f's being part @*index. Returns 0, or a negative
 * errno when a file's name is not a URI.
 */
static int file_region(struct thread_data *td, const struct fio_file *f,
		       const char *uri, unsigned int *index,
		       unsigned int *count)
{
	char buf[PATH_MAX];
	struct fio_file *g;
	uint32_t nsid, gnsid;
	unsigned int i;
	int rc;

	rc = file_uri(td->eo, f, buf, sizeof(buf), &nsid);
	if (rc)
		return rc;

	*index = 0;
	*count = 0;
	for (i = 0; (g = job_file(td, i)); i++) {
		rc = file_uri(td->eo, g, buf, sizeof(buf), &gnsid);
		if (rc)
			return rc;
		if (strcmp(buf, uri) || gnsid != nsid)
			continue;
		if (g == f)
			*index = *count;
		(*count)++;
	}
	if (!*count)
		*count = 1; /* @f is not in the job's list (yet) */
	return 0;
}

/*
 * The region of namespace @info that file @f of @td owns: @*base and
 * @*nlba in LBAs. -EINVAL when the namespace is too small to split.
 */
/*
 * The metadata format of namespace @nsid and how the job drives it, fio's
 * io_uring_cmd rules: with pi_act=1 and 8 bytes of metadata (all PI) no
 * metadata is transferred; an extended format otherwise counts blocks of
 * data and metadata. Fills the metadata part of @jf.
 */
static int md_format(struct thread_data *td, struct nvq_ctrl *ctrl,
		     const char *uri, uint32_t nsid, uint32_t lba_size,
		     bool say, struct jfile *jf)
{
	const struct nvq_fio_options *o = td->eo;
	struct nvq_ns_format fmt;
	bool xfer_md;

	jf->md_io = jf->host_pi = jf->ext = false;
	jf->pi_type = 0;
	jf->md_blk = jf->ms = 0;
	jf->io_flags = 0;
	jf->blk = lba_size;
	if (nvq_ns_format(ctrl, nsid, &fmt)) {
		log_err("nvq: %s: %s\n", uri, nvq_errmsg());
		return -EINVAL;
	}
	if (say && !fmt.pi_type && o->prchk_set && o->prchk)
		log_info("nvq: %s: namespace %u of %s has no protection "
			 "information: pi_chk does nothing\n",
			 td->o.name, nsid, uri);
	if (!fmt.ms)
		return 0;
	jf->md_io = true;
	jf->ms = fmt.ms;
	jf->ext = fmt.extended;
	jf->pi_type = fmt.pi_type;
	if (fmt.pi_type) {
		jf->host_pi = !o->pi_act;
		jf->io_flags =
			(o->pi_act ? NVQ_IO_PRACT : 0) |
			(o->prchk_set ?
				 o->prchk :
				 NVQ_IO_PRCHK_GUARD |
					 (fmt.pi_type != 3 ? NVQ_IO_PRCHK_REF :
							     0));
	}
	xfer_md = !(fmt.pi_type && o->pi_act && fmt.ms == fmt.pi_size);
	if (fmt.extended && xfer_md)
		jf->blk = lba_size + fmt.ms;
	else if (xfer_md)
		jf->md_blk = fmt.ms;
	/*
	 * Extended LBAs with 8 bytes of PI that PRACT strips: the buffer
	 * holds lba_size bytes a block, and nvq splits an I/O above MDTS
	 * at that stride (nvq_write_io()).
	 */
	return 0;
}

static int region_of(struct thread_data *td, const struct fio_file *f,
		     const char *uri, const struct nvq_ns_info *info, bool say,
		     uint64_t *base, uint64_t *nlba)
{
	unsigned int index, count;
	int rc;

	rc = file_region(td, f, uri, &index, &count);
	if (rc)
		return rc;
	*nlba = info->nlba / count;
	*base = *nlba * index;
	if (!*nlba) {
		log_err("nvq: %s: %u files on namespace %u of %s, which has "
			"only %llu LBAs\n",
			td->o.name, count, info->nsid, uri,
			(unsigned long long)info->nlba);
		return -EINVAL;
	}
	if (say && count > 1)
		log_info("nvq: %s: %u files share namespace %u of %s: file %s "
			 "is LBAs %llu..%llu (part %u of %u)\n",
			 td->o.name, count, info->nsid, uri, f->file_name,
			 (unsigned long long)*base,
			 (unsigned long long)(*base + *nlba - 1), index + 1,
			 count);
	return 0;
}

static unsigned int pow2_at_least(unsigned int n)
{
	unsigned int p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * pi_chk=GUARD,REFTAG,APPTAG (any of them, comma separated, any case) or
 * none into o->prchk; -EINVAL for anything else.
 */
static int parse_pi_chk(struct nvq_fio_options *o)
{
	static const char *const names[] = { "GUARD", "REFTAG", "APPTAG" };
	static const unsigned int flags[] = { NVQ_IO_PRCHK_GUARD,
					      NVQ_IO_PRCHK_REF,
					      NVQ_IO_PRCHK_APP };
	const char *p = o->pi_chk;
	unsigned int i;

	o->prchk = 0;
	o->prchk_set = p != NULL;
	if (!p || !strcasecmp(p, "none"))
		return 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		for (i = 0; i < 3; i++)
			if (strlen(names[i]) == len &&
			    !strncasecmp(p, names[i], len))
				break;
		if (i == 3)
			return -EINVAL;
		o->prchk |= flags[i];
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static bool job_does(struct thread_data *td, int ddir);

/*
 * Separate metadata buffers: md_per_io_size bytes per io_u (fio's
 * io_uring_cmd engine), DMA memory of the first controller, registered
 * with the others; before fio's io_u_init(), which hands them out. Also
 * the check fio makes: enough for the largest block size.
 */
static int md_alloc(struct thread_data *td, struct job *j, unsigned int depth)
{
	struct nvq_fio_options *o = j->o;
	unsigned int i;
	int ddir;

	for (i = 0; i < j->nr_jfiles; i++) {
		const struct jfile *jf = &j->jfiles[i];

		for (ddir = 0; ddir < DDIR_RWDIR_CNT; ddir++) {
			unsigned long long need;

			if (ddir == DDIR_TRIM || !jf->md_blk ||
			    !job_does(td, ddir))
				continue;
			need = (td->o.max_bs[ddir] >> jf->lba_shift) *
			       jf->md_blk;
			if (o->md_per_io_size < need) {
				log_err("nvq: %s: namespace %u has %u bytes "
					"of separate metadata per block: "
					"md_per_io_size should be at least "
					"%llu bytes (bs=%llu)\n",
					td->o.name, jf->nsid, jf->md_blk, need,
					td->o.max_bs[ddir]);
				return -EINVAL;
			}
		}
	}
	if (!o->md_per_io_size)
		return 0;
	j->md_stride = (o->md_per_io_size + 63) & ~63u;
	j->md_slots = depth;
	j->md_len = (size_t)j->md_stride * depth;
	j->md = nvq_dma_alloc(j->jdevs[0].dev->ctrl, j->md_len, -1);
	if (!j->md) {
		log_err("nvq: %s: cannot allocate %zu bytes of DMA memory for "
			"md_per_io_size=%u: %s\n",
			td->o.name, j->md_len, o->md_per_io_size, nvq_errmsg());
		return -ENOMEM;
	}
	for (i = 1; i < j->nr_jdevs; i++) {
		if (nvq_dma_register(j->jdevs[i].dev->ctrl, j->md, j->md_len)) {
			log_err("nvq: %s: cannot register the metadata "
				"buffers with %s: %s\n",
				td->o.name, j->jdevs[i].dev->uri, nvq_errmsg());
			return -EINVAL;
		}
		j->jdevs[i].md_registered = true;
	}
	return 0;
}

static int fio_nvq_init(struct thread_data *td)
{
	struct nvq_fio_options *o = td->eo;
	unsigned int depth = td->o.iodepth ? td->o.iodepth : 1;
	char uri[PATH_MAX];
	struct fio_file *f;
	struct job *j;
	unsigned int i;
	int rc;

	if (parse_pi_chk(o)) {
		log_err("nvq: %s: pi_chk=%s: expected GUARD, REFTAG, APPTAG "
			"separated by commas, or none\n",
			td->o.name, o->pi_chk);
		td_verror(td, EINVAL, "nvq init");
		return 1;
	}
	if (o->apptag > 0xffff || o->apptag_mask > 0xffff) {
		log_err("nvq: %s: apptag=%#x, apptag_mask=%#x: 16 bits each\n",
			td->o.name, o->apptag, o->apptag_mask);
		td_verror(td, EINVAL, "nvq init");
		return 1;
	}
	if (!td->o.use_thread && td->o.numjobs > 1)
		log_info("nvq: %s: without thread=1 every job process opens "
			 "its own controller; use thread=1 to share one\n",
			 td->o.name);

	j = calloc(1, sizeof(*j));
	if (!j)
		goto nomem;
	j->td = td;
	j->o = o;
	pthread_mutex_init(&j->remote_lock, NULL);
	j->mask = pow2_at_least(2 * depth) - 1;
	j->ring = calloc(j->mask + 1, sizeof(*j->ring));
	j->remote = calloc(depth, sizeof(*j->remote));
	j->queued = calloc(depth, sizeof(*j->queued));
	j->jdevs =
		calloc(td->o.nr_files ? td->o.nr_files : 1, sizeof(*j->jdevs));
	j->jfiles =
		calloc(td->o.nr_files ? td->o.nr_files : 1, sizeof(*j->jfiles));
	if (!j->ring || !j->remote || !j->queued || !j->jdevs || !j->jfiles)
		goto nomem;
	td->io_ops_data = j;
	cur_job = j;

	for (i = 0; (f = job_file(td, i)); i++) {
		struct jfile *jf = &j->jfiles[j->nr_jfiles++];
		struct nvq_ns_info info;
		uint32_t uri_nsid;

		rc = file_uri(o, f, uri, sizeof(uri), &uri_nsid);
		if (rc) {
			log_err("nvq: %s: bad device name '%s'\n", td->o.name,
				f->file_name ? f->file_name : "");
			goto fail;
		}
		jf->jd = job_jdev(j, uri);
		if (!jf->jd) {
			naming_hint(td, f);
			goto fail;
		}
		if (pick_ns(td, jf->jd->dev->ctrl, uri, uri_nsid, &info))
			goto fail;
		jf->nsid = info.nsid;
		jf->lba_shift = (unsigned int)__builtin_ctz(info.lba_size);
		jf->lba_mask = info.lba_size - 1;
		if (md_format(td, jf->jd->dev->ctrl, uri, info.nsid,
			      info.lba_size, true, jf))
			goto fail;
		if (region_of(td, f, uri, &info, true, &jf->base_lba,
			      &jf->nlba))
			goto fail;
		FILE_SET_ENG_DATA(f, jf);
	}
	if (md_alloc(td, j, depth))
		goto fail;
	j->owner_only = true;
	for (i = 0; i < j->nr_jdevs; i++)
		j->owner_only &= j->jdevs[i].dev->exclusive;
	if (o->cpu_lat_limit_us != NVQ_QOS_OFF && o->mode == NVQ_MODE_POLL)
		log_info("nvq: %s: cpu_lat_limit_us does nothing in mode=poll "
			 "(a polling CPU never idles); use mode=wait\n",
			 td->o.name);
	return 0;

nomem:
	log_err("nvq: out of memory\n");
fail:
	td->io_ops_data = NULL;
	for (i = 0; (f = job_file(td, i)); i++)
		FILE_SET_ENG_DATA(f, NULL);
	job_free(j);
	td_verror(td, EINVAL, "nvq init");
	return 1;
}

/*
 * What the controller's failure path did so far (nvq_ctrl_stats()): with
 * queue_stats=1 always, otherwise once something happened.
 */
static void print_recovery(struct job *j, bool always)
{
	struct nvq_ctrl_stats st;
	unsigned int i;

	for (i = 0; i < j->nr_jdevs; i++) {
		if (nvq_ctrl_stats(j->jdevs[i].dev->ctrl, &st))
			continue;
		if (!always && !st.timeouts && !st.lost_interrupts &&
		    !st.aborts && !st.resets && !st.retries && !st.failed &&
		    !st.bad_cqes && !st.gone)
			continue;
		log_info("nvq: %s: %s recovery: timeouts=%llu "
			 "lost_interrupts=%llu aborts=%llu resets=%llu "
			 "retries=%llu failed=%llu bad_cqes=%llu%s\n",
			 j->td->o.name, j->jdevs[i].dev->uri,
			 (unsigned long long)st.timeouts,
			 (unsigned long long)st.lost_interrupts,
			 (unsigned long long)st.aborts,
			 (unsigned long long)st.resets,
			 (unsigned long long)st.retries,
			 (unsigned long long)st.failed,
			 (unsigned long long)st.bad_cqes,
			 st.gone ? " (controller gone)" : "");
	}
}

/* queue_stats=1: the counters show how commits batch the doorbells. */
static void print_stats(struct job *j)
{
	struct nvq_queue_stats st;
	unsigned int i;

	for (i = 0; i < j->nr_jdevs; i++) {
		nvq_queue_stats(j->jdevs[i].q, &st);
		log_info("nvq: %s: %s queue %u%s: commands=%llu doorbells=%llu "
			 "completions=%llu interrupts=%llu\n",
			 j->td->o.name, j->jdevs[i].dev->uri,
			 nvq_queue_id(j->jdevs[i].q),
			 j->jdevs[i].shared ? " (shared)" : "",
			 (unsigned long long)st.submitted,
			 (unsigned long long)st.doorbells,
			 (unsigned long long)st.completed,
			 (unsigned long long)st.interrupts);
	}
}

static void fio_nvq_cleanup(struct thread_data *td)
{
	struct job *j = td->io_ops_data;
	struct fio_file *f;
	unsigned int i;

	if (!j)
		return;
	drain(j);
	if (j->refused > 1)
		log_err("nvq: %s: %llu requests refused in all\n", td->o.name,
			j->refused);
	if (j->o->queue_stats)
		print_stats(j);
	print_recovery(j, j->o->queue_stats);
	/* Without permission, the limit fails only once a queue is busy. */
	pthread_mutex_lock(&devs_lock);
	for (i = 0; i < j->nr_jdevs; i++)
		qos_report(j->jdevs[i].dev);
	pthread_mutex_unlock(&devs_lock);
	for (i = 0; (f = job_file(td, i)); i++)
		FILE_SET_ENG_DATA(f, NULL);
	job_free(j);
	td->io_ops_data = NULL;
	if (cur_job == j)
		cur_job = NULL;
}

/*
 * Jobs between two stonewalls run at the same time: the index of the
 * stretch @td is in (numjobs clones carry no stonewall of their own).
 */
static unsigned int run_stretch(const struct thread_data *td)
{
	unsigned int i, n = 0;
	struct thread_data *t;

	for (i = 0; i < thread_number; i++) {
		t = tnumber_to_td(i);
		if (i && t->o.stonewall)
			n++;
		if (t == td)
			break;
	}
	return n;
}

/*
 * Before any job starts: two jobs that run at the same time on one
 * controller with different controller settings could never both run. Say
 * so now rather than failing whichever happens to start second.
 * (Process-mode jobs each open their own controller; jobs ordered with
 * wait_for= meet the check in dev_get() instead.)
 */
static int check_peers(struct thread_data *td, const char *uri)
{
	const struct nvq_fio_options *p;
	struct ctrl_settings ps;
	struct thread_data *t;
	char buf[PATH_MAX], why[96];
	struct fio_file *f;
	unsigned int i, k, stretch;

	if (!td->o.use_thread || (td->o.wait_for && td->o.wait_for[0]))
		return 0;
	stretch = run_stretch(td);
	for (i = 0; i < thread_number; i++) {
		t = tnumber_to_td(i);
		if (t == td || t->io_ops != engine_ops() || !t->eo ||
		    !t->o.use_thread || (t->o.wait_for && t->o.wait_for[0]) ||
		    run_stretch(t) != stretch)
			continue;
		p = t->eo;
		for (k = 0; (f = job_file(t, k)); k++) {
			if (file_uri(p, f, buf, sizeof(buf), NULL) ||
			    strcmp(buf, uri))
				continue;
			settings_of(p, &ps);
			if (same_ctrl_settings(td->eo, &ps, why, sizeof(why)))
				break;
			log_err("nvq: jobs %s and %s run at the same time on "
				"%s with different settings (%s); jobs "
				"sharing a controller need the same mode, "
				"cpu_lat_limit_us, cpu_lat_method, cpu_lat_timeout_ms, "
				"io_timeout_ms and admin_timeout_ms\n",
				td->o.name, t->o.name, uri, why);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Size of @f. fio asks before the job's thread starts (and before init):
 * then the controller is opened just for the question.
 */
static int fio_nvq_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct jfile *jf = td->io_ops_data ? FILE_ENG_DATA(f) : NULL;
	struct jfile tmp = { 0 };
	struct nvq_ns_info info;
	uint64_t base, nlba;
	uint32_t uri_nsid;
	char uri[PATH_MAX];
	struct dev *d;
	int rc;

	if (jf) {
		f->real_file_size = jf->nlba * jf->blk;
		goto known;
	}
	rc = file_uri(td->eo, f, uri, sizeof(uri), &uri_nsid);
	if (rc) {
		log_err("nvq: %s: bad device name '%s'\n", td->o.name,
			f->file_name ? f->file_name : "");
		goto fail;
	}
	rc = check_peers(td, uri);
	if (rc)
		goto fail;
	rc = dev_get(td, uri, true, &d);
	if (rc) {
		naming_hint(td, f);
		goto fail;
	}
	rc = pick_ns(td, d->ctrl, uri, uri_nsid, &info);
	if (!rc) {
		struct nvq_fio_options *o = td->eo;

		/* fio parses pi_chk in init(), after this question */
		rc = parse_pi_chk(o) ? 0 :
				       md_format(td, d->ctrl, uri, info.nsid,
						 info.lba_size, false, &tmp);
	}
	dev_put(d, td->o.use_thread);
	if (rc)
		goto fail;
	rc = region_of(td, f, uri, &info, false, &base, &nlba);
	if (rc)
		goto fail;
	/* extended LBAs: fio counts data and metadata */
	f->real_file_size = nlba * tmp.blk;
known:
	f->filetype = FIO_TYPE_BLOCK;
	fio_file_set_size_known(f);
	return 0;
fail:
	td_vmsg(td, EINVAL, "nvq device not usable (see above)",
		"get_file_size");
	return 1;
}

/* Does the job issue requests of direction @ddir (read, write, trim)? */
static bool job_does(struct thread_data *td, int ddir)
{
	if (ddir == DDIR_READ)
		return td_read(td);
	if (ddir == DDIR_WRITE)
		return td_write(td);
	return td_trim(td);
}

/* Requests fio will make that this namespace cannot take: say so now. */
static int fio_nvq_open_file(struct thread_data *td, struct fio_file *f)
{
	struct jfile *jf = FILE_ENG_DATA(f);
	const struct nvq_id_ctrl *id;
	unsigned long long lba, size;
	int ddir;

	if (!jf) {
		log_err("nvq: %s: %s was not set up\n", td->o.name,
			f->file_name);
		goto fail;
	}
	lba = jf->blk;
	size = jf->nlba * jf->blk;
	if (f->file_offset > size || f->io_size > size - f->file_offset) {
		log_err("nvq: %s: offset %llu + size %llu exceed the %llu "
			"bytes of namespace %u of %s this file has\n",
			td->o.name, (unsigned long long)f->file_offset,
			(unsigned long long)f->io_size, size, jf->nsid,
			jf->jd->dev->uri);
		goto fail;
	}
	for (ddir = 0; ddir < DDIR_RWDIR_CNT; ddir++) {
		if (!job_does(td, ddir))
			continue;
		if (td->o.min_bs[ddir] % lba || td->o.max_bs[ddir] % lba) {
			log_err("nvq: %s: %s block sizes %llu..%llu are not "
				"multiples of the %llu-byte LBA%s of "
				"namespace %u\n",
				td->o.name, io_ddir_name(ddir),
				td->o.min_bs[ddir], td->o.max_bs[ddir], lba,
				lba != 1ull << jf->lba_shift ?
					" with metadata (LBA data size + "
					"metadata size: extended LBAs)" :
					"",
				jf->nsid);
			goto fail;
		}
	}
	/* fio's rule: verify blocks would overwrite PI in the data buffer */
	if (jf->ext && jf->pi_type && lba != 1ull << jf->lba_shift &&
	    td->o.verify != VERIFY_NONE) {
		log_err("nvq: %s: namespace %u has extended LBAs with the PI "
			"in the data buffer: verify cannot be used with it "
			"(as in fio's io_uring_cmd)\n",
			td->o.name, jf->nsid);
		goto fail;
	}
	if (f->file_offset % lba || td->o.start_offset_align % lba) {
		log_err("nvq: %s: offset %llu is not a multiple of the "
			"%llu-byte LBA\n",
			td->o.name, (unsigned long long)f->file_offset, lba);
		goto fail;
	}
	id = nvq_ctrl_id(jf->jd->dev->ctrl);
	if (td_trim(td) && !(id->oncs & NVQ_CTRL_ONCS_DSM)) {
		log_err("nvq: %s: %s cannot trim (no Dataset Management)\n",
			td->o.name, jf->jd->dev->uri);
		goto fail;
	}
	return 0;
fail:
	td_verror(td, EINVAL, "open_file");
	return 1;
}

static int fio_nvq_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int fio_nvq_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct req *r = calloc(1, sizeof(*r));
	struct job *j = td->io_ops_data;

	if (!r)
		return 1;
	r->job = j;
	r->io_u = io_u;
	if (j && j->md && io_u->index < j->md_slots)
		r->md = (char *)j->md + (size_t)j->md_stride * io_u->index;
	io_u->engine_data = r;
	/* the job frees it: a device that stopped answering may still
	 * complete it after fio freed the io_u */
	if (j) {
		r->next_all = j->reqs;
		j->reqs = r;
	}
	return 0;
}

static void fio_nvq_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct req *r = io_u->engine_data;

	/* Marks the job stuck when the device keeps some of its commands. */
	drain(td->io_ops_data);
	if (r && !r->job)
		free(r);
	io_u->engine_data = NULL;
}

/*
 * I/O buffers: DMA memory of the job's first controller, registered with
 * any other controller the job uses.
 */
static int fio_nvq_iomem_alloc(struct thread_data *td, size_t total)
{
	struct job *j = td->io_ops_data;
	unsigned int i;
	int rc;

	j->buf = nvq_dma_alloc(j->jdevs[0].dev->ctrl, total, -1);
	if (!j->buf) {
		log_err("nvq: %s: cannot allocate %zu bytes of DMA memory: "
			"%s\n",
			td->o.name, total, nvq_errmsg());
		return 1;
	}
	for (i = 1; i < j->nr_jdevs; i++) {
		rc = nvq_dma_register(j->jdevs[i].dev->ctrl, j->buf, total);
		if (rc) {
			log_err("nvq: %s: cannot register the I/O buffers "
				"with %s: %s\n",
				td->o.name, j->jdevs[i].dev->uri, nvq_errmsg());
			return 1; /* iomem_free undoes the rest */
		}
		j->jdevs[i].registered = true;
	}
	td->orig_buffer = j->buf;
	return 0;
}

static void fio_nvq_iomem_free(struct thread_data *td)
{
	struct job *j = td->io_ops_data;
	unsigned int i;

	if (!j || !j->buf || !drain(j))
		return;
	for (i = 1; i < j->nr_jdevs; i++) {
		if (j->jdevs[i].registered)
			nvq_dma_unregister(j->jdevs[i].dev->ctrl, j->buf);
		j->jdevs[i].registered = false;
	}
	nvq_dma_free(j->jdevs[0].dev->ctrl, j->buf);
	j->buf = NULL;
	td->orig_buffer = NULL;
}

/* fio option callback: cpu_lat_limit_us=off|auto|0|N into the int. */
static int parse_cpu_lat_limit(void *data, const char *s)
{
	struct nvq_fio_options *o = data;

	if (nvq_qos_parse_limit(s, &o->cpu_lat_limit_us)) {
		log_err("nvq: cpu_lat_limit_us: %s\n", nvq_errmsg());
		return 1;
	}
	return 0;
}

/* fio option callback: cpu_lat_method=auto|cpuidle|poll|hybrid. */
static int parse_cpu_lat_method(void *data, const char *s)
{
	struct nvq_fio_options *o = data;

	if (nvq_qos_parse_method(s, &o->cpu_lat_method)) {
		log_err("nvq: cpu_lat_method: %s\n", nvq_errmsg());
		return 1;
	}
	return 0;
}

/*
 * A command timeout: decimal or 0x hex milliseconds, 0..NVQ_TIMEOUT_MS_MAX,
 * nothing else (fio's own integer parser takes "-1" and suffixes).
 */
static int parse_timeout(const char *name, const char *s, unsigned int *out)
{
	unsigned long long v = 0;
	unsigned int base = 10;
	const char *p = s ? s : "";

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		goto bad;
	for (; *p; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned int)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned int)(*p - 'A' + 10);
		else
			goto bad;
		v = v * base + d;
		if (v > NVQ_TIMEOUT_MS_MAX)
			goto bad;
	}
	*out = (unsigned int)v;
	return 0;
bad:
	log_err("nvq: %s: '%s' is not a timeout in milliseconds (0 for the "
		"default, up to %d)\n",
		name, s ? s : "", NVQ_TIMEOUT_MS_MAX);
	return 1;
}

/* fio option callbacks: io_timeout_ms= and admin_timeout_ms=. */
static int parse_io_timeout(void *data, const char *s)
{
	struct nvq_fio_options *o = data;

	return parse_timeout("io_timeout_ms", s, &o->io_timeout_ms);
}

static int parse_admin_timeout(void *data, const char *s)
{
	struct nvq_fio_options *o = data;

	return parse_timeout("admin_timeout_ms", s, &o->admin_timeout_ms);
}

#define STR_(x) #x
#define STR(x) STR_(x)

static struct fio_option options[] = {
	{
		.name = "uri",
		.lname = "nvq controller URI",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, uri),
		.help = "Controller to use, e.g. emu:size=1G or "
			"vfio:0000:01:00.0 (default: from filename, with '.' "
			"for the first ':')",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "mode",
		.lname = "nvq completion mode",
		.type = FIO_OPT_STR,
		.off1 = offsetof(struct nvq_fio_options, mode),
		.help = "How completions are reaped",
		.def = "poll",
		.posval = {
			{ .ival = "poll",
			  .oval = NVQ_MODE_POLL,
			  .help = "Spin on the completion queue (nvq_poll)" },
			{ .ival = "wait",
			  .oval = NVQ_MODE_WAIT,
			  .help = "Sleep on the queue's interrupt (nvq_wait)" },
		},
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "nsid",
		.lname = "nvq namespace id",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, nsid),
		.help = "Namespace to use (0: the first active one)",
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "queues",
		.lname = "nvq I/O queues",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, queues),
		.help = "I/O queue pairs to ask the controller for "
			"(0: one per job)",
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "qdepth",
		.lname = "nvq queue size",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, qdepth),
		.help = "Entries per NVMe I/O queue (0: max(256, "
			"2*iodepth+1))",
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "queue_stats",
		.lname = "nvq queue statistics",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nvq_fio_options, queue_stats),
		.help = "Print the job's queue counters (commands, doorbells, "
			"completions, interrupts) when it ends",
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "cpu_lat_limit_us",
		.lname = "nvq CPU latency limit",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, cpu_lat_limit),
		.cb = parse_cpu_lat_limit,
		.help = "While a mode=wait queue is busy, keep the CPUs taking "
			"its completions out of idle states slower to leave "
			"than this: off, auto (from the cpuidle states), 0 (no "
			"idle at all) or N microseconds",
		.def = "off",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "cpu_lat_method",
		.lname = "nvq CPU latency method",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, cpu_lat_method_s),
		.cb = parse_cpu_lat_method,
		.help = "How cpu_lat_limit_us is honoured: auto (cpuidle where "
			"its governor honours limits and nvq may write them, "
			"else a waiter method), cpuidle (PM QoS files), poll "
			"(the waiter polls the CQ while the queue is active) "
			"or hybrid (sleeps through most of the device time, "
			"then polls)",
		.def = "auto",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "cpu_lat_timeout_ms",
		.lname = "nvq CPU latency timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, cpu_lat_timeout_ms),
		.help = "Milliseconds without a submission after which a "
			"queue lets its CPUs idle again",
		.def = STR(NVQ_QOS_TIMEOUT_MS_DEFAULT),
		.minval = 1,
		.maxval = NVQ_QOS_TIMEOUT_MS_MAX,
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "io_timeout_ms",
		.lname = "nvq I/O command timeout",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, io_timeout),
		.cb = parse_io_timeout,
		.help = "Milliseconds an I/O command may take before the "
			"driver recovers (abort, reset); 0: the library's "
			"default, " STR(NVQ_IO_TIMEOUT_MS_DEFAULT),
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "admin_timeout_ms",
		.lname = "nvq admin command timeout",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, admin_timeout),
		.cb = parse_admin_timeout,
		.help = "Milliseconds an admin command may take before the "
			"driver resets the controller; 0: the library's "
			"default, " STR(NVQ_ADMIN_TIMEOUT_MS_DEFAULT),
		.def = "0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "md_per_io_size",
		.lname = "nvq metadata bytes per I/O",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, md_per_io_size),
		.def = "0",
		.help = "Bytes of the separate metadata buffer of each I/O "
			"(at least bs / LBA size x metadata size; default 0)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "pi_act",
		.lname = "nvq PRACT",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nvq_fio_options, pi_act),
		.def = "1",
		.help = "Protection Information Action bit: 1 the controller "
			"inserts/strips the PI, 0 the engine generates and "
			"checks it",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "pi_chk",
		.lname = "nvq PRCHK fields",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nvq_fio_options, pi_chk),
		.help = "PI fields checked: GUARD,REFTAG,APPTAG or none "
			"(default GUARD,REFTAG; GUARD for type 3)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "apptag",
		.lname = "nvq PI application tag",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, apptag),
		.def = "0x1234",
		.help = "PI application tag written and checked (default "
			"0x1234)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "apptag_mask",
		.lname = "nvq PI application tag mask",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nvq_fio_options, apptag_mask),
		.def = "0xffff",
		.help = "Bits of apptag the checks compare (default 0xffff)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

/* The symbol fio looks up in an external engine. */
struct ioengine_ops ioengine = {
	.name = ENGINE_NAME,
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_RAWIO | FIO_NOEXTEND | FIO_NODISKUTIL | FIO_MEMALIGN |
		 FIO_DISKLESSIO | FIO_NO_OFFLOAD | FIO_ASYNCIO_SETS_ISSUE_TIME,
	.init = fio_nvq_init,
	.queue = fio_nvq_queue,
	.commit = fio_nvq_commit,
	.getevents = fio_nvq_getevents,
	.event = fio_nvq_event,
	.errdetails = fio_nvq_errdetails,
	.cleanup = fio_nvq_cleanup,
	.open_file = fio_nvq_open_file,
	.close_file = fio_nvq_close_file,
	.get_file_size = fio_nvq_get_file_size,
	.iomem_alloc = fio_nvq_iomem_alloc,
	.iomem_free = fio_nvq_iomem_free,
	.io_u_init = fio_nvq_io_u_init,
	.io_u_free = fio_nvq_io_u_free,
	.option_struct_size = sizeof(struct nvq_fio_options),
	.options = options,
};

static struct ioengine_ops *engine_ops(void)
{
	return &ioengine;
}

/*
 * Register under the name "nvq" as soon as the library is loaded, so that
 * LD_PRELOAD=libnvq_fio.so fio --ioengine=nvq works too (as with SPDK's
 * plugin), and leave fio's engine list before the library goes.
 */
__attribute__((constructor)) static void engine_register(void)
{
	register_ioengine(&ioengine);
}

__attribute__((destructor)) static void engine_unregister(void)
{
	unregister_ioengine(&ioengine);
}
