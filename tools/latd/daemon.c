// SPDX-License-Identifier: MIT
/*
 * nvq-latd, the daemon: for every disk it watches, one nvq_qos_ctrl of the
 * library's QoS core (its cpu_lat_limit_us and cpu_lat_timeout_ms), fed by
 * one of two activity sources:
 *
 * - BPF (activity_bpf.c): a program on block:block_rq_issue counts each
 *   (disk, issuing CPU)'s requests in a memory-mapped array and reports
 *   only idle -> active transitions. Each pair of the disk and an online
 *   CPU gets a QoS queue when the disk is watched (a CPU that comes online
 *   later: at the next rescan or its first event), whose counter and idle
 *   flag are the program's own: the QoS core's timer compares the counter
 *   and sets the flag again when the pair went quiet, exactly as it does
 *   for nvq's own queues. CPUs: the issuing CPU and the interrupt CPUs of
 *   the hardware queue it issues to.
 * - poll: /sys/block/DEV/stat every timeout/3; a change of its I/O counts
 *   bumps a counter the daemon owns, and the idle flag tells it when to
 *   call nvq_qos_activate(). One queue per disk, on its interrupt CPUs
 *   (who submits is not known).
 *
 * The daemon forces the cpuidle method: its job is the PM QoS files, also
 * where no governor honours them today (it says so).
 *
 * One thread runs everything here (ppoll() on a signalfd, the status
 * socket and the BPF ring buffer); the QoS core runs its timer thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nvq/nvq.h>

#include "daemon.h"
#include "qos.h"

#define MAX_SPECS LATD_MAX_DISKS
#define MIN_POLL_NS 1000000ull
#define MAX_POLL_NS 10000000ull

static void logm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logm(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "nvq-latd: %s\n", buf);
}

/* ---- small helpers ---- */

void latd_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int cpu, end, w;

	buf[0] = '\0';
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		for (end = cpu;
		     end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set); end++)
			;
		if (end == cpu)
			w = snprintf(buf + n, len - n, "%s%d", n ? "," : "",
				     cpu);
		else
			w = snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "",
				     cpu, end);
		if (w < 0 || (size_t)w >= len - n) {
			if (len > 4)
				memcpy(buf + len - 4, "...", 4);
			return;
		}
		n += (size_t)w;
		cpu = end;
	}
}

void latd_default_socket(char *buf, size_t len, bool for_server)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	bool run;

	if (for_server)
		run = !access("/run", W_OK);
	else
		run = !stat("/run/nvq-latd.sock", &st) || !xdg || !*xdg;
	if (run || !xdg || !*xdg)
		snprintf(buf, len, "/run/nvq-latd.sock");
	else
		snprintf(buf, len, "%s/nvq-latd.sock", xdg);
}

/* ---- sd_notify, by hand: one datagram to $NOTIFY_SOCKET ---- */

static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[512];
	socklen_t alen;
	size_t n;
	va_list ap;
	int fd;

	if (!path || !*path || (path[0] != '/' && path[0] != '@'))
		return;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   alen) < 0) {
		/* systemd is not listening: nothing to tell */
	}
	close(fd);
}

/* ---- which disks, with which settings ---- */

struct want {
	char name[LATD_NAME_MAX];
	struct latd_settings s;
	char from[160];
};

static void add_from(char *from, size_t len, const char *spec, bool section)
{
	size_t n = strlen(from);

	snprintf(from + n, len - n, section ? "%s[%s]" : "%s%s", n ? ", " : "",
		 spec);
}

/*
 * Resolve @spec to disk names: latd_resolve(), plus globs over paths under
 * /dev ("/dev/disk/by-id/nvme-*"), which it leaves to the caller.
 */
static int expand(const struct latd *L, const char *spec,
		  char (*names)[LATD_NAME_MAX], int max, char *err, size_t len)
{
	const struct latd_roots *r = &L->o.roots;
	char pat[PATH_MAX], one[PATH_MAX], why[200];
	size_t dl = strlen(r->dev);
	int n = 0, k, i, j, ret;
	glob_t g;

	if (spec[0] != '/' || !strpbrk(spec, "*?["))
		return latd_resolve(r, spec, names, max, err, len);
	if (strncmp(spec, "/dev/", 5)) {
		latd_set_err(err, len,
			     "%s: not a disk name or a path under /dev", spec);
		return -EINVAL;
	}
	snprintf(pat, sizeof(pat), "%s%s", r->dev, spec + 4);
	ret = glob(pat, 0, NULL, &g);
	if (ret == GLOB_NOMATCH)
		return 0;
	if (ret) {
		latd_set_err(err, len, "%s: cannot expand the pattern", spec);
		return -EINVAL;
	}
	for (i = 0; i < (int)g.gl_pathc; i++) {
		char got[LATD_MAX_DISKS][LATD_NAME_MAX];

		if (strncmp(g.gl_pathv[i], r->dev, dl))
			continue;
		snprintf(one, sizeof(one), "/dev%s", g.gl_pathv[i] + dl);
		k = latd_resolve(r, one, got, LATD_MAX_DISKS, why, sizeof(why));
		if (k < 0)
			continue; /* a link to a partition table, not a disk */
		for (j = 0; j < k; j++) {
			int m;

			for (m = 0; m < n; m++)
				if (!strcmp(names[m], got[j]))
					break;
			if (m < n)
				continue;
			if (n == max) {
				globfree(&g);
				latd_set_err(err, len,
					     "%s matches more than %d disks",
					     spec, max);
				return -E2BIG;
			}
			memcpy(names[n++], got[j], LATD_NAME_MAX);
		}
	}
	globfree(&g);
	return n;
}

