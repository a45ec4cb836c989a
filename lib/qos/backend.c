// SPDX-License-Identifier: MIT
/*
 * CPU latency QoS backends: where a per-CPU limit ends up.
 *
 * sysfs: /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us holds
 * one user-space request per CPU. Its text is inverted at zero: "n/a" is a
 * limit of 0 us (the CPU may not idle at all) and "0" means no constraint.
 * nvq saves what the file said before it first wrote to it and writes that
 * back when its last request on the CPU goes. A limit looser than what the
 * file already says is never written: nvq only ever tightens.
 *
 * cpu_dma_latency: one global request that lives while the device is open;
 * the value is a binary s32 (a text "500\n" would be read as 4 bytes of
 * garbage). Used for CPUs without a writable sysfs file, or for all CPUs.
 *
 * Everything that a signal handler needs to put the files back (paths and
 * saved texts) is precomputed, so that restoring is open/write/close only.
 *
 * The state file (see "The state file" below and docs/qos.md) makes the
 * sysfs files' restore survive SIGKILL and lets several nvq processes share
 * a CPU: the file's original text and every live process's request live
 * there, not only in this process's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "qos.h"

#define ROOT_MAX 200
#define PATH_MAX_LEN (ROOT_MAX + 64)
#define SAVED_MAX 16

/* Every status text says the same two things around its reason. */
#define NA "CPU latency limit not applied: "
#define UNAFFECTED "; I/O is not affected"

struct cpu_file {
	char path[PATH_MAX_LEN];
	/*
	 * What to write back if this process's request went away: the
	 * file's text before nvq, or with the state file the strictest
	 * request of the other live nvq processes. Two slots, flipped by
	 * @cur, so that the signal handler never reads one half-written.
	 */
	char saved[2][SAVED_MAX];
	size_t saved_len[2];
	int cur; /* atomic: the slot in use */
	int32_t saved_us; /* the original as a value (NVQ_QOS_NONE: "0") */
	pid_t owner; /* process that saved it: only it restores */
	int dirty; /* atomic: something to undo (a value written or a hold
		    * in the state file) */
	int shared; /* atomic: this process's hold is in the state file */
	bool have_saved; /* saved is valid: we hold a request here */
	bool broken; /* failed; not retried until nvq_qos_be_retry() */
	bool global; /* routed to cpu_dma_latency (no usable file) */
	int32_t global_us; /* this CPU's share of the global request */
};

/*
 * Entries are allocated on a CPU's first use and never freed: the signal
 * handler walks them without a lock.
 */
static struct cpu_file *files[NVQ_QOS_MAX_CPUS];

static enum nvq_qos_backend kind = NVQ_QOS_BACKEND_SYSFS;
static char root[ROOT_MAX] = "/sys";
static bool root_overridden;
static bool env_read;
static char dma_path[PATH_MAX_LEN] = "/dev/cpu_dma_latency";
static bool dma_overridden;
static int dma_fd = -1;
static int32_t dma_written = NVQ_QOS_NONE;
static bool dma_broken;
static char status[256];

/*
 * Set once exit or a signal's restore started: no new value is written.
 * Cleared again when the application's own handler let the process go on
 * and the library took note (nvq_qos_be_take_signal()).
 */
static int dying;
/* atomic: a signal's restore ran and the application's handler got it */
static int sig_released;
static uint64_t sig_at_ns;

static bool hooks_atexit;
static int hooked[2]; /* atomic: our handler is installed, SIGINT/SIGTERM */
static struct sigaction old_act[2];

static struct nvq_qos_record *log_recs;
static unsigned int log_nr, log_cap;

