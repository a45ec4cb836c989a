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
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	char saved[SAVED_MAX]; /* file text before nvq wrote, no newline */
	size_t saved_len;
	int32_t saved_us; /* the same as a value (NVQ_QOS_NONE for "0") */
	pid_t owner; /* process that saved it: only it restores */
	int dirty; /* atomic: the file holds our value, not saved */
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

/* Set once exit or a fatal signal started: any later write is undone. */
static int dying;

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

/* Parse a pm_qos_resume_latency_us text into a value; -EINVAL if odd. */
static int parse_file_value(const char *s, int32_t *us)
{
	char *end;
	long v;

	if (!strcmp(s, "n/a")) {
		*us = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v >= NVQ_QOS_NONE)
		return -EINVAL;
	*us = v ? (int32_t)v : NVQ_QOS_NONE;
	return 0;
}

static void format_file_value(int32_t us, char *buf, size_t size)
{
	if (us == 0)
		snprintf(buf, size, "n/a");
	else
		snprintf(buf, size, "%d", us);
}

/*
 * Put every file this process changed back; also the last thing done at
 * exit and in the signal handler, hence only async-signal-safe calls and no
 * lock. Later writes by other threads see @dying and undo themselves.
 */
static void restore_all(void)
{
	pid_t me = getpid();
	struct cpu_file *f;
	unsigned int i;

	__atomic_store_n(&dying, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++) {
		f = __atomic_load_n(&files[i], __ATOMIC_ACQUIRE);
		if (!f || !__atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST))
			continue;
		if (f->owner != me)
			continue;
		write_raw(f->path, f->saved, f->saved_len);
		__atomic_store_n(&f->dirty, 0, __ATOMIC_SEQ_CST);
	}
}

static void on_signal(int sig)
{
	int idx = sig == SIGINT ? 0 : 1;
	int saved_errno = errno;

	restore_all();
	/*
	 * Hand the signal on as if nvq had never been there: the previous
	 * disposition gets it as soon as this handler returns (the signal is
	 * blocked until then). A default action ends the process with the
	 * right status; a handler that lets the process go on gets a process
	 * whose limits are gone, never a process that left them behind.
	 */
	__atomic_store_n(&hooked[idx], 0, __ATOMIC_SEQ_CST);
	sigaction(sig, &old_act[idx], NULL);
	raise(sig);
	errno = saved_errno;
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
		if (cur.sa_handler != on_signal)
			continue;
		sigaction(sigs[i], &old_act[i], NULL);
		__atomic_store_n(&hooked[i], 0, __ATOMIC_SEQ_CST);
	}
}

static void on_exit_hook(void)
{
	restore_all();
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
		act.sa_handler = on_signal;
		sigfillset(&act.sa_mask);
		act.sa_flags = SA_RESTART;
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

static void file_path(int cpu, char *buf, size_t size)
{
	snprintf(buf, size,
		 "%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
		 root, cpu);
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
	int err;

	if (!__atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST))
		return 0;
	err = write_raw(f->path, f->saved, f->saved_len);
	if (err) {
		/* Stay dirty: exit and the signal handler try again. */
		set_status("cannot restore %s to \"%s\": %s", f->path, f->saved,
			   strerror(-err));
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

static int file_set(int cpu, struct cpu_file *f, int32_t value)
{
	const char *what = "read";
	bool was_dirty, had_status;
	char buf[SAVED_MAX];
	int32_t eff;
	int err, derr;

	if (f->global)
		return dma_set(f, value);
	if (value == NVQ_QOS_NONE) {
		if (!f->have_saved)
			return 0;
		err = file_restore(f);
		if (!err)
			f->have_saved = false;
		return err;
	}
	if (f->broken)
		return -EIO;
	if (!f->have_saved) {
		file_path(cpu, f->path, sizeof(f->path));
		err = nvq_sysfs_read(f->path, buf, sizeof(buf));
		if (err < 0)
			goto no_file;
		if (parse_file_value(buf, &f->saved_us)) {
			f->broken = true;
			set_status(NA "unexpected \"%s\" in %s", buf, f->path);
			return -EINVAL;
		}
		memcpy(f->saved, buf, sizeof(buf));
		f->saved_len = strlen(buf);
		f->owner = getpid();
		f->have_saved = true;
	}
	eff = MIN(value, f->saved_us);
	if (eff == f->saved_us)
		return file_restore(f);

	install_hooks();
	format_file_value(eff, buf, sizeof(buf));
	was_dirty = __atomic_load_n(&f->dirty, __ATOMIC_SEQ_CST);
	/* Dirty before the write: a signal in between restores a no-op. */
	__atomic_store_n(&f->dirty, 1, __ATOMIC_SEQ_CST);
	err = write_raw(f->path, buf, strlen(buf));
	if (err) {
		what = "write";
		if (was_dirty)
			return file_failed(f, what, err);
		__atomic_store_n(&f->dirty, 0, __ATOMIC_SEQ_CST);
		f->have_saved = false;
		goto no_file;
	}
	/* Exit or a signal raced with the write: undo it ourselves. */
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
		file_restore(f);
		return -ECANCELED;
	}
	return 0;

no_file:
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
	return status;
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
	nvq_qos_be_retry();
	return 0;
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