/* Log @msg for spec @i once, until it changes. */
static void spec_note(struct latd *L, int i, const char *msg)
{
	if (i >= MAX_SPECS || !strcmp(L->spec_msgs[i], msg))
		return;
	snprintf(L->spec_msgs[i], sizeof(L->spec_msgs[i]), "%s", msg);
	if (*msg)
		logm("%s", msg);
}

/*
 * The disks that @cfg and the command line name, with their settings.
 * @strict (start, reload): a spec that cannot be valid (bad syntax, too
 * many matches) fails the whole; a disk that is not there is only noted,
 * for it may come. Returns the count, or a negative errno with @err.
 */
static int collect(struct latd *L, const struct latd_config *cfg,
		   struct want *w, bool strict, char *err, size_t len)
{
	char names[LATD_MAX_DISKS][LATD_NAME_MAX], why[200], msg[600];
	int nspec = cfg->nr_sections + L->o.nr_devices;
	int i, j, k, m, n = 0;
	const char *spec;

	if (nspec > MAX_SPECS) {
		snprintf(err, len, "more than %d disk specs", MAX_SPECS);
		return -E2BIG;
	}
	for (i = 0; i < nspec; i++) {
		bool section = i < cfg->nr_sections;

		spec = section ? cfg->sections[i].spec :
				 L->o.devices[i - cfg->nr_sections];
		why[0] = '\0';
		k = expand(L, spec, names, LATD_MAX_DISKS, why, sizeof(why));
		if (k < 0 && strict && k != -ENODEV && k != -ENOENT) {
			if (section)
				snprintf(err, len, "%s:%d: [%s]: %s",
					 L->o.config ? L->o.config : "config",
					 cfg->sections[i].line, spec, why);
			else
				snprintf(err, len, "%s", why);
			return k;
		}
		if (k < 0)
			snprintf(msg, sizeof(msg), "%s: %s (watching for it)",
				 spec, why);
		else if (k == 0)
			snprintf(msg, sizeof(msg),
				 "%s: matches no disk now (watching for one)",
				 spec);
		else
			msg[0] = '\0';
		spec_note(L, i, msg);
		for (j = 0; j < k; j++) {
			for (m = 0; m < n; m++)
				if (!strcmp(w[m].name, names[j]))
					break;
			if (m == n) {
				if (n == LATD_MAX_DISKS) {
					snprintf(err, len,
						 "more than %d disks to watch",
						 LATD_MAX_DISKS);
					return -E2BIG;
				}
				memset(&w[n], 0, sizeof(w[n]));
				memcpy(w[n].name, names[j], LATD_NAME_MAX);
				latd_settings_init(&w[n].s);
				latd_settings_merge(&w[n].s, &cfg->defaults);
				n++;
			}
			if (section)
				latd_settings_merge(&w[m].s,
						    &cfg->sections[i].s);
			add_from(w[m].from, sizeof(w[m].from), spec, section);
		}
	}
	for (m = 0; m < n; m++)
		latd_settings_merge(&w[m].s, &L->o.cli);
	return n;
}

/* ---- the BPF source ---- */

static bool wants_bpf(const struct latd *L, const struct latd_config *cfg)
{
	struct latd_settings s;
	int i;

	latd_settings_init(&s);
	latd_settings_merge(&s, &cfg->defaults);
	latd_settings_merge(&s, &L->o.cli);
	if (s.activity != LATD_ACT_POLL)
		return true;
	for (i = 0; i < cfg->nr_sections; i++) {
		latd_settings_init(&s);
		latd_settings_merge(&s, &cfg->defaults);
		latd_settings_merge(&s, &cfg->sections[i].s);
		latd_settings_merge(&s, &L->o.cli);
		if (s.activity != LATD_ACT_POLL)
			return true;
	}
	return false;
}

static void bpf_load(struct latd *L)
{
	if (L->bpf_tried && (L->bpf || L->bpf_err != -EAGAIN))
		return;
	L->bpf_tried = true;
	L->bpf_why[0] = '\0';
	L->bpf_err = latd_bpf_open(&L->bpf, L->bpf_why, sizeof(L->bpf_why));
	if (L->bpf_err) {
		L->bpf = NULL;
		if (!L->bpf_why[0])
			snprintf(L->bpf_why, sizeof(L->bpf_why), "%s",
				 strerror(-L->bpf_err));
	}
}

/* The CPUs a (slot, cpu) queue keeps awake: the submitter and the
 * interrupt CPUs of the hardware queue it issues to. */