static void set_status(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void set_status(const char *fmt, ...)
{
	va_list ap;

	/* The first problem is the one worth reading; later ones follow. */
	if (status[0])
		return;
	va_start(ap, fmt);
	vsnprintf(status, sizeof(status), fmt, ap);
	va_end(ap);
}

static const char *root_hint(int err)
{
	return err == -EACCES || err == -EPERM ? " (needs root)" : "";
}

static void read_env(void)
{
	const char *s;

	if (env_read)
		return;
	env_read = true;
	s = secure_getenv("NVQ_SYSFS_ROOT");
	if (s && *s && strlen(s) < ROOT_MAX) {
		strcpy(root, s);
		root_overridden = true;
	}
	s = secure_getenv("NVQ_CPU_DMA_LATENCY");
	if (s && *s && strlen(s) < PATH_MAX_LEN) {
		strcpy(dma_path, s);
		dma_overridden = true;
	}
}

/* Under a fake sysfs tree, never reach for the real global device. */
static bool dma_allowed(void)
{
	return !root_overridden || dma_overridden;
}

/*
 * Async-signal-safe: open, write, close. O_TRUNC is what a shell's ">"
 * does; sysfs ignores it, and it keeps fake trees of regular files exact.
 */
static int write_raw(const char *path, const char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* ---- text helpers: async-signal-safe, the exit and signal paths use them ---- */

/* @v in decimal at @p (room for 20 digits, no NUL); returns the length. */
static size_t put_ull(char *p, unsigned long long v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* A decimal number at *@s, which moves past it; -EINVAL if none or huge. */
static int get_ull(const char **s, unsigned long long *v)
{
	const char *p = *s;
	unsigned long long x = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > (ULLONG_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (unsigned long long)(*p - '0');
	}
	*s = p;
	*v = x;
	return 0;
}

/* Parse a pm_qos_resume_latency_us text into a value; -EINVAL if odd. */
static int parse_file_value(const char *s, int32_t *us)
{
	unsigned long long v;

	if (!strcmp(s, "n/a")) {
		*us = 0;
		return 0;
	}
	if (get_ull(&s, &v) || *s || v >= NVQ_QOS_NONE)
		return -EINVAL;
	*us = v ? (int32_t)v : NVQ_QOS_NONE;
	return 0;
}

/* The file text of @us into @buf (SAVED_MAX bytes); returns its length. */
static size_t format_file_value(int32_t us, char *buf)
{
	size_t n;

	if (us == 0) {
		memcpy(buf, "n/a", 4);
		return 3;
	}
	n = put_ull(buf, us == NVQ_QOS_NONE ? 0 : (unsigned long long)us);
	buf[n] = '\0';
	return n;
}

/*
 * The text that makes a file hold @us, given its original @orig (value
 * @orig_us): the original itself where @us is not stricter, so that "0"
 * stays "0" and a looser limit is never written.
 */
static const char *value_text(int32_t us, const char *orig, int32_t orig_us,
			      char *buf)
{
	if (us >= orig_us)
		return orig;
	format_file_value(us, buf);
	return buf;
}

static void set_saved(struct cpu_file *f, const char *text)
{
	int next = !__atomic_load_n(&f->cur, __ATOMIC_SEQ_CST);
	size_t len = strnlen(text, SAVED_MAX - 1);

	memcpy(f->saved[next], text, len);
	f->saved[next][len] = '\0';
	f->saved_len[next] = len;
	__atomic_store_n(&f->cur, next, __ATOMIC_SEQ_CST);
}

/* ---- the state file ---- */

/*
 * One file per boot (and per sysfs root), shared by every nvq process:
 *
 *	nvq-qos-state 1
 *	orig CPU TEXT            the CPU file's text before any nvq process
 *	                         changed it
 *	hold CPU PID START US    a process's request on the CPU; START is
 *	                         field 22 of /proc/PID/stat, so that a reused
 *	                         pid reads as the other process it is; US 0
 *	                         means no idle at all
 *
 * A CPU's file holds the strictest of its orig and its holds; the last
 * hold to go writes orig back and drops the line. It changes only under
 * an OFD write lock on a separate lock file, and is replaced by rename(),
 * so that a process killed halfway leaves the old state or the new one.
 * Every change under the lock first drops the holds of processes that are
 * gone and puts their CPUs right: that is how a SIGKILL is undone.
 *
 * The buffers are static because the exit and signal paths use them too,
 * always under the lock; each lock is taken on a new open file
 * description, so two threads of one process exclude each other as well.
 */
#define ST_MAGIC "nvq-qos-state 1\n"
#define ST_BUF_SIZE (160 * 1024)
#define ST_MAX_HOLDS 2048
#define ST_PATH_MAX (PATH_MAX_LEN + 64)
/* The exit and signal paths wait at most this many ms for the lock. */
#define ST_LOCK_TRIES 500

struct st_orig {
	int cpu;
	int32_t us;
	char text[SAVED_MAX];
};

struct st_hold {
	int cpu;
	int32_t us;
	pid_t pid;
	unsigned long long start;
};

static struct {
	unsigned int n_orig, n_hold;
	bool changed;
	struct st_orig orig[NVQ_QOS_MAX_CPUS];
	struct st_hold hold[ST_MAX_HOLDS];
} st;
static char st_buf[ST_BUF_SIZE];

static bool st_ready; /* st_setup() ran for this root and this process */
static int st_usable; /* atomic: the paths below can be used */
static char st_data[ST_PATH_MAX], st_tmp[ST_PATH_MAX], st_lockf[ST_PATH_MAX];
static char st_note[256]; /* no state file, or only a per-user one: why */
static pid_t self_pid;
static unsigned long long self_start;
static int st_holder; /* atomic: the thread taking or holding the lock */

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/*
 * Start time of @pid (clock ticks after boot) and whether it is a zombie.
 * -ENOENT or -ESRCH when there is no such process.
 */
static int proc_start(pid_t pid, unsigned long long *start, bool *zombie)
{
	char path[40], buf[1024];
	const char *p, *end = NULL;
	unsigned long long v;
	int fd, field, err;
	size_t len;
	ssize_t n;

	memcpy(path, "/proc/", 6);
	len = 6 + put_ull(path + 6, (unsigned long long)pid);
	memcpy(path + len, "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (n <= 0)
		return err ? err : -ENOENT;
	buf[n] = '\0';
	/* The command name may hold anything, ')' too: the last one ends it. */
	for (p = buf; *p; p++)
		if (*p == ')')
			end = p;
	if (!end || end[1] != ' ')
		return -EINVAL;
	p = end + 2;
	*zombie = *p == 'Z' || *p == 'X';
	/* p is at field 3, the state; the start time is field 22. */
	for (field = 3; field < 22; field++) {
		while (*p && *p != ' ')
			p++;
		if (*p)
			p++;
	}
	if (get_ull(&p, &v))
		return -EINVAL;
	*start = v;
	return 0;
}

static bool st_is_self(const struct st_hold *h)
{
	return h->pid == self_pid && h->start == self_start;
}

/* Whether the process that wrote @h still runs (as the same process). */
static bool hold_alive(const struct st_hold *h)
{
	unsigned long long start;
	bool zombie;
	int err;

	if (st_is_self(h))
		return true;
	if (h->pid <= 0 || (kill(h->pid, 0) && errno == ESRCH))
		return false;
	err = proc_start(h->pid, &start, &zombie);
	if (err == -ENOENT || err == -ESRCH)
		return false;
	/* Cannot tell (hidepid=, an odd /proc): leave its limit alone. */
	if (err)
		return true;
	return !zombie && start == h->start;
}

/*
 * Take the state lock: an fd for st_unlock(), or a negative errno.
 * @bounded (exit and signal paths): give up at once when this thread is
 * the one holding it, and after ST_LOCK_TRIES ms otherwise.
 */
static int st_lock(bool bounded)
{
	static const struct timespec ms = { 0, 1000000 };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	pid_t tid = my_tid();
	int fd, i, err;

	if (bounded && __atomic_load_n(&st_holder, __ATOMIC_SEQ_CST) == tid)
		return -EDEADLK;
	fd = open(st_lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* From here a signal on this thread must not wait for the lock. */
	if (!bounded)
		__atomic_store_n(&st_holder, tid, __ATOMIC_SEQ_CST);
	for (i = 0;; i++) {
		if (!fcntl(fd, bounded ? F_OFD_SETLK : F_OFD_SETLKW, &fl))
			break;
		err = -errno;
		if (err == -EINTR)
			continue;
		if (!bounded || (err != -EAGAIN && err != -EACCES) ||
		    i >= ST_LOCK_TRIES) {
			if (!bounded)
				__atomic_store_n(&st_holder, 0,
						 __ATOMIC_SEQ_CST);
			close(fd);
			return err;
		}
		nanosleep(&ms, NULL);
	}
	__atomic_store_n(&st_holder, tid, __ATOMIC_SEQ_CST);
	return fd;
}

static void st_unlock(int fd)
{
	__atomic_store_n(&st_holder, 0, __ATOMIC_SEQ_CST);
	close(fd);
}

static int st_find_orig(int cpu)
{
	unsigned int i;

	for (i = 0; i < st.n_orig; i++)
		if (st.orig[i].cpu == cpu)
			return (int)i;
	return -1;
}

static int st_add_orig(int cpu, const char *text)
{
	struct st_orig *o;
	size_t len = strlen(text);
	int32_t us;

	if (st_find_orig(cpu) >= 0 || st.n_orig == NVQ_QOS_MAX_CPUS || !len ||
	    len >= SAVED_MAX || parse_file_value(text, &us))
		return -1;
	o = &st.orig[st.n_orig];
	o->cpu = cpu;
	o->us = us;
	memcpy(o->text, text, len + 1);
	st.changed = true;
	return (int)st.n_orig++;
}

static void st_del_orig(int i)
{
	st.orig[i] = st.orig[--st.n_orig];
	st.changed = true;
}

static int st_add_hold(int cpu, pid_t pid, unsigned long long start, int32_t us)
{
	struct st_hold *h;

	if (st.n_hold == ST_MAX_HOLDS)
		return -1;
	h = &st.hold[st.n_hold];
	h->cpu = cpu;
	h->pid = pid;
	h->start = start;
	h->us = us;
	st.changed = true;
	return (int)st.n_hold++;
}

static void st_del_hold(unsigned int i)
{
	st.hold[i] = st.hold[--st.n_hold];
	st.changed = true;
}

static int st_find_self_hold(int cpu)
{
	unsigned int i;

	for (i = 0; i < st.n_hold; i++)
		if (st.hold[i].cpu == cpu && st_is_self(&st.hold[i]))
			return (int)i;
	return -1;
}

/* The strictest hold on @cpu (this process's left out with @others_only). */
static int32_t st_strictest(int cpu, bool others_only)
{
	int32_t want = NVQ_QOS_NONE;
	unsigned int i;

	for (i = 0; i < st.n_hold; i++) {
		const struct st_hold *h = &st.hold[i];

		if (h->cpu == cpu && h->us < want &&
		    !(others_only && st_is_self(h)))
			want = h->us;
	}
	return want;
}

/* One line of the file; unknown or damaged ones are dropped. */
static void st_parse_line(const char *p)
{
	unsigned long long cpu, pid, start, us;

	if (!strncmp(p, "orig ", 5)) {
		p += 5;
		if (get_ull(&p, &cpu) || *p != ' ' || cpu >= NVQ_QOS_MAX_CPUS)
			return;
		st_add_orig((int)cpu, p + 1);
		return;
	}
	if (strncmp(p, "hold ", 5))
		return;
	p += 5;
	if (get_ull(&p, &cpu) || *p++ != ' ' || get_ull(&p, &pid) ||
	    *p++ != ' ' || get_ull(&p, &start) || *p++ != ' ' ||
	    get_ull(&p, &us) || *p || cpu >= NVQ_QOS_MAX_CPUS ||
	    pid > INT32_MAX || us > NVQ_QOS_LIMIT_MAX)
		return;
	st_add_hold((int)cpu, (pid_t)pid, start, (int32_t)us);
}

/* Read the state into st (empty if there is no file). Under the lock. */
static int st_load(void)
{
	char *line, *nl;
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	st.n_orig = st.n_hold = 0;
	st.changed = false;
	fd = open(st_data, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	while (len < sizeof(st_buf) - 1) {
		n = read(fd, st_buf + len, sizeof(st_buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err)
		return err;
	if (len == sizeof(st_buf) - 1)
		return -EFBIG;
	st_buf[len] = '\0';
	/* Another format: not ours to rewrite. */
	if (len && strncmp(st_buf, ST_MAGIC, strlen(ST_MAGIC)))
		return -EPROTO;
	for (line = st_buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		st_parse_line(line);
	}
	st.changed = false;
	return 0;
}

static size_t put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return n;
}

/* Write st back if it changed (no file at all when empty). Under the lock. */
static int st_save(void)
{
	size_t len = 0, done = 0;
	unsigned int i;
	ssize_t n;
	int fd, err = 0;

	if (!st.changed)
		return 0;
	if (!st.n_orig && !st.n_hold) {
		if (unlink(st_data) && errno != ENOENT)
			return -errno;
		st.changed = false;
		return 0;
	}
	/* At most ~26 bytes per orig and ~60 per hold: it always fits. */
	len += put_str(st_buf, ST_MAGIC);
	for (i = 0; i < st.n_orig; i++) {
		len += put_str(st_buf + len, "orig ");
		len += put_ull(st_buf + len,
			       (unsigned long long)st.orig[i].cpu);
		st_buf[len++] = ' ';
		len += put_str(st_buf + len, st.orig[i].text);
		st_buf[len++] = '\n';
	}
	for (i = 0; i < st.n_hold; i++) {
		const struct st_hold *h = &st.hold[i];

		len += put_str(st_buf + len, "hold ");
		len += put_ull(st_buf + len, (unsigned long long)h->cpu);
		st_buf[len++] = ' ';
		len += put_ull(st_buf + len, (unsigned long long)h->pid);
		st_buf[len++] = ' ';
		len += put_ull(st_buf + len, h->start);
		st_buf[len++] = ' ';
		len += put_ull(st_buf + len, (unsigned long long)h->us);
		st_buf[len++] = '\n';
	}
	fd = open(st_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len) {
		n = write(fd, st_buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(st_tmp, st_data))
		err = -errno;
	if (err)
		unlink(st_tmp);
	else
		st.changed = false;
	return err;
}

/*
 * Make @cpu's file (@path) say what the state wants: the strictest of its
 * orig and its holds, or orig itself, line dropped, when no hold is left.
 * A CPU without an orig line is left as it is. Async-signal-safe.
 */
static int st_apply(int cpu, const char *path)
{
	int32_t want = st_strictest(cpu, false);
	int i = st_find_orig(cpu), err;
	char buf[SAVED_MAX];
	const char *text;

	if (i < 0)
		return 0;
	text = value_text(want, st.orig[i].text, st.orig[i].us, buf);
	err = write_raw(path, text, strlen(text));
	/* Kept on failure: the next change under the lock tries again. */
	if (!err && want == NVQ_QOS_NONE)
		st_del_orig(i);
	return err;
}

static void file_path(int cpu, char *buf, size_t size)
{
	snprintf(buf, size,
		 "%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
		 root, cpu);
}

/*
 * Drop the holds of processes that are gone and put their CPUs right, and
 * any orig line that no hold needs. @seen, if given, hears of every hold
 * (dead or alive) first. Under the lock; returns the first failed write.
 */
static int st_prune(void (*seen)(const struct st_hold *h, bool alive,
				 void *arg),
		    void *arg)
{
	char path[PATH_MAX_LEN];
	unsigned int i;
	cpu_set_t fix;
	int cpu, err = 0, e;
	bool alive;

	CPU_ZERO(&fix);
	for (i = 0; i < st.n_hold;) {
		alive = hold_alive(&st.hold[i]);
		if (seen)
			seen(&st.hold[i], alive, arg);
		if (alive) {
			i++;
			continue;
		}
		CPU_SET(st.hold[i].cpu, &fix);
		st_del_hold(i);
	}
	for (i = 0; i < st.n_orig; i++)
		if (st_strictest(st.orig[i].cpu, false) == NVQ_QOS_NONE)
			CPU_SET(st.orig[i].cpu, &fix);
	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &fix))
			continue;
		file_path(cpu, path, sizeof(path));
		e = st_apply(cpu, path);
		if (e && !err)
			err = e;
	}
	return err;
}

/* Create @dir if needed and point the paths into it; 0 or -errno. */
static int st_try_dir(const char *dir, mode_t mode, const char *boot)
{
	int fd;

	if (mkdir(dir, mode) && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(st_lockf, sizeof(st_lockf), "%s/qos-%s.lock", dir,
			     boot) >= sizeof(st_lockf) ||
	    (size_t)snprintf(st_data, sizeof(st_data), "%s/qos-%s.state", dir,
			     boot) >= sizeof(st_data) ||
	    (size_t)snprintf(st_tmp, sizeof(st_tmp), "%s/qos-%s.state.tmp", dir,
			     boot) >= sizeof(st_tmp))
		return -ENAMETOOLONG;
	fd = open(st_lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	/* The data file is replaced by rename(): the directory must take it. */
	if (access(dir, W_OK))
		return -errno;
	return 0;
}

static void st_set_note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void st_set_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st_note, sizeof(st_note), fmt, ap);
	va_end(ap);
}

/*
 * Work out the state file once per sysfs root and per process: true if
 * there is one. /run/nvq for the real files; without permission there
 * $XDG_RUNTIME_DIR/nvq (then processes of other users do not see each
 * other's state, and st_note says so); inside a fake tree (tests) the
 * tree's own .nvq-state, so that a test never touches /run.
 */
static bool st_setup(void)
{
	char boot[64] = "", dir[ST_PATH_MAX];
	const char *xdg;
	bool zombie;
	int err, xerr;
	size_t i;

	/* A child of fork() is another process, atfork handler or not. */
	if (st_ready && self_pid == getpid())
		return __atomic_load_n(&st_usable, __ATOMIC_SEQ_CST);
	st_ready = true;
	st_note[0] = '\0';
	__atomic_store_n(&st_usable, 0, __ATOMIC_SEQ_CST);
	self_pid = getpid();
	err = proc_start(self_pid, &self_start, &zombie);
	if (err) {
		st_set_note("no QoS state file (cannot read /proc/self/stat: "
			    "%s): limits of a killed process are not restored",
			    strerror(-err));
		return false;
	}
	if (nvq_sysfs_read("/proc/sys/kernel/random/boot_id", boot,
			   sizeof(boot)) < 0)
		strcpy(boot, "unknown");
	for (i = 0; boot[i]; i++)
		if (!((boot[i] >= '0' && boot[i] <= '9') ||
		      (boot[i] >= 'a' && boot[i] <= 'f') || boot[i] == '-'))
			boot[i] = '_';
	if (root_overridden) {
		snprintf(dir, sizeof(dir), "%s/.nvq-state", root);
		err = st_try_dir(dir, 0755, boot);
		if (err) {
			st_set_note("no QoS state file (%s: %s): limits of a "
				    "killed process are not restored",
				    dir, strerror(-err));
			return false;
		}
	} else {
		err = st_try_dir("/run/nvq", 0755, boot);
		if (err) {
			xerr = -ENOENT;
			xdg = secure_getenv("XDG_RUNTIME_DIR");
			if (xdg && *xdg && strlen(xdg) < ROOT_MAX) {
				snprintf(dir, sizeof(dir), "%s/nvq", xdg);
				xerr = st_try_dir(dir, 0700, boot);
			}
			if (xerr) {
				st_set_note(
					"no QoS state file (/run/nvq: %s; "
					"$XDG_RUNTIME_DIR: %s): limits of a "
					"killed process are not restored",
					strerror(-err),
					xdg && *xdg ? strerror(-xerr) :
						      "not set");
				return false;
			}
			st_set_note("QoS state in %s, /run/nvq is not "
				    "writable (%s): limits a killed process "
				    "of another user left are not seen",
				    dir, strerror(-err));
		}
	}
	__atomic_store_n(&st_usable, 1, __ATOMIC_SEQ_CST);
	return true;
}

/* Lock and read the state: the fd, or a negative errno (not locked). */
static int st_begin(void)
{
	int fd, err;

	if (!st_setup())
		return -ENOENT;
	fd = st_lock(false);
	if (fd < 0)
		return fd;
	err = st_load();
	if (err) {
		st_unlock(fd);
		set_status("cannot use the QoS state %s: %s", st_data,
			   strerror(-err));
		return err;
	}
	return fd;
}

/* Save and unlock. A failed save loses crash safety, nothing else. */
static void st_end(int fd)
{
	int err = st_save();

	st_unlock(fd);
	if (err)
		set_status("cannot save the QoS state %s: %s", st_data,
			   strerror(-err));
}

/* ---- exit and signals ---- */

/*
 * Put every file this process changed back; also the last thing done at
 * exit and in the signal handler, hence only async-signal-safe calls and no
 * mutex: the state file's lock, taken with a bound, and the texts saved
 * in advance where it cannot be had. Files of another process (a fork()ed
 * child's inherited copies of its parent's) are left alone.
 */
static void restore_all(void)
{
	pid_t me = getpid();
	bool any = false, shared = false;
	struct cpu_file *f;
	unsigned int i;
	int fd = -1, h, cur;

	__atomic_store_n(&dying, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++) {
		f = __atomic_load_n(&files[i], __ATOMIC_ACQUIRE);
		if (!f || !__atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST) ||
		    f->owner != me)
			continue;
		any = true;
		if (__atomic_load_n(&f->shared, __ATOMIC_SEQ_CST))
			shared = true;
	}
	if (!any)
		return;
	if (shared && __atomic_load_n(&st_usable, __ATOMIC_SEQ_CST) &&
	    self_pid == me) {
		fd = st_lock(true);
		if (fd >= 0 && st_load()) {
			st_unlock(fd);
			fd = -1;
		}
	}
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++) {
		f = __atomic_load_n(&files[i], __ATOMIC_ACQUIRE);
		if (!f || !__atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST) ||
		    f->owner != me)
			continue;
		if (fd >= 0 && __atomic_load_n(&f->shared, __ATOMIC_SEQ_CST)) {
			while ((h = st_find_self_hold((int)i)) >= 0)
				st_del_hold((unsigned int)h);
			if (!st_apply((int)i, f->path)) {
				__atomic_store_n(&f->shared, 0,
						 __ATOMIC_SEQ_CST);
				__atomic_store_n(&f->dirty, 0,
						 __ATOMIC_SEQ_CST);
				continue;
			}
		}
		/*
		 * No lock (this thread holds it, or it is stuck): what the
		 * file held without us at our last change. The hold stays
		 * in the state and the next nvq process drops it.
		 */
		cur = __atomic_load_n(&f->cur, __ATOMIC_SEQ_CST);
		write_raw(f->path, f->saved[cur], f->saved_len[cur]);
		__atomic_store_n(&f->dirty, 0, __ATOMIC_SEQ_CST);
	}
	if (fd >= 0) {
		st_save();
		st_unlock(fd);
	}
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int idx = sig == SIGINT ? 0 : 1;
	int saved_errno = errno;
	struct sigaction *old = &old_act[idx];
	struct timespec ts;

	restore_all();
	if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL) {
		sigset_t set;

		/*
		 * The default action ends the process: hand the signal on as
		 * if nvq had never been there, so that the process dies of
		 * it, here and now. The signal is blocked in this handler
		 * (sa_mask), and waiting for the return to unblock it is
		 * not enough: ThreadSanitizer runs a handler late, from
		 * whatever intercepted call came next, and when that call
		 * was a pthread_sigmask() blocking the signal the mask it
		 * returns to still blocks it. So unblock it, then raise it.
		 */
		__atomic_store_n(&hooked[idx], 0, __ATOMIC_SEQ_CST);
		sigaction(sig, old, NULL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		/* Still here: another thread changed the disposition. */
		errno = saved_errno;
		return;
	}
	/*
	 * The application handles the signal. Its handler runs with the
	 * limits already put back, so that one that ends the process leaves
	 * nothing behind. If the process goes on, the next QoS call under
	 * the lock sees sig_released: the queues count as released (the
	 * statistics say so) and take their limits again at their next idle
	 * -> active transition.
	 */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__atomic_store_n(&sig_at_ns,
			 (uint64_t)ts.tv_sec * 1000000000ull +
				 (uint64_t)ts.tv_nsec,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&sig_released, 1, __ATOMIC_SEQ_CST);
	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler != SIG_IGN) {
		void (*fn)(int) = old->sa_handler;

		/* What the kernel would have done for the application. */
		if (old->sa_flags & SA_RESETHAND)
			old->sa_handler = SIG_DFL;
		fn(sig);
	}
	errno = saved_errno;
}

static bool is_ours(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_signal;
}

static void unhook_signals(void)
{
	static const int sigs[2] = { SIGINT, SIGTERM };
	struct sigaction cur;
	int i;

	for (i = 0; i < 2; i++) {
		if (!__atomic_load_n(&hooked[i], __ATOMIC_SEQ_CST))
			continue;
		if (sigaction(sigs[i], NULL, &cur))
			continue;
		/* Somebody installed their own since: leave theirs. */
		if (!is_ours(&cur))
			continue;
		sigaction(sigs[i], &old_act[i], NULL);
		__atomic_store_n(&hooked[i], 0, __ATOMIC_SEQ_CST);
	}
}

static void on_exit_hook(void)
{
	restore_all();
	/* A fork()ed child closed its copy already (nvq_qos_be_forked()). */
	if (dma_fd >= 0) {
		close(dma_fd);
		dma_fd = -1;
	}
	/* A dlclose()d library must not leave its handler behind. */
	unhook_signals();
}

/* Before the first write that would need undoing. */
static void install_hooks(void)
{
	static const int sigs[2] = { SIGINT, SIGTERM };
	struct sigaction act, old;
	int i;

	if (!hooks_atexit && !atexit(on_exit_hook))
		hooks_atexit = true;
	for (i = 0; i < 2; i++) {
		if (__atomic_load_n(&hooked[i], __ATOMIC_SEQ_CST))
			continue;
		if (sigaction(sigs[i], NULL, &old))
			continue;
		/* An ignored signal cannot end the process: nothing to do. */
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue;
		memset(&act, 0, sizeof(act));
		act.sa_sigaction = on_signal;
		sigfillset(&act.sa_mask);
		/*
		 * An application's handler keeps its own restart semantics
		 * (one that relies on EINTR must still see it).
		 */
		act.sa_flags = SA_SIGINFO;
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			act.sa_flags |= old.sa_flags & SA_RESTART;
		else
			act.sa_flags |= SA_RESTART;
		old_act[i] = old;
		if (!sigaction(sigs[i], &act, NULL))
			__atomic_store_n(&hooked[i], 1, __ATOMIC_SEQ_CST);
	}
}