static void bpf_cpus(const struct ldisk *dk, int slot_idx, int cpu,
		     cpu_set_t *set)
{
	const struct latd_hwq *q = NULL;
	int i;

	CPU_ZERO(set);
	if (cpu >= 0 && cpu < CPU_SETSIZE)
		CPU_SET(cpu, set);
#ifdef LATD_MAX_PATHS
	if (dk->d.nr_paths) {
		for (i = 0; i < dk->d.nr_hwq; i++) {
			if (dk->d.hwq[i].path == slot_idx &&
			    CPU_ISSET(cpu, &dk->d.hwq[i].cpus)) {
				q = &dk->d.hwq[i];
				break;
			}
		}
	} else {
		q = latd_hwq_of_cpu(&dk->d, cpu);
	}
#else
	(void)i;
	(void)slot_idx;
	q = latd_hwq_of_cpu(&dk->d, cpu);
#endif
	if (q && q->irq >= 0) {
		cpu_set_t irq;

		CPU_AND(&irq, &q->irq_cpus, &dk->d.online);
		CPU_OR(set, set, &irq);
	}
}

static int slot_index(const struct ldisk *dk, int slot)
{
	int i;

	for (i = 0; i < dk->nr_slots; i++)
		if (dk->slots[i] == slot)
			return i;
	return -1;
}

/*
 * The queue of (@slot, @cpu), created if it does not exist yet; NULL if it
 * cannot be (the reason is logged).
 */
static struct ldisk_queue *bpf_queue(struct latd *L, struct ldisk *dk, int slot,
				     int cpu)
{
	struct ldisk_queue *nq, *q;
	const uint64_t *cnt;
	uint8_t *idle;
	int i;

	for (i = 0; i < dk->nr_queues; i++)
		if (dk->queues[i].slot == slot && dk->queues[i].cpu == cpu)
			return &dk->queues[i];
	cnt = latd_bpf_counter(L->bpf, slot, cpu);
	idle = latd_bpf_idle(L->bpf, slot, cpu);
	if (!cnt || !idle)
		return NULL;
	nq = realloc(dk->queues, (size_t)(dk->nr_queues + 1) * sizeof(*nq));
	if (!nq) {
		logm("%s: cpu%d: out of memory", dk->d.name, cpu);
		return NULL;
	}
	dk->queues = nq;
	q = &nq[dk->nr_queues];
	memset(q, 0, sizeof(*q));
	q->slot = slot;
	q->cpu = cpu;
	if (nvq_qos_queue_create(dk->qc, cnt, idle, NULL, &q->qq)) {
		logm("%s: cpu%d: %s", dk->d.name, cpu, nvq_errmsg());
		return NULL;
	}
	dk->nr_queues++;
	bpf_cpus(dk, slot_index(dk, slot), cpu, &q->cpus);
	nvq_qos_queue_set_cpus(q->qq, &q->cpus);
	return q;
}

/*
 * Create the queue of every (slot, online CPU) now, when the disk is
 * watched, so that the first idle -> active event of a pair costs what
 * every later one does (no allocation, no queue set-up on the way to the
 * limit). A CPU that comes online later gets its queue at the next
 * rescan, or at its first event.
 */
static void bpf_queues_create(struct latd *L, struct ldisk *dk)
{
	int i, cpu, n = latd_bpf_nr_cpus(L->bpf);

	for (i = 0; i < dk->nr_slots; i++)
		for (cpu = 0; cpu < n && cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &dk->d.online))
				bpf_queue(L, dk, dk->slots[i], cpu);
}

static void on_event(void *arg, int slot, int cpu)
{
	struct latd *L = arg;
	struct ldisk_queue *q;
	struct ldisk *dk;

	if (slot < 0 || slot >= LATD_MAX_DISKS || !(dk = L->slot_owner[slot]))
		return;
	q = bpf_queue(L, dk, slot, cpu);
	if (q)
		nvq_qos_activate(q->qq);
}

/* The dev_t's whose requests count for @dk: its own, or its paths'. */
static void dk_devs(const struct ldisk *dk, unsigned int *ma, unsigned int *mi,
		    int *n)
{
#ifdef LATD_MAX_PATHS
	int i;

	if (dk->d.nr_paths) {
		*n = MIN(dk->d.nr_paths, LDISK_MAX_SLOTS);
		for (i = 0; i < *n; i++) {
			ma[i] = dk->d.paths[i].major;
			mi[i] = dk->d.paths[i].minor;
		}
		return;
	}
#endif
	ma[0] = dk->d.major;
	mi[0] = dk->d.minor;
	*n = 1;
}

static void bpf_unwatch_all(struct latd *L, struct ldisk *dk)
{
	int i;

	for (i = 0; i < dk->nr_slots; i++) {
		latd_bpf_unwatch(L->bpf, dk->slots[i]);
		L->slot_owner[dk->slots[i]] = NULL;
	}
	dk->nr_slots = 0;
}