static struct cpu_file *get_file(int cpu)
{
	struct cpu_file *f = files[cpu];

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->global_us = NVQ_QOS_NONE;
	f->saved_us = NVQ_QOS_NONE;
	__atomic_store_n(&files[cpu], f, __ATOMIC_RELEASE);
	return f;
}

/* The global request is the strictest of all CPUs' shares. */
static int dma_update(void)
{
	int32_t want = NVQ_QOS_NONE, v;
	unsigned int i;
	ssize_t n;

	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++)
		if (files[i] && files[i]->global_us < want)
			want = files[i]->global_us;
	if (want == NVQ_QOS_NONE) {
		/* Closing the device is what drops the request. */
		if (dma_fd >= 0)
			close(dma_fd);
		dma_fd = -1;
		dma_written = NVQ_QOS_NONE;
		return 0;
	}
	if (want == dma_written)
		return 0;
	if (dma_broken)
		return -EIO;
	if (dma_fd < 0) {
		install_hooks();
		dma_fd = open(dma_path, O_WRONLY | O_CLOEXEC);
		if (dma_fd < 0) {
			int err = -errno;

			dma_broken = true;
			set_status(NA "cannot open %s: %s%s" UNAFFECTED,
				   dma_path, strerror(-err), root_hint(err));
			return err;
		}
	}
	v = want;
	n = write(dma_fd, &v, sizeof(v));
	if (n != (ssize_t)sizeof(v)) {
		int err = n < 0 ? -errno : -EIO;

		dma_broken = true;
		set_status(NA "cannot write %s: %s" UNAFFECTED, dma_path,
			   strerror(-err));
		return err;
	}
	dma_written = want;
	return 0;
}