static int bpf_watch_all(struct latd *L, struct ldisk *dk, char *err,
			 size_t len)
{
	unsigned int ma[LDISK_MAX_SLOTS], mi[LDISK_MAX_SLOTS];
	int i, s, n, cpu, ret;
	uint8_t *idle;

	dk_devs(dk, ma, mi, &n);
	for (i = 0; i < n; i++) {
		for (s = 0; s < LATD_MAX_DISKS && L->slot_owner[s]; s++)
			;
		if (s == LATD_MAX_DISKS) {
			snprintf(err, len, "no free BPF slot (%d in use)",
				 LATD_MAX_DISKS);
			bpf_unwatch_all(L, dk);
			return -ENOSPC;
		}
		ret = latd_bpf_watch(L->bpf, s, ma[i], mi[i]);
		if (ret) {
			snprintf(err, len, "cannot watch %u:%u with BPF: %s",
				 ma[i], mi[i], strerror(-ret));
			bpf_unwatch_all(L, dk);
			return ret;
		}
		/* Report the first request from every CPU. */
		for (cpu = 0; cpu < latd_bpf_nr_cpus(L->bpf); cpu++) {
			idle = latd_bpf_idle(L->bpf, s, cpu);
			if (idle)
				__atomic_store_n(idle, 1, __ATOMIC_SEQ_CST);
		}
		L->slot_owner[s] = dk;
		dk->slots[dk->nr_slots] = s;
		dk->slot_major[dk->nr_slots] = ma[i];
		dk->slot_minor[dk->nr_slots] = mi[i];
		dk->nr_slots++;
	}
	return 0;
}

/* ---- the poll source ---- */

/* The CPUs the poll queue keeps awake: the interrupt CPUs, else (no
 * interrupt found: polled queues, or unknown) the submitting ones. */
static void poll_cpus(const struct ldisk *dk, cpu_set_t *set)
{
	*set = dk->d.irq_cpus;
	if (!CPU_COUNT(set))
		*set = dk->d.submit_cpus;
	if (!CPU_COUNT(set))
		*set = dk->d.online;
}

/*
 * A third of the timeout, so that a busy disk is seen at least twice per
 * QoS period; at most 10 ms, which is the detection delay of a burst's
 * start (long timeouts must not make it slow); at least 1 ms.
 */
static void poll_interval(struct ldisk *dk)
{
	uint64_t ns = (uint64_t)dk->s.timeout_ms * 1000000ull / 3;

	if (ns > MAX_POLL_NS)
		ns = MAX_POLL_NS;
	dk->interval_ns = ns < MIN_POLL_NS ? MIN_POLL_NS : ns;
}

/* I/Os done plus in flight, from /sys/block/DEV/stat. */
static int read_stat(const struct latd *L, const struct ldisk *dk,
		     uint64_t *sum, char *err, size_t len)
{
	/* reads, writes, in flight, discards, flushes (Documentation/block/
	 * stat.rst): fields 1, 5, 9, 12 and 16 */
	static const int pick[] = { 0, 4, 8, 11, 15 };
	unsigned long long f[17];
	char path[PATH_MAX], buf[512], *p, *end;
	int ret, n = 0;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/block/%s/stat", L->o.roots.sys,
		 dk->d.name);
	ret = nvq_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0) {
		snprintf(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (p = buf; n < 17; n++) {
		errno = 0;
		f[n] = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
		p = end;
	}
	if (n < 9) {
		snprintf(err, len, "%s: not a block stat file", path);
		return -EINVAL;
	}
	*sum = 0;
	for (i = 0; i < sizeof(pick) / sizeof(pick[0]); i++)
		if (pick[i] < n)
			*sum += f[pick[i]];
	return 0;
}

static void poll_disk(struct latd *L, struct ldisk *dk, uint64_t now)
{
	char err[sizeof(dk->stat_err)] = "";
	uint64_t sum = 0;

	dk->next_ns += dk->interval_ns;
	if (dk->next_ns <= now)
		dk->next_ns = now + dk->interval_ns;
	if (read_stat(L, dk, &sum, err, sizeof(err))) {
		if (strcmp(err, dk->stat_err))
			logm("%s: %s", dk->d.name, err);
		memcpy(dk->stat_err, err, sizeof(err));
		return;
	}
	dk->stat_err[0] = '\0';
	if (dk->have_sum && sum != dk->last_sum) {
		__atomic_fetch_add(&dk->counter, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&dk->idle, __ATOMIC_SEQ_CST))
			nvq_qos_activate(dk->queues[0].qq);
	}
	dk->last_sum = sum;
	dk->have_sum = true;
}

/* ---- one disk ---- */

static void source_stop(struct latd *L, struct ldisk *dk)
{
	int i;

	for (i = 0; i < dk->nr_queues; i++)
		nvq_qos_queue_destroy(dk->queues[i].qq);
	free(dk->queues);
	dk->queues = NULL;
	dk->nr_queues = 0;
	if (dk->mode == LATD_ACT_BPF)
		bpf_unwatch_all(L, dk);
}