static int dma_set(struct cpu_file *f, int32_t value)
{
	f->global_us = value;
	return dma_update();
}

static void record(int cpu, int32_t value)
{
	struct nvq_qos_record *n;

	if (log_nr == log_cap) {
		unsigned int cap = log_cap ? log_cap * 2 : 64;

		n = realloc(log_recs, cap * sizeof(*n));
		if (!n)
			return;
		log_recs = n;
		log_cap = cap;
	}
	log_recs[log_nr].cpu = cpu;
	log_recs[log_nr].value = value;
	log_nr++;
}

static bool is_denial(int err)
{
	return err == -EACCES || err == -EPERM || err == -EROFS ||
	       err == -ENOENT;
}

static int file_failed(struct cpu_file *f, const char *what, int err)
{
	f->broken = true;
	set_status(NA "cannot %s %s: %s%s" UNAFFECTED, what, f->path,
		   strerror(-err), root_hint(err));
	return err;
}

/* Write the saved text back; the file is ours no more. */
static int file_restore(struct cpu_file *f)
{
	int cur = __atomic_load_n(&f->cur, __ATOMIC_SEQ_CST);
	int err;

	if (!__atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST))
		return 0;
	err = write_raw(f->path, f->saved[cur], f->saved_len[cur]);
	if (err) {
		/* Stay dirty: exit and the signal handler try again. */
		set_status("cannot restore %s to \"%s\": %s", f->path,
			   f->saved[cur], strerror(-err));
		return err;
	}
	__atomic_store_n(&f->dirty, 0, __ATOMIC_SEQ_CST);
	return 0;
}

static bool cpu_exists(int cpu)
{
	char path[PATH_MAX_LEN];

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d", root, cpu);
	return !access(path, F_OK);
}

static void forget(struct cpu_file *f)
{
	__atomic_store_n(&f->shared, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->dirty, 0, __ATOMIC_SEQ_CST);
	f->have_saved = false;
}

/* The CPU's file cannot be used (@what failed with @err): maybe the global
 * device can. */
static int file_unusable(int cpu, struct cpu_file *f, const char *what, int err,
			 int32_t value)
{
	bool had_status;
	int derr;

	if (kind != NVQ_QOS_BACKEND_SYSFS || !is_denial(err) || !dma_allowed())
		return file_failed(f, what, err);
	/* A CPU that does not exist must not turn into a global limit. */
	if (err == -ENOENT && !cpu_exists(cpu))
		return file_failed(f, what, err);
	/* No usable per-CPU file: the global request covers this CPU. */
	had_status = status[0];
	f->global = true;
	derr = dma_set(f, value);
	if (!derr)
		return 0;
	f->global = false;
	f->global_us = NVQ_QOS_NONE;
	dma_update();
	f->broken = true;
	if (!had_status) {
		/* One message that names both attempts. */
		status[0] = '\0';
		set_status(NA "cannot %s %s (%s) nor use %s (%s)%s" UNAFFECTED,
			   what, f->path, strerror(-err), dma_path,
			   strerror(-derr), root_hint(derr));
	}
	return err;
}

/* Without a state file: this process's memory is all there is. */
static int file_set_local(int cpu, struct cpu_file *f, int32_t value)
{
	bool was_dirty;
	char buf[SAVED_MAX];
	int32_t eff;
	int err;

	if (!f->have_saved) {
		err = nvq_sysfs_read(f->path, buf, sizeof(buf));
		if (err < 0)
			return file_unusable(cpu, f, "read", err, value);
		if (parse_file_value(buf, &f->saved_us)) {
			f->broken = true;
			set_status(NA "unexpected \"%s\" in %s", buf, f->path);
			return -EINVAL;
		}
		set_saved(f, buf);
		f->owner = getpid();
		f->have_saved = true;
	}
	eff = MIN(value, f->saved_us);
	if (eff == f->saved_us)
		return file_restore(f);

	install_hooks();
	format_file_value(eff, buf);
	was_dirty = __atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST);
	/* Dirty before the write: a signal in between restores a no-op. */
	__atomic_store_n(&f->dirty, 1, __ATOMIC_SEQ_CST);
	err = write_raw(f->path, buf, strlen(buf));
	if (err) {
		if (was_dirty)
			return file_failed(f, "write", err);
		forget(f);
		return file_unusable(cpu, f, "write", err, value);
	}
	/* Exit or a signal raced with the write: undo it ourselves. */
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
		file_restore(f);
		return -ECANCELED;
	}
	return 0;
}

/*
 * With the state file (locked and read, @fd): the original comes from the
 * state when another nvq process holds the CPU, the file gets the
 * strictest request of all of them, and the hold recorded here lets the
 * next process undo it should this one be killed.
 */