/* Start the activity source @dk->s asks for; 0 or a negative errno. */
static int source_start(struct latd *L, struct ldisk *dk, char *err, size_t len)
{
	struct ldisk_queue *q;
	int ret;

	if (dk->s.activity != LATD_ACT_POLL && L->bpf) {
		ret = bpf_watch_all(L, dk, err, len);
		if (!ret) {
			bpf_queues_create(L, dk);
			dk->mode = LATD_ACT_BPF;
			snprintf(dk->mode_why, sizeof(dk->mode_why),
				 "block:block_rq_issue, per submitting CPU");
			return 0;
		}
		if (dk->s.activity == LATD_ACT_BPF)
			return ret;
		snprintf(dk->mode_why, sizeof(dk->mode_why),
			 "BPF could not watch it: %.120s", err);
	} else if (dk->s.activity == LATD_ACT_BPF) {
		snprintf(err, len, "activity bpf, but BPF cannot be used: %s",
			 L->bpf_why);
		return -ENOSYS;
	} else if (dk->s.activity == LATD_ACT_POLL) {
		snprintf(dk->mode_why, sizeof(dk->mode_why), "as asked");
	} else {
		snprintf(dk->mode_why, sizeof(dk->mode_why), "no BPF: %.140s",
			 L->bpf_why);
	}
	dk->mode = LATD_ACT_POLL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	q->slot = -1;
	q->cpu = -1;
	dk->counter = 0;
	dk->have_sum = false;
	dk->stat_err[0] = '\0';
	ret = nvq_qos_queue_create(dk->qc, &dk->counter, &dk->idle, NULL,
				   &q->qq);
	if (ret) {
		snprintf(err, len, "%s", nvq_errmsg());
		free(q);
		return ret;
	}
	poll_cpus(dk, &q->cpus);
	nvq_qos_queue_set_cpus(q->qq, &q->cpus);
	dk->queues = q;
	dk->nr_queues = 1;
	poll_interval(dk);
	dk->next_ns = nvq_now_ns();
	return 0;
}

static void say_disk(const struct ldisk *dk, const char *what)
{
	char lim[32], irq[128], sub[128], qc[128];
	struct nvq_qos_info info;

	nvq_qos_info(dk->qc, &info);
	latd_limit_text(dk->s.limit_us, lim, sizeof(lim));
	if (dk->s.limit_us == NVQ_QOS_AUTO) {
		char eff[32];

		latd_limit_text(info.effective_us, eff, sizeof(eff));
		snprintf(lim + strlen(lim), sizeof(lim) - strlen(lim), " = %s",
			 eff);
	}
	latd_cpulist(&dk->d.irq_cpus, irq, sizeof(irq));
	latd_cpulist(&dk->d.submit_cpus, sub, sizeof(sub));
	logm("%s %s (%u:%u, %s; from %s): limit %s, timeout %u ms, "
	     "activity %s (%s); hysteresis %s",
	     what, dk->d.name, dk->d.major, dk->d.minor,
	     dk->d.driver[0] ? dk->d.driver : "unknown driver", dk->from, lim,
	     dk->s.timeout_ms, latd_activity_name(dk->mode), dk->mode_why,
	     dk->s.hysteresis ? "on" : "off");
	if (dk->mode == LATD_ACT_POLL) {
		latd_cpulist(&dk->queues[0].cpus, qc, sizeof(qc));
		logm("%s: %d hardware queues; interrupt CPUs %s; submitting "
		     "CPUs %s; limit on CPUs %s (%s)",
		     dk->d.name, dk->d.nr_hwq, irq[0] ? irq : "none found",
		     sub[0] ? sub : "none", qc,
		     CPU_COUNT(&dk->d.irq_cpus) ?
			     "interrupts; submitters unknown when polling" :
			     "no interrupt found: the submitting CPUs");
	} else {
		logm("%s: %d hardware queues; interrupt CPUs %s; submitting "
		     "CPUs %s; limit on each submitting CPU and its queue's "
		     "interrupt CPUs",
		     dk->d.name, dk->d.nr_hwq, irq[0] ? irq : "none found",
		     sub[0] ? sub : "none");
	}
	if (dk->d.note[0])
		logm("%s: %s", dk->d.name, dk->d.note);
	if (info.reason[0])
		logm("%s: auto: %s", dk->d.name, info.reason);
}

/* Apply @dk->s to its controller. */
static void apply_settings(struct ldisk *dk)
{
	nvq_qos_set_timeout(dk->qc, dk->s.timeout_ms);
	nvq_qos_set_hysteresis(dk->qc, dk->s.hysteresis);
	nvq_qos_set_limit(dk->qc, dk->s.limit_us);
}

static void disk_free(struct latd *L, struct ldisk *dk)
{
	source_stop(L, dk);
	nvq_qos_ctrl_destroy(dk->qc);
	latd_disk_free(&dk->d);
	free(dk);
}

static int disk_add(struct latd *L, const struct want *w, struct latd_disk *d,
		    char *err, size_t len)
{
	struct ldisk *dk;
	int ret;

	if (L->nr_disks == LATD_MAX_DISKS) {
		snprintf(err, len, "more than %d disks", LATD_MAX_DISKS);
		return -E2BIG;
	}
	dk = calloc(1, sizeof(*dk));
	if (!dk) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	dk->d = *d;
	memset(d, 0, sizeof(*d));
	dk->s = w->s;
	snprintf(dk->from, sizeof(dk->from), "%s", w->from);
	ret = nvq_qos_ctrl_create(&dk->qc);
	if (ret) {
		snprintf(err, len, "%s", nvq_errmsg());
		latd_disk_free(&dk->d);
		free(dk);
		return ret;
	}
	/* The files are the point, honoured or not (see the top). */
	nvq_qos_set_method(dk->qc, NVQ_QOS_METHOD_CPUIDLE);
	apply_settings(dk);
	ret = source_start(L, dk, err, len);
	if (ret) {
		nvq_qos_ctrl_destroy(dk->qc);
		latd_disk_free(&dk->d);
		free(dk);
		return ret;
	}
	/* The timer runs from now on, not from the first activation. */
	if (nvq_qos_timer_start())
		logm("%s: %s", dk->d.name, nvq_errmsg());
	dk->mark = true;
	L->disks[L->nr_disks++] = dk;
	say_disk(dk, "watching");
	return 0;
}