static int file_set_shared(int cpu, struct cpu_file *f, int32_t value, int fd)
{
	char buf[SAVED_MAX], bbuf[SAVED_MAX];
	const char *text, *base_text;
	int32_t base, eff, old_us = NVQ_QOS_NONE;
	bool new_orig = false, was_dirty;
	struct st_orig *o;
	int i, h, err;

	st_prune(NULL, NULL);
	i = st_find_orig(cpu);
	if (i < 0) {
		/*
		 * No live nvq process holds the CPU and the dead ones' are
		 * undone: what the file says now is the original.
		 */
		err = nvq_sysfs_read(f->path, buf, sizeof(buf));
		if (err < 0) {
			st_end(fd);
			return file_unusable(cpu, f, "read", err, value);
		}
		i = st_add_orig(cpu, buf);
		if (i < 0) {
			st_end(fd);
			f->broken = true;
			set_status(NA "unexpected \"%s\" in %s", buf, f->path);
			return -EINVAL;
		}
		new_orig = true;
	}
	o = &st.orig[i];
	base = MIN(o->us, st_strictest(cpu, true));
	h = st_find_self_hold(cpu);
	if (h < 0)
		h = st_add_hold(cpu, self_pid, self_start, value);
	if (h < 0) {
		/* The state is full: this CPU goes without it. */
		if (new_orig)
			st_del_orig(i);
		st_end(fd);
		return file_set_local(cpu, f, value);
	}
	old_us = st.hold[h].us;
	st.hold[h].us = value;
	st.changed = true;

	base_text = value_text(base, o->text, o->us, bbuf);
	set_saved(f, base_text);
	f->saved_us = o->us;
	f->owner = getpid();
	f->have_saved = true;
	install_hooks();
	was_dirty = __atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST);
	/* Before the write: the exit and signal paths take the hold out. */
	__atomic_store_n(&f->shared, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->dirty, 1, __ATOMIC_SEQ_CST);
	eff = MIN(value, base);
	err = 0;
	if (eff != base || was_dirty) {
		/*
		 * The state first: killed between the two, this process
		 * leaves a hold the next one undoes, never a written value
		 * nobody knows the original of.
		 */
		err = st_save();
		if (err)
			set_status("cannot save the QoS state %s: %s", st_data,
				   strerror(-err));
		text = value_text(eff, o->text, o->us, buf);
		err = write_raw(f->path, text, strlen(text));
	}
	if (err) {
		if (was_dirty) {
			st.hold[h].us = old_us;
			st_end(fd);
			return file_failed(f, "write", err);
		}
		st_del_hold((unsigned int)h);
		if (new_orig)
			st_del_orig(st_find_orig(cpu));
		st_end(fd);
		forget(f);
		return file_unusable(cpu, f, "write", err, value);
	}
	/* Exit or a signal came meanwhile (and waited for the lock). */
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
		st_del_hold((unsigned int)h);
		st_apply(cpu, f->path);
		st_end(fd);
		forget(f);
		return -ECANCELED;
	}
	st_end(fd);
	return 0;
}

/* The last request of this process on the CPU went. */
static int file_unset(struct cpu_file *f, int cpu)
{
	int fd, h, err = 0;
	bool had;

	if (!f->have_saved)
		return 0;
	/*
	 * A child of fork() that got here without our atfork handler
	 * (vfork, a raw clone) has its parent's bookkeeping: not its own.
	 */
	if (f->owner != getpid()) {
		forget(f);
		return 0;
	}
	if (__atomic_load_n(&f->shared, __ATOMIC_SEQ_CST) &&
	    (fd = st_begin()) >= 0) {
		h = st_find_self_hold(cpu);
		had = h >= 0;
		if (had)
			st_del_hold((unsigned int)h);
		st_prune(NULL, NULL);
		if (had || __atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST))
			err = st_apply(cpu, f->path);
		st_end(fd);
		if (err) {
			/* Stay dirty: exit and the signal handler try again. */
			set_status("cannot restore %s: %s", f->path,
				   strerror(-err));
			return err;
		}
		forget(f);
		return 0;
	}
	err = file_restore(f);
	if (!err)
		forget(f);
	return err;
}

static int file_set(int cpu, struct cpu_file *f, int32_t value)
{
	int fd;

	if (f->global)
		return dma_set(f, value);
	if (value == NVQ_QOS_NONE)
		return file_unset(f, cpu);
	if (f->broken)
		return -EIO;
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST))
		return -ECANCELED;
	if (!f->have_saved)
		file_path(cpu, f->path, sizeof(f->path));
	/* The state file lock is taken under the QoS mutex, never inside. */
	if (!f->have_saved || __atomic_load_n(&f->shared, __ATOMIC_SEQ_CST)) {
		fd = st_begin();
		if (fd >= 0)
			return file_set_shared(cpu, f, value, fd);
	}
	return file_set_local(cpu, f, value);
}

int nvq_qos_be_set(int cpu, int32_t value)
{
	struct cpu_file *f;
	int err;

	if ((unsigned int)cpu >= NVQ_QOS_MAX_CPUS)
		return -EINVAL;
	read_env();
	f = get_file(cpu);
	if (!f) {
		set_status(NA "out of memory");
		return -ENOMEM;
	}
	switch ((int)kind) {
	case NVQ_QOS_BACKEND_DMA_LATENCY:
		return dma_set(f, value);
	case NVQ_QOS_BACKEND_RECORD:
		record(cpu, value);
		if (!root_overridden)
			return 0;
		break;
	case NVQ_QOS_BACKEND_SYSFS:
		break;
	}
	err = file_set(cpu, f, value);
	if (value == NVQ_QOS_NONE && f->global && f->global_us == NVQ_QOS_NONE)
		f->global = false; /* look at the file again next time */
	return err;
}

void nvq_qos_be_retry(void)
{
	unsigned int i;

	status[0] = '\0';
	dma_broken = false;
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++)
		if (files[i])
			files[i]->broken = false;
}

int nvq_qos_be_probe(void)
{
	char path[PATH_MAX_LEN];
	int fd, err = 0, derr;

	read_env();
	if (kind == NVQ_QOS_BACKEND_RECORD && !root_overridden)
		return 0;
	if (kind != NVQ_QOS_BACKEND_DMA_LATENCY) {
		/* Opening for writing checks permission and changes nothing. */
		file_path(0, path, sizeof(path));
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			/* So that nvq_qos_info() tells about the state file. */
			st_setup();
			return 0;
		}
		err = -errno;
		if (kind == NVQ_QOS_BACKEND_RECORD || !dma_allowed() ||
		    !is_denial(err)) {
			set_status(NA "cannot write %s: %s%s" UNAFFECTED, path,
				   strerror(-err), root_hint(err));
			return err;
		}
	}
	/* Opening the device would place a request: ask access() only. */
	if (!access(dma_path, W_OK))
		return 0;
	derr = -errno;
	if (err)
		set_status(NA
			   "cannot write %s (%s) nor use %s (%s)%s" UNAFFECTED,
			   path, strerror(-err), dma_path, strerror(-derr),
			   root_hint(derr));
	else
		set_status(NA "cannot write %s: %s%s" UNAFFECTED, dma_path,
			   strerror(-derr), root_hint(derr));
	return derr;
}

const char *nvq_qos_be_name(void)
{
	switch ((int)kind) {
	case NVQ_QOS_BACKEND_DMA_LATENCY:
		return "cpu_dma_latency";
	case NVQ_QOS_BACKEND_RECORD:
		return "record";
	case NVQ_QOS_BACKEND_SYSFS:
		break;
	}
	return "sysfs";
}

const char *nvq_qos_be_status(void)
{
	/* Where limits cannot be placed, crash safety is beside the point. */
	return status[0] ? status : st_note;
}

const char *nvq_qos_be_root(void)
{
	read_env();
	return root;
}