static bool same_devs(const struct ldisk *dk)
{
	unsigned int ma[LDISK_MAX_SLOTS], mi[LDISK_MAX_SLOTS];
	int i, n;

	dk_devs(dk, ma, mi, &n);
	if (n != dk->nr_slots)
		return false;
	for (i = 0; i < n; i++)
		if (ma[i] != dk->slot_major[i] || mi[i] != dk->slot_minor[i])
			return false;
	return true;
}

/* New discovery results and settings for a disk already watched. */
static void disk_update(struct latd *L, struct ldisk *dk, const struct want *w,
			struct latd_disk *d)
{
	struct latd_settings old = dk->s;
	char before[128], after[128], err[200];
	bool restart, changed;
	int i;

	latd_cpulist(&dk->d.irq_cpus, before, sizeof(before));
	latd_disk_free(&dk->d);
	dk->d = *d;
	memset(d, 0, sizeof(*d));
	dk->s = w->s;
	snprintf(dk->from, sizeof(dk->from), "%s", w->from);
	dk->mark = true;
	changed = old.limit_us != dk->s.limit_us ||
		  old.timeout_ms != dk->s.timeout_ms ||
		  old.hysteresis != dk->s.hysteresis ||
		  old.activity != dk->s.activity;
	if (changed)
		apply_settings(dk);
	restart = old.activity != dk->s.activity ||
		  (dk->mode == LATD_ACT_BPF && !same_devs(dk));
	if (restart) {
		source_stop(L, dk);
		if (source_start(L, dk, err, sizeof(err))) {
			/* Only where BPF went away: poll instead. */
			dk->s.activity = LATD_ACT_POLL;
			source_start(L, dk, err, sizeof(err));
		}
	} else {
		if (dk->mode == LATD_ACT_POLL)
			poll_interval(dk);
		else
			bpf_queues_create(L, dk); /* CPUs that came online */
		for (i = 0; i < dk->nr_queues; i++) {
			struct ldisk_queue *q = &dk->queues[i];

			if (q->slot < 0)
				poll_cpus(dk, &q->cpus);
			else
				bpf_cpus(dk, slot_index(dk, q->slot), q->cpu,
					 &q->cpus);
			nvq_qos_queue_set_cpus(q->qq, &q->cpus);
		}
	}
	latd_cpulist(&dk->d.irq_cpus, after, sizeof(after));
	if (changed || restart)
		say_disk(dk, "now");
	else if (strcmp(before, after))
		logm("%s: interrupt CPUs %s -> %s", dk->d.name,
		     before[0] ? before : "none", after[0] ? after : "none");
}

/* Bring the watched disks in line with @w[0..n). @loud: say why a disk
 * could not be discovered even if that was said before. */
static int reconcile(struct latd *L, const struct want *w, int n, bool strict,
		     char *err, size_t len)
{
	char why[256];
	struct latd_disk d;
	int i, j, ret;

	for (j = 0; j < L->nr_disks; j++)
		L->disks[j]->mark = false;
	for (i = 0; i < n; i++) {
		memset(&d, 0, sizeof(d));
		why[0] = '\0';
		ret = latd_discover(&L->o.roots, w[i].name, &d, why,
				    sizeof(why));
		if (ret) {
			latd_disk_free(&d);
			logm("%s: %s", w[i].name, why);
			continue;
		}
		for (j = 0; j < L->nr_disks; j++)
			if (!strcmp(L->disks[j]->d.name, w[i].name))
				break;
		if (j < L->nr_disks) {
			disk_update(L, L->disks[j], &w[i], &d);
			continue;
		}
		ret = disk_add(L, &w[i], &d, why, sizeof(why));
		latd_disk_free(&d);
		if (ret && strict) {
			snprintf(err, len, "%s: %s", w[i].name, why);
			return ret;
		}
		if (ret)
			logm("%s: not watched: %s", w[i].name, why);
	}
	for (j = 0; j < L->nr_disks;) {
		if (L->disks[j]->mark) {
			j++;
			continue;
		}
		logm("%s: no longer watched (gone or not configured)",
		     L->disks[j]->d.name);
		disk_free(L, L->disks[j]);
		L->disks[j] = L->disks[--L->nr_disks];
	}
	return 0;
}

/*
 * Settings from @cfg: check what would be watched and, unless something is
 * wrong, switch to it. @strict as collect(); on failure nothing changes.
 */
static int take(struct latd *L, const struct latd_config *cfg, bool strict,
		char *err, size_t len)
{
	struct want *w;
	int i, n, ret;

	if (wants_bpf(L, cfg))
		bpf_load(L);
	w = calloc(LATD_MAX_DISKS, sizeof(*w));
	if (!w) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	n = collect(L, cfg, w, strict, err, len);
	if (n < 0) {
		free(w);
		return n;
	}
	if (strict && !L->bpf) {
		for (i = 0; i < n; i++) {
			if (w[i].s.activity == LATD_ACT_BPF) {
				snprintf(err, len,
					 "%s: activity bpf, but BPF cannot be "
					 "used: %s",
					 w[i].name, L->bpf_why);
				free(w);
				return -ENOSYS;
			}
		}
	}
	ret = reconcile(L, w, n, strict, err, len);
	free(w);
	return ret;
}

/* ---- status socket ---- */

static int sock_open(struct latd *L, char *err, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = L->socket_path;
	struct stat st;
	int fd, c;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, len, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, len,
				 "%s exists and is not a socket: not touching "
				 "it",
				 path);
			return -EEXIST;
		}
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c >= 0 && !connect(c, (struct sockaddr *)&sa, sizeof(sa))) {
			close(c);
			snprintf(err, len,
				 "another nvq-latd answers at %s: stop it "
				 "first (or give --socket)",
				 path);
			return -EADDRINUSE;
		}
		if (c >= 0)
			close(c);
		unlink(path); /* a dead daemon's */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 8)) {
		int e = -errno;

		snprintf(err, len, "status socket %s: %s", path, strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
	}
	/* Status is for every user; the socket takes no other request. */
	chmod(path, 0666);
	return fd;
}

static void serve(struct latd *L, int lfd)
{
	char req[64], *buf = NULL;
	struct pollfd pfd;
	size_t n = 0, off = 0;
	ssize_t got, w;
	FILE *f;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* One short line: "status" or "status json". A client that does not
	 * send it soon gets nothing. */
	pfd.fd = fd;
	pfd.events = POLLIN;
	got = 0;
	if (poll(&pfd, 1, 1000) == 1)
		got = recv(fd, req, sizeof(req) - 1, MSG_DONTWAIT);
	if (got <= 0) {
		close(fd);
		return;
	}
	req[got] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	f = open_memstream(&buf, &n);
	if (!f) {
		close(fd);
		return;
	}
	if (!strcmp(req, "status json"))
		latd_status_write(L, f, true);
	else if (!strcmp(req, "status"))
		latd_status_write(L, f, false);
	else
		fprintf(f,
			"error: unknown request \"%s\" (status, status "
			"json)\n",
			req);
	fclose(f);
	while (off < n) {
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 1000) != 1)
			break;
		w = send(fd, buf + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (w > 0)
			off += (size_t)w;
	}
	free(buf);
	close(fd);
}

/* ---- start, reload, loop ---- */

static int load_config(struct latd *L, struct latd_config *cfg, char *err,
		       size_t len)
{
	if (!L->o.config) {
		memset(cfg, 0, sizeof(*cfg));
		return 0;
	}
	return latd_config_load(L->o.config, cfg, err, len);
}

static void status_line(struct latd *L)
{
	int poll = 0, bpf = 0, i;

	for (i = 0; i < L->nr_disks; i++) {
		if (L->disks[i]->mode == LATD_ACT_BPF)
			bpf++;
		else
			poll++;
	}
	notify("STATUS=watching %d disks (%d bpf, %d poll)%s", L->nr_disks, bpf,
	       poll, L->reload_failures ? "; last reload failed" : "");
}

static void reload(struct latd *L)
{
	struct latd_config cfg;
	char err[512];
	int ret;

	L->reloads++;
	ret = load_config(L, &cfg, err, sizeof(err));
	if (!ret) {
		ret = take(L, &cfg, true, err, sizeof(err));
		if (ret)
			latd_config_free(&cfg);
	}
	if (ret) {
		L->reload_failures++;
		snprintf(L->last_reload, sizeof(L->last_reload),
			 "failed, previous settings kept: %.200s", err);
		logm("reload: %s; keeping the previous settings", err);
		status_line(L);
		return;
	}
	latd_config_free(&L->cfg);
	L->cfg = cfg;
	snprintf(L->last_reload, sizeof(L->last_reload), "ok, %d disks",
		 L->nr_disks);
	logm("reloaded%s%s: watching %d disks", L->o.config ? " " : "",
	     L->o.config ? L->o.config : "", L->nr_disks);
	status_line(L);
}

static void say_platform(struct latd *L)
{
	struct nvq_qos_info info;
	char why[256];
	int lim = NVQ_QOS_OFF, i;

	for (i = 0; i < L->nr_disks && lim < 0; i++) {
		nvq_qos_info(L->disks[i]->qc, &info);
		lim = info.effective_us;
	}
	if (lim < 0)
		lim = 0;
	if (nvq_qos_cpuidle_honours(NULL, lim, why, sizeof(why)))
		logm("cpuidle: limits are honoured here (%s)", why);
	else
		logm("cpuidle: limits are written but nothing here honours "
		     "them (%s)",
		     why);
	nvq_qos_info(NULL, &info);
	if (info.status[0])
		logm("QoS: %s", info.status);
}