int nvq_qos_be_set_kind(enum nvq_qos_backend k)
{
	if (k != NVQ_QOS_BACKEND_SYSFS && k != NVQ_QOS_BACKEND_DMA_LATENCY &&
	    k != NVQ_QOS_BACKEND_RECORD)
		return nvq_err(-EINVAL, "unknown QoS backend %d", (int)k);
	kind = k;
	nvq_qos_be_retry();
	return 0;
}

int nvq_qos_be_set_root(const char *r)
{
	read_env();
	if (r && strlen(r) >= ROOT_MAX)
		return nvq_err(-ENAMETOOLONG, "sysfs root longer than %d bytes",
			       ROOT_MAX - 1);
	if (r) {
		strcpy(root, r);
		root_overridden = true;
	} else {
		strcpy(root, "/sys");
		root_overridden = false;
	}
	/* Another tree, another state file (the caller holds no limit). */
	st_ready = false;
	st_note[0] = '\0';
	nvq_qos_be_retry();
	return 0;
}

bool nvq_qos_be_take_signal(uint64_t *at_ns)
{
	if (!__atomic_exchange_n(&sig_released, 0, __ATOMIC_SEQ_CST))
		return false;
	*at_ns = __atomic_load_n(&sig_at_ns, __ATOMIC_SEQ_CST);
	/* The process goes on: limits may be placed again. */
	__atomic_store_n(&dying, 0, __ATOMIC_SEQ_CST);
	return true;
}

void nvq_qos_be_forked(void)
{
	struct cpu_file *f;
	unsigned int i;

	/*
	 * Every request in these tables is the parent's: the child
	 * neither restores nor releases them. Its copy of the
	 * cpu_dma_latency fd would keep the parent's request alive after
	 * the parent closed its own, so it goes now.
	 */
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++) {
		f = files[i];
		if (!f)
			continue;
		forget(f);
		f->global = false;
		f->global_us = NVQ_QOS_NONE;
	}
	if (dma_fd >= 0)
		close(dma_fd);
	dma_fd = -1;
	dma_written = NVQ_QOS_NONE;
	__atomic_store_n(&sig_released, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st_holder, 0, __ATOMIC_SEQ_CST);
	/* Another process: its own pid and start time in the state. */
	st_ready = false;
	/*
	 * Holding nothing, the child has nothing for our handlers to put
	 * back: its signals get the application's dispositions again, as
	 * without nvq, until it places a limit of its own (install_hooks()
	 * runs before each write). This matters beyond tidiness: in the
	 * child of a multithreaded process ThreadSanitizer turns its
	 * interceptors off for good, and they are what runs a handler for a
	 * signal it caught. A handler would never run, and the child would
	 * not die of SIGTERM at all; with SIG_DFL back the kernel ends it.
	 */
	unhook_signals();
}

struct seen_ctx {
	struct nvq_qos_holder *h;
	unsigned int max, n;
};

static void seen_one(const struct st_hold *h, bool alive, void *arg)
{
	struct seen_ctx *c = arg;

	if (c->n < c->max) {
		struct nvq_qos_holder *e = &c->h[c->n];

		memset(e, 0, sizeof(*e));
		e->cpu = h->cpu;
		e->pid = h->pid;
		e->limit_us = h->us;
		e->live = alive;
	}
	c->n++;
}

int nvq_qos_be_restore_dead(struct nvq_qos_holder *holders, unsigned int max,
			    char *state_path, size_t path_len)
{
	struct seen_ctx c = { holders, max, 0 };
	char path[PATH_MAX_LEN];
	unsigned int i;
	int fd, err, serr;

	read_env();
	if (state_path && path_len)
		state_path[0] = '\0';
	if (!st_setup())
		return nvq_err(-ENOENT, "%s", st_note);
	if (state_path && path_len)
		snprintf(state_path, path_len, "%s", st_data);
	fd = st_lock(false);
	if (fd < 0)
		return nvq_err(fd, "cannot lock %s: %s", st_lockf,
			       strerror(-fd));
	err = st_load();
	if (err) {
		st_unlock(fd);
		return nvq_err(err, "cannot read %s: %s", st_data,
			       strerror(-err));
	}
	err = st_prune(seen_one, &c);
	serr = st_save();
	st_unlock(fd);
	if (err)
		return nvq_err(err,
			       "cannot restore a pm_qos_resume_latency_us "
			       "file under %s: %s",
			       root, strerror(-err));
	if (serr)
		return nvq_err(serr, "cannot save %s: %s", st_data,
			       strerror(-serr));
	for (i = 0; i < c.n && i < max; i++) {
		file_path(holders[i].cpu, path, sizeof(path));
		if (nvq_sysfs_read(path, holders[i].value,
				   sizeof(holders[i].value)) < 0)
			holders[i].value[0] = '\0';
	}
	return (int)c.n;
}

int nvq_qos_be_set_dma_path(const char *path)
{
	read_env();
	if (path && strlen(path) >= PATH_MAX_LEN)
		return nvq_err(-ENAMETOOLONG, "path longer than %d bytes",
			       PATH_MAX_LEN - 1);
	if (path) {
		strcpy(dma_path, path);
		dma_overridden = true;
	} else {
		strcpy(dma_path, "/dev/cpu_dma_latency");
		dma_overridden = false;
	}
	nvq_qos_be_retry();
	return 0;
}

unsigned int nvq_qos_record_count(void)
{
	unsigned int n;

	nvq_qos_lock();
	n = log_nr;
	nvq_qos_unlock();
	return n;
}

int nvq_qos_record_get(unsigned int i, struct nvq_qos_record *rec)
{
	int err = -ENOENT;

	nvq_qos_lock();
	if (i < log_nr) {
		*rec = log_recs[i];
		err = 0;
	}
	nvq_qos_unlock();
	return err;
}

int32_t nvq_qos_record_current(int cpu)
{
	int32_t v = NVQ_QOS_NONE;
	unsigned int i;

	nvq_qos_lock();
	for (i = log_nr; i-- > 0;) {
		if (log_recs[i].cpu == cpu) {
			v = log_recs[i].value;
			break;
		}
	}
	nvq_qos_unlock();
	return v;
}

void nvq_qos_record_reset(void)
{
	nvq_qos_lock();
	free(log_recs);
	log_recs = NULL;
	log_nr = log_cap = 0;
	nvq_qos_unlock();
}

bool nvq_qos_dma_latency_open(void)
{
	bool open;

	nvq_qos_lock();
	open = dma_fd >= 0;
	nvq_qos_unlock();
	return open;
}