static void restore_dead(void)
{
	struct nvq_qos_holder h[64];
	char path[512] = "";
	int n, i;

	n = nvq_qos_restore_dead(h, 64, path, sizeof(path));
	if (n < 0) {
		logm("no QoS state file: %s (limits of a killed nvq-latd "
		     "are not restored)",
		     nvq_errmsg());
		return;
	}
	for (i = 0; i < n && i < 64; i++) {
		if (h[i].live)
			continue;
		logm("cpu%d: restored to %s (pid %d died holding %d us)",
		     h[i].cpu, h[i].value, h[i].pid, h[i].limit_us);
	}
}

static uint64_t next_wake(const struct latd *L)
{
	uint64_t next = L->next_rescan_ns;
	int i;

	for (i = 0; i < L->nr_disks; i++)
		if (L->disks[i]->mode == LATD_ACT_POLL &&
		    L->disks[i]->next_ns < next)
			next = L->disks[i]->next_ns;
	return next;
}

static void loop(struct latd *L, int sfd, int lfd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[3];
	struct timespec ts;
	uint64_t now, next;
	int nfd, i, bfd;

	for (;;) {
		now = nvq_now_ns();
		next = next_wake(L);
		next = next > now ? next - now : 0;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		pfd[0].fd = sfd;
		pfd[1].fd = lfd;
		pfd[0].events = pfd[1].events = POLLIN;
		nfd = 2;
		bfd = L->bpf ? latd_bpf_fd(L->bpf) : -1;
		if (bfd >= 0) {
			pfd[2].fd = bfd;
			pfd[2].events = POLLIN;
			nfd = 3;
		}
		for (i = 0; i < nfd; i++)
			pfd[i].revents = 0;
		if (ppoll(pfd, (nfds_t)nfd, &ts, NULL) < 0 && errno != EINTR) {
			logm("ppoll: %s", strerror(errno));
			return;
		}
		if (pfd[0].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					logm("SIGHUP: reloading");
					reload(L);
				} else {
					logm("%s: releasing the limits and "
					     "exiting",
					     si.ssi_signo == SIGINT ?
						     "SIGINT" :
						     "SIGTERM");
					return;
				}
			}
		}
		if (pfd[1].revents & POLLIN)
			serve(L, lfd);
		if (nfd == 3 && (pfd[2].revents & POLLIN))
			latd_bpf_drain(L->bpf, on_event, L);
		now = nvq_now_ns();
		for (i = 0; i < L->nr_disks; i++)
			if (L->disks[i]->mode == LATD_ACT_POLL &&
			    L->disks[i]->next_ns <= now)
				poll_disk(L, L->disks[i], now);
		if (now >= L->next_rescan_ns) {
			char err[256];

			L->next_rescan_ns =
				now + (uint64_t)L->o.rescan_ms * 1000000ull;
			take(L, &L->cfg, false, err, sizeof(err));
		}
	}
}

int latd_daemon_run(const struct latd_opts *o)
{
	static struct latd L0;
	struct latd *L = &L0;
	char err[512];
	sigset_t set;
	int sfd, lfd, i, ret;

	memset(L, 0, sizeof(*L));
	L->o = *o;
	L->started_ns = nvq_now_ns();
	if (o->socket)
		snprintf(L->socket_path, sizeof(L->socket_path), "%s",
			 o->socket);
	else
		latd_default_socket(L->socket_path, sizeof(L->socket_path),
				    true);

	/* Signals come through the main loop, blocked everywhere else. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		logm("signalfd: %s", strerror(errno));
		return 1;
	}

	/* Only a root given here: NVQ_SYSFS_ROOT is the library's own. */
	if (o->sysfs_root_opt && nvq_qos_set_sysfs_root(o->sysfs_root_opt)) {
		logm("%s", nvq_errmsg());
		return 1;
	}
	ret = load_config(L, &L->cfg, err, sizeof(err));
	if (ret) {
		logm("%s", err);
		return 1;
	}
	if (!L->cfg.nr_sections && !o->nr_devices) {
		logm("no disks to watch: name them on the command line or in "
		     "the config file's [sections]");
		latd_config_free(&L->cfg);
		return 2;
	}
	restore_dead();
	lfd = sock_open(L, err, sizeof(err));
	if (lfd < 0) {
		logm("%s", err);
		latd_config_free(&L->cfg);
		return 1;
	}
	ret = take(L, &L->cfg, true, err, sizeof(err));
	if (ret) {
		logm("%s", err);
		ret = 1;
		goto out;
	}
	if (!wants_bpf(L, &L->cfg))
		logm("activity: poll (as asked)");
	else if (L->bpf)
		logm("activity: bpf (block:block_rq_issue)");
	else
		logm("activity: poll, BPF is unavailable (%s)", L->bpf_why);
	say_platform(L);
	logm("status: nvq-latd status --socket %s", L->socket_path);
	L->next_rescan_ns = nvq_now_ns() + (uint64_t)o->rescan_ms * 1000000ull;
	notify("READY=1");
	status_line(L);
	loop(L, sfd, lfd);
	ret = 0;
out:
	notify("STOPPING=1");
	for (i = 0; i < L->nr_disks; i++)
		disk_free(L, L->disks[i]);
	L->nr_disks = 0;
	latd_bpf_close(L->bpf);
	L->bpf = NULL;
	close(lfd);
	unlink(L->socket_path);
	close(sfd);
	latd_config_free(&L->cfg);
	return ret;
}
