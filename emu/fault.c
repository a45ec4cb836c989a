// SPDX-License-Identifier: MIT
/*
 * Fault injection: the emulated controller misbehaving on purpose, the way
 * real controllers and links do, so that a driver's failure path can be
 * tested (docs/faults.md has the syntax and what each fault imitates).
 *
 * Faults are armed from the parameter string (fault=, at creation) or by a
 * test through nvq_emu_fault_add() while the device runs. Armed faults sit
 * in a table under a mutex shared by the host threads that add and clear
 * them and the device thread that matches commands against them. The
 * device takes that mutex only while c->fault_armed is set: with nothing
 * armed, emu_exec() pays one predictable branch per command and nothing
 * else here runs.
 *
 * A fault that fires on a command decides how the command executes and
 * completes; several firing on the same command combine (the strongest
 * wins where they cannot: vanish, then cfs, then drop). Completions held
 * back (delay, a duplicate with no room yet) wait in a device-thread list
 * that the main loop drains on time; they never use the CQ's holding
 * ring, whose size allows one entry per command, so an injected extra
 * entry can never overrun it.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* A held completion that cannot be posted (CQ full) retries this late. */
#define RETRY_NS 100000ull
/* Held completions kept at most; beyond, a late one is posted at once. */
#define MAX_DELAYED 65536u
/* Longest fault string. */
#define SPEC_MAX 256

static const char *const kind_names[NVQ_EMU_FAULT_NR] = {
	[NVQ_EMU_FAULT_DROP_CQE] = "drop-cqe",
	[NVQ_EMU_FAULT_DELAY] = "delay",
	[NVQ_EMU_FAULT_DUP_CQE] = "dup-cqe",
	[NVQ_EMU_FAULT_BAD_CID] = "bad-cid",
	[NVQ_EMU_FAULT_BAD_SQID] = "bad-sqid",
	[NVQ_EMU_FAULT_STATUS] = "status",
	[NVQ_EMU_FAULT_CFS] = "cfs",
	[NVQ_EMU_FAULT_NO_READY] = "no-ready",
	[NVQ_EMU_FAULT_CORRUPT] = "corrupt",
	[NVQ_EMU_FAULT_NO_IRQ] = "no-irq",
	[NVQ_EMU_FAULT_VANISH] = "vanish",
};

/* An armed fault. */
struct emu_fault {
	struct nvq_emu_fault f;
	uint64_t seen; /* matching commands so far */
	uint64_t left; /* fires left, NVQ_EMU_FAULT_FOREVER */
	uint64_t rng; /* its own generator: one fault's hits do not depend
			 on what else is armed */
	uint64_t thr; /* prob: hit when a draw is below (2^64 * prob) */
	bool always; /* prob = 1 */
};

/* A completion held back by the device thread. */
struct emu_delayed {
	struct emu_sq *sq;
	struct nvq_cqe e;
	uint64_t due;
	bool mute; /* no-irq fired on it too */
	bool dup; /* the extra copy of dup-cqe (counted when posted) */
};

struct emu_faults {
	pthread_mutex_t lock; /* armed[], n, added */
	struct emu_fault armed[NVQ_EMU_MAX_FAULTS];
	uint32_t n;
	uint64_t added; /* faults ever armed: default seeds */
	uint64_t seed; /* fault_seed= */
	uint64_t counts[NVQ_EMU_FAULT_NR]; /* atomic */
	/* Device thread only; c->nr_delayed entries. */
	struct emu_delayed *dl;
	uint32_t dl_cap;
	uint64_t dl_next; /* earliest due */
};

/* What the faults that fired on one command ask for. */
struct effects {
	uint32_t mask; /* 1 << kind */
	uint64_t delay_ns;
	uint16_t status;
	int32_t cid, sqid;
	uint32_t bytes;
	uint64_t pos_seed; /* corrupt: where */
};

#define BIT(k) (1u << (k))

/* ------------------------------------------------------------------ */
/* Names, parsing and validation                                       */
/* ------------------------------------------------------------------ */

const char *nvq_emu_fault_name(enum nvq_emu_fault_kind kind)
{
	if ((unsigned int)kind >= NVQ_EMU_FAULT_NR)
		return NULL;
	return kind_names[kind];
}

static __attribute__((format(printf, 2, 3))) int bad(const char *what,
						     const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return emu_err(-EINVAL, "emu fault '%s': %s", what, msg);
}

/* A whole string as an unsigned number (decimal or 0x hex) <= @max. */
static bool num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end && *v <= max;
}

/* "0.01", "1e-3" or "2.5%": 0 < p <= 1. */
static bool parse_prob(const char *s, double *p)
{
	size_t n = strlen(s);
	char buf[64], *end;
	bool pct = n && s[n - 1] == '%';
	double v;

	if (!n || n >= sizeof(buf) || !((*s >= '0' && *s <= '9') || *s == '.'))
		return false;
	memcpy(buf, s, n + 1);
	if (pct)
		buf[n - 1] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || end == buf)
		return false;
	if (pct)
		v /= 100;
	if (!(v > 0 && v <= 1))
		return false;
	*p = v;
	return true;
}

static int parse_on(const char *what, const char *v, struct nvq_emu_fault *f)
{
	static const struct {
		const char *name;
		enum nvq_emu_fault_on on;
	} names[] = {
		{ "any", NVQ_EMU_ON_ANY },     { "admin", NVQ_EMU_ON_ADMIN },
		{ "io", NVQ_EMU_ON_IO },       { "read", NVQ_EMU_ON_READ },
		{ "write", NVQ_EMU_ON_WRITE },
	};
	unsigned int i;
	uint64_t opc;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(v, names[i].name)) {
			f->on = names[i].on;
			return 0;
		}
	}
	if (!strncmp(v, "admin:", 6) && num(v + 6, 255, &opc))
		f->on = NVQ_EMU_ON_ADMIN_OPC;
	else if (!strncmp(v, "io:", 3) && num(v + 3, 255, &opc))
		f->on = NVQ_EMU_ON_IO_OPC;
	else
		return bad(what,
			   "on='%s' is not any, admin, io, read, write, "
			   "admin:OPCODE or io:OPCODE",
			   v);
	f->opcode = (uint8_t)opc;
	return 0;
}

/* The argument after "KIND:" (@arg NULL when there is none). */
static int parse_arg(const char *what, char *arg, struct nvq_emu_fault *f)
{
	uint64_t v, sct, sc;
	char *slash;
	int ret;

	switch (f->kind) {
	case NVQ_EMU_FAULT_DELAY:
		if (!arg)
			return bad(what, "delay needs a time: delay:2s");
		ret = emu_param_duration("fault", arg, &f->delay_ns);
		if (!ret && !f->delay_ns)
			ret = bad(what, "a delay of 0 is no fault");
		return ret;
	case NVQ_EMU_FAULT_STATUS:
		slash = arg ? strchr(arg, '/') : NULL;
		if (!slash)
			return bad(what, "status needs SCT/SC: status:2/0x81");
		*slash = '\0';
		if (!num(arg, 7, &sct) || !num(slash + 1, 255, &sc))
			return bad(what,
				   "status '%s/%s': SCT is 0..7 and SC 0..255",
				   arg, slash + 1);
		if (!sct && !sc)
			return bad(what, "status 0/0 is success, not a fault");
		f->status = NVQ_STATUS_MAKE(sct, sc);
		return 0;
	case NVQ_EMU_FAULT_BAD_CID:
	case NVQ_EMU_FAULT_BAD_SQID:
		if (!arg)
			return 0;
		if (!num(arg, 65535, &v))
			return bad(what, "'%s' is not an id 0..65535", arg);
		f->id = (int32_t)v;
		return 0;
	case NVQ_EMU_FAULT_CORRUPT:
		if (!arg)
			return 0;
		if (!num(arg, 1u << 20, &v) || !v)
			return bad(what, "'%s' bytes: 1..1048576", arg);
		f->bytes = (uint32_t)v;
		return 0;
	default:
		if (arg)
			return bad(what, "%s takes no ':' argument",
				   kind_names[f->kind]);
		return 0;
	}
}

enum opt_id { O_ON, O_QID, O_NTH, O_PROB, O_COUNT, O_SEED, O_DNR, O_NOW, O_NR };

static const char *const opt_names[O_NR] = {
	[O_ON] = "on",	   [O_QID] = "qid",	[O_NTH] = "nth",
	[O_PROB] = "prob", [O_COUNT] = "count", [O_SEED] = "seed",
	[O_DNR] = "dnr",   [O_NOW] = "now",
};

static int parse_opt(const char *what, char *opt, struct nvq_emu_fault *f,
		     bool *seen)
{
	char *eq = strchr(opt, '=');
	const char *v = eq ? eq + 1 : NULL;
	uint64_t n;
	int o;

	if (eq)
		*eq = '\0';
	for (o = 0; o < O_NR; o++)
		if (!strcmp(opt, opt_names[o]))
			break;
	if (o == O_NR)
		return bad(what,
			   "unknown option '%s' (on qid nth prob count seed "
			   "dnr now)",
			   opt);
	if (seen[o])
		return bad(what, "option '%s' given twice", opt);
	seen[o] = true;
	if (o == O_NOW) {
		if (v)
			return bad(what, "'now' takes no value");
		f->now = true;
		return 0;
	}
	if (!v || !*v)
		return bad(what, "option '%s' needs a value: %s=...", opt, opt);
	switch (o) {
	case O_ON:
		return parse_on(what, v, f);
	case O_QID:
		if (!num(v, 65535, &n))
			return bad(what, "qid='%s' is not 0..65535", v);
		f->has_qid = true;
		f->qid = (uint16_t)n;
		return 0;
	case O_NTH:
		if (!num(v, UINT64_MAX - 1, &n) || !n)
			return bad(what, "nth='%s' is not a number >= 1", v);
		f->nth = n;
		return 0;
	case O_PROB:
		if (!parse_prob(v, &f->prob))
			return bad(what,
				   "prob='%s' is not a probability in (0, 1] "
				   "(0.01 or 1%%)",
				   v);
		return 0;
	case O_COUNT:
		if (!strcmp(v, "inf")) {
			f->count = NVQ_EMU_FAULT_FOREVER;
			return 0;
		}
		if (!num(v, UINT64_MAX - 1, &n) || !n)
			return bad(what, "count='%s' is not >= 1 or inf", v);
		f->count = n;
		return 0;
	case O_SEED:
		if (!num(v, UINT64_MAX, &f->seed))
			return bad(what, "seed='%s' is not a number", v);
		f->seeded = true;
		return 0;
	case O_DNR:
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bad(what, "dnr='%s' is not 0 or 1", v);
		if (f->kind != NVQ_EMU_FAULT_STATUS)
			return bad(what, "dnr= applies to status only");
		if (*v == '1')
			f->status |= NVQ_STATUS_DNR_BIT;
		return 0;
	}
	return -EINVAL;
}

/* Consistency of @f, from either form; @what names it in messages. */
static int check_fault(const char *what, const struct nvq_emu_fault *f)
{
	enum nvq_emu_fault_kind k = f->kind;
	bool cmd = !f->now && k != NVQ_EMU_FAULT_NO_READY;

	if ((unsigned int)k >= NVQ_EMU_FAULT_NR)
		return bad(what, "no fault kind %u", (unsigned int)k);
	if ((unsigned int)f->on > NVQ_EMU_ON_IO_OPC)
		return bad(what, "no command class %u", (unsigned int)f->on);
	if (f->prob != 0 && !(f->prob > 0 && f->prob <= 1))
		return bad(what, "prob must be in (0, 1]");
	if (f->prob != 0 && f->nth)
		return bad(what, "nth and prob exclude each other");
	if (f->now && k != NVQ_EMU_FAULT_CFS && k != NVQ_EMU_FAULT_VANISH)
		return bad(what, "'now' applies to cfs and vanish only");
	if (!cmd &&
	    (f->on != NVQ_EMU_ON_ANY || f->has_qid || f->nth || f->prob != 0))
		return bad(what,
			   "%s does not count commands: on, qid, nth "
			   "and prob do not apply",
			   f->now ? "a 'now' fault" : kind_names[k]);
	if (k == NVQ_EMU_FAULT_VANISH && f->count > 1)
		return bad(what, "a device vanishes once: no count");
	if (k == NVQ_EMU_FAULT_DELAY &&
	    (!f->delay_ns || f->delay_ns > 3600ull * 1000000000))
		return bad(what, "delay must be 1 ns .. 1 hour");
	if (k == NVQ_EMU_FAULT_STATUS &&
	    (!(f->status & NVQ_STATUS_CODE_MASK) ||
	     (f->status & ~(NVQ_STATUS_CODE_MASK | NVQ_STATUS_DNR_BIT))))
		return bad(what, "status must be a non-zero SCT/SC, with DNR "
				 "or without");
	if ((k == NVQ_EMU_FAULT_BAD_CID || k == NVQ_EMU_FAULT_BAD_SQID) &&
	    (f->id < -1 || f->id > 65535))
		return bad(what, "id must be -1 (default) or 0..65535");
	if (k == NVQ_EMU_FAULT_CORRUPT) {
		if (f->bytes > 1u << 20)
			return bad(what, "corrupt: at most 1048576 bytes");
		if (f->on != NVQ_EMU_ON_ANY && f->on != NVQ_EMU_ON_IO &&
		    f->on != NVQ_EMU_ON_READ &&
		    !(f->on == NVQ_EMU_ON_IO_OPC && f->opcode == nvq_cmd_read))
			return bad(what, "corrupt changes what reads return: "
					 "on=read (the default), io or any");
	}
	return 0;
}

int nvq_emu_fault_parse(const char *spec, struct nvq_emu_fault *f)
{
	bool seen[O_NR] = { false };
	char buf[SPEC_MAX], *opt, *next, *colon;
	const char *what = spec ? spec : "";
	unsigned int k;
	int ret;

	memset(f, 0, sizeof(*f));
	f->id = -1;
	if (!spec || !*spec)
		return emu_err(
			-EINVAL,
			"emu fault: empty (KIND[:ARG][@OPTION=VALUE]...)");
	if (strlen(spec) >= sizeof(buf))
		return emu_err(-EINVAL, "emu fault: longer than %d characters",
			       SPEC_MAX - 1);
	strcpy(buf, spec);
	next = strchr(buf, '@');
	if (next)
		*next++ = '\0';
	colon = strchr(buf, ':');
	if (colon)
		*colon++ = '\0';
	for (k = 0; k < NVQ_EMU_FAULT_NR; k++)
		if (!strcmp(buf, kind_names[k]))
			break;
	if (k == NVQ_EMU_FAULT_NR)
		return bad(
			what,
			"unknown fault '%s' (drop-cqe delay dup-cqe bad-cid "
			"bad-sqid status cfs no-ready corrupt no-irq vanish)",
			buf);
	f->kind = (enum nvq_emu_fault_kind)k;
	if (colon && !*colon)
		return bad(what, "empty argument after ':'");
	ret = parse_arg(what, colon, f);
	if (ret)
		return ret;
	while (next) {
		opt = next;
		next = strchr(opt, '@');
		if (next)
			*next++ = '\0';
		if (!*opt)
			return bad(what, "empty option (a stray '@')");
		ret = parse_opt(what, opt, f, seen);
		if (ret)
			return ret;
	}
	if (f->kind == NVQ_EMU_FAULT_CORRUPT && f->on == NVQ_EMU_ON_ANY)
		f->on = NVQ_EMU_ON_READ;
	return check_fault(what, f);
}

int emu_fault_param(struct nvq_emu_params *p, const char *v)
{
	int ret;

	if (p->nr_faults >= NVQ_EMU_MAX_PARAM_FAULTS)
		return emu_err(-EINVAL,
			       "emu parameter 'fault': more than %d faults",
			       NVQ_EMU_MAX_PARAM_FAULTS);
	ret = nvq_emu_fault_parse(v, &p->faults[p->nr_faults]);
	if (ret)
		return ret;
	p->nr_faults++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Arming                                                              */
/* ------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void count(struct nvq_emu *c, enum nvq_emu_fault_kind k)
{
	__atomic_fetch_add(&c->faults->counts[k], 1, __ATOMIC_RELAXED);
}

static void publish_armed(struct nvq_emu *c)
{
	__atomic_store_n(&c->fault_armed, c->faults->n ? 1u : 0u,
			 __ATOMIC_RELEASE);
}

/* Under the lock: @f validated, room checked. */
static void arm(struct nvq_emu *c, const struct nvq_emu_fault *f)
{
	struct emu_faults *F = c->faults;
	struct emu_fault *a = &F->armed[F->n++];
	uint64_t s;

	memset(a, 0, sizeof(*a));
	a->f = *f;
	if (!a->f.nth)
		a->f.nth = 1;
	a->left = f->count     ? f->count :
		  f->prob != 0 ? NVQ_EMU_FAULT_FOREVER :
				 1;
	s = f->seeded ? f->seed : F->seed + F->added * 0x632be59bd9b4e019ull;
	F->added++;
	a->rng = splitmix(&s);
	if (f->prob >= 1)
		a->always = true;
	else if (f->prob > 0)
		a->thr = (uint64_t)ldexp(f->prob, 64);
	if (f->now) {
		/* A removed device stops answering at once, whatever the
		 * device thread is doing; it catches up in emu_fault_now(). */
		if (f->kind == NVQ_EMU_FAULT_VANISH)
			__atomic_store_n(&c->gone, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&c->fault_kick, 1, __ATOMIC_SEQ_CST);
	}
}

static void disarm(struct emu_faults *F, uint32_t i)
{
	memmove(&F->armed[i], &F->armed[i + 1],
		(F->n - i - 1) * sizeof(F->armed[0]));
	F->n--;
}

int emu_fault_init(struct nvq_emu *c, const struct nvq_emu_params *p)
{
	struct emu_faults *F = calloc(1, sizeof(*F));
	uint32_t i;
	int ret;

	if (!F)
		return emu_err(-ENOMEM, "emu: out of memory");
	pthread_mutex_init(&F->lock, NULL);
	F->seed = p->fault_seed;
	c->faults = F;
	if (p->nr_faults > NVQ_EMU_MAX_PARAM_FAULTS)
		return emu_err(-EINVAL, "emu parameter 'fault': more than %d",
			       NVQ_EMU_MAX_PARAM_FAULTS);
	for (i = 0; i < p->nr_faults; i++) {
		ret = check_fault("fault=", &p->faults[i]);
		if (ret)
			return ret;
		arm(c, &p->faults[i]);
	}
	publish_armed(c);
	return 0;
}

void emu_fault_fini(struct nvq_emu *c)
{
	struct emu_faults *F = c->faults;

	if (!F)
		return;
	pthread_mutex_destroy(&F->lock);
	free(F->dl);
	free(F);
	c->faults = NULL;
	c->nr_delayed = 0;
}

int nvq_emu_fault_add(struct nvq_emu *c, const struct nvq_emu_fault *f)
{
	struct emu_faults *F = c->faults;
	const char *name = nvq_emu_fault_name(f->kind);
	int ret = check_fault(name ? name : "?", f);

	if (ret)
		return ret;
	pthread_mutex_lock(&F->lock);
	if (F->n == NVQ_EMU_MAX_FAULTS) {
		pthread_mutex_unlock(&F->lock);
		return emu_err(-ENOSPC, "emu fault: %d faults armed already",
			       NVQ_EMU_MAX_FAULTS);
	}
	arm(c, f);
	publish_armed(c);
	pthread_mutex_unlock(&F->lock);
	if (f->now)
		emu_kick(c);
	return 0;
}

int nvq_emu_fault_inject(struct nvq_emu *c, const char *spec)
{
	struct nvq_emu_fault f;
	int ret = nvq_emu_fault_parse(spec, &f);

	return ret ? ret : nvq_emu_fault_add(c, &f);
}

void nvq_emu_fault_clear(struct nvq_emu *c)
{
	struct emu_faults *F = c->faults;

	pthread_mutex_lock(&F->lock);
	F->n = 0;
	publish_armed(c);
	pthread_mutex_unlock(&F->lock);
}

uint64_t nvq_emu_fault_count(struct nvq_emu *c, enum nvq_emu_fault_kind kind)
{
	if ((unsigned int)kind >= NVQ_EMU_FAULT_NR)
		return 0;
	return __atomic_load_n(&c->faults->counts[kind], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Firing                                                              */
/* ------------------------------------------------------------------ */

static bool matches(const struct nvq_emu_fault *f, const struct emu_sq *sq,
		    const struct nvq_sqe *sqe)
{
	bool io = sq->qid != 0;
	uint8_t opc = sqe->opcode;

	if (f->has_qid && f->qid != sq->qid)
		return false;
	/* An AER completes when an event comes, not now: never matched. */
	if (!io && opc == nvq_admin_async_event)
		return false;
	if (f->kind == NVQ_EMU_FAULT_CORRUPT && (!io || opc != nvq_cmd_read))
		return false;
	switch (f->on) {
	case NVQ_EMU_ON_ANY:
		return true;
	case NVQ_EMU_ON_ADMIN:
		return !io;
	case NVQ_EMU_ON_IO:
		return io;
	case NVQ_EMU_ON_READ:
		return io && opc == nvq_cmd_read;
	case NVQ_EMU_ON_WRITE:
		return io && opc == nvq_cmd_write;
	case NVQ_EMU_ON_ADMIN_OPC:
		return !io && opc == f->opcode;
	case NVQ_EMU_ON_IO_OPC:
		return io && opc == f->opcode;
	}
	return false;
}

/* Count a matching command; does the fault fire on it? */
static bool trigger(struct emu_fault *a)
{
	a->seen++;
	if (a->f.prob != 0)
		return splitmix(&a->rng) < a->thr || a->always;
	return a->seen >= a->f.nth;
}

/* One fire used up; returns true when the fault is spent. */
static bool use(struct emu_fault *a)
{
	return a->left != NVQ_EMU_FAULT_FOREVER && --a->left == 0;
}

static void take(struct effects *x, struct emu_fault *a)
{
	const struct nvq_emu_fault *f = &a->f;

	x->mask |= BIT(f->kind);
	switch (f->kind) {
	case NVQ_EMU_FAULT_DELAY:
		if (f->delay_ns > x->delay_ns)
			x->delay_ns = f->delay_ns;
		break;
	case NVQ_EMU_FAULT_STATUS:
		x->status = f->status;
		break;
	case NVQ_EMU_FAULT_BAD_CID:
		x->cid = f->id;
		break;
	case NVQ_EMU_FAULT_BAD_SQID:
		x->sqid = f->id;
		break;
	case NVQ_EMU_FAULT_CORRUPT:
		if (f->bytes > x->bytes)
			x->bytes = f->bytes;
		x->pos_seed = splitmix(&a->rng);
		break;
	default:
		break;
	}
}

/*
 * The controller died mid-pass: keep fault_armed set so that the commands
 * still in this pass come to emu_fault_exec() and die with it, at no cost
 * to the hot path; the first command after a reset clears it again.
 */
static void stop(struct nvq_emu *c)
{
	__atomic_store_n(&c->fault_armed, 1, __ATOMIC_RELEASE);
}

static void vanish(struct nvq_emu *c)
{
	__atomic_store_n(&c->gone, 1, __ATOMIC_SEQ_CST);
	/* No more passes, no AERs, no reset: only the IOMMU handshake and
	 * the stop request are still served, so unmap and destroy work. */
	c->fatal = true;
	c->ready = false;
	stop(c);
	count(c, NVQ_EMU_FAULT_VANISH);
}

void emu_fault_now(struct nvq_emu *c)
{
	struct emu_faults *F = c->faults;
	uint32_t i = 0;

	pthread_mutex_lock(&F->lock);
	while (i < F->n) {
		struct emu_fault *a = &F->armed[i];

		if (!a->f.now) {
			i++;
			continue;
		}
		if (a->f.kind == NVQ_EMU_FAULT_VANISH) {
			vanish(c);
		} else {
			emu_fatal(c, "injected fault");
			count(c, NVQ_EMU_FAULT_CFS);
		}
		disarm(F, i);
	}
	publish_armed(c);
	pthread_mutex_unlock(&F->lock);
}

bool emu_fault_no_ready(struct nvq_emu *c)
{
	struct emu_faults *F = c->faults;
	bool hit = false;
	uint32_t i;

	pthread_mutex_lock(&F->lock);
	for (i = 0; i < F->n; i++) {
		struct emu_fault *a = &F->armed[i];

		if (a->f.kind != NVQ_EMU_FAULT_NO_READY)
			continue;
		hit = true;
		if (use(a))
			disarm(F, i);
		break;
	}
	publish_armed(c);
	pthread_mutex_unlock(&F->lock);
	if (hit)
		count(c, NVQ_EMU_FAULT_NO_READY);
	return hit;
}

/*
 * The completion just written to @cq raises no interrupt. It can be taken
 * back only if it alone put the CQ in this pass's interrupt batch (@was:
 * the CQ was there before): an interrupt already due for earlier entries
 * still comes, as one MSI-X message covers every entry before it.
 */
static void mute(struct nvq_emu *c, struct emu_cq *cq, bool was)
{
	uint32_t i;

	if (!cq->ien)
		return;
	if (was) {
		if (cq->irq_cnt)
			cq->irq_cnt--;
		return;
	}
	for (i = 0; i < c->nr_batch; i++) {
		if (c->batch[i] == cq) {
			c->batch[i] = c->batch[--c->nr_batch];
			break;
		}
	}
	cq->in_batch = false;
	cq->irq_cnt = 0;
	count(c, NVQ_EMU_FAULT_NO_IRQ);
}

/*
 * Post @e on @sq's CQ: as the command's own completion (@own: held if the
 * CQ is full), or as an extra one that must fit now. Returns false if an
 * extra one did not.
 */
static bool post(struct nvq_emu *c, struct emu_sq *sq, struct nvq_cqe *e,
		 bool own, bool silent)
{
	struct emu_cq *cq = sq->cq;
	bool was = cq->in_batch;
	uint16_t tail = cq->tail;

	e->sq_head = sq->head;
	if (own)
		emu_cq_post(c, cq, e);
	else if (!emu_cq_try_post(c, cq, e))
		return false;
	if (silent && cq->tail != tail)
		mute(c, cq, was);
	return true;
}

static void hold(struct nvq_emu *c, struct emu_sq *sq, const struct nvq_cqe *e,
		 uint64_t due, bool silent, bool dup)
{
	struct emu_faults *F = c->faults;
	struct emu_delayed *d;

	if (c->nr_delayed == F->dl_cap) {
		uint32_t cap = F->dl_cap ? 2 * F->dl_cap : 16;
		struct emu_delayed *n = NULL;

		if (cap <= MAX_DELAYED)
			n = realloc(F->dl, cap * sizeof(*n));
		if (!n) {
			/* No room to hold it: better early than lost. */
			struct nvq_cqe copy = *e;

			if (post(c, sq, &copy, !dup, silent) && dup)
				count(c, NVQ_EMU_FAULT_DUP_CQE);
			return;
		}
		F->dl = n;
		F->dl_cap = cap;
	}
	d = &F->dl[c->nr_delayed++];
	d->sq = sq;
	d->e = *e;
	d->due = due;
	d->mute = silent;
	d->dup = dup;
	if (c->nr_delayed == 1 || due < F->dl_next)
		F->dl_next = due;
}

unsigned int emu_fault_flush(struct nvq_emu *c)
{
	struct emu_faults *F = c->faults;
	uint64_t now = emu_now(), next = UINT64_MAX;
	unsigned int posted = 0;
	uint32_t i, keep = 0;

	if (now < F->dl_next || c->fatal)
		return 0;
	/* In order, so that entries due together post as they were held. */
	for (i = 0; i < c->nr_delayed; i++) {
		struct emu_delayed *d = &F->dl[i];

		if (d->due <= now) {
			if (post(c, d->sq, &d->e, false, d->mute)) {
				if (d->dup)
					count(c, NVQ_EMU_FAULT_DUP_CQE);
				posted++;
				continue;
			}
			d->due = now + RETRY_NS;
		}
		if (d->due < next)
			next = d->due;
		F->dl[keep++] = *d;
	}
	c->nr_delayed = keep;
	F->dl_next = next;
	return posted;
}

uint64_t emu_fault_deadline(struct nvq_emu *c)
{
	return c->nr_delayed ? c->faults->dl_next : UINT64_MAX;
}

void emu_fault_sq_gone(struct nvq_emu *c, struct emu_sq *sq)
{
	struct emu_faults *F = c->faults;
	uint64_t next = UINT64_MAX;
	uint32_t i, keep = 0;

	for (i = 0; i < c->nr_delayed; i++) {
		if (!sq || F->dl[i].sq == sq)
			continue;
		if (F->dl[i].due < next)
			next = F->dl[i].due;
		F->dl[keep++] = F->dl[i];
	}
	c->nr_delayed = keep;
	F->dl_next = next;
}

/* Invert @bytes bytes spread evenly over the data a Read returned. */
static bool corrupt(struct nvq_emu *c, const struct nvq_sqe *sqe,
		    const struct effects *x)
{
	uint64_t nlb = (sqe->cdw12 & NVQ_RW_NLB_MASK) + 1;
	uint64_t len = nlb << c->p.lbads, bytes = x->bytes ? x->bytes : 1;
	uint64_t step, pos, seg_start = 0, i;
	uint32_t n, s = 0;

	/* The same segments the read just filled, through the IOMMU. */
	if (emu_prp_map(c, sqe->prp1, sqe->prp2, len, &n) || !n)
		return false;
	if (bytes > len)
		bytes = len;
	step = len / bytes;
	pos = x->pos_seed % step;
	for (i = 0; i < bytes; i++, pos += step) {
		while (s < n && pos >= seg_start + c->segs[s].len)
			seg_start += c->segs[s++].len;
		if (s == n)
			break;
		c->segs[s].p[pos - seg_start] ^= 0xff;
	}
	return true;
}

static void apply(struct nvq_emu *c, struct emu_sq *sq,
		  const struct nvq_sqe *sqe, const struct effects *x)
{
	struct emu_req req = { .sqe = sqe,
			       .sq = sq,
			       .err_loc = NVQ_ERR_LOC_NONE };
	bool silent = x->mask & BIT(NVQ_EMU_FAULT_NO_IRQ);
	struct nvq_cqe e;
	uint16_t st;

	if (x->mask & BIT(NVQ_EMU_FAULT_VANISH)) {
		vanish(c);
		return;
	}
	if (x->mask & BIT(NVQ_EMU_FAULT_CFS)) {
		/* The command dies with the controller. */
		emu_fatal(c, "injected fault");
		stop(c);
		count(c, NVQ_EMU_FAULT_CFS);
		return;
	}
	if (x->mask & BIT(NVQ_EMU_FAULT_STATUS)) {
		/* Not executed: nothing read, written or changed. */
		st = x->status;
		if (sq->qid && (sqe->opcode == nvq_cmd_read ||
				sqe->opcode == nvq_cmd_write ||
				sqe->opcode == nvq_cmd_write_zeroes))
			req.err_lba = sqe->cdw10 | (uint64_t)sqe->cdw11 << 32;
		if (NVQ_SCT(st) == NVQ_SCT_MEDIA)
			c->smart.media_errors++;
		count(c, NVQ_EMU_FAULT_STATUS);
	} else {
		st = emu_exec_cmd(c, &req);
		if (req.held)
			return;
		if ((x->mask & BIT(NVQ_EMU_FAULT_CORRUPT)) &&
		    !(st & NVQ_STATUS_CODE_MASK) && corrupt(c, sqe, x))
			count(c, NVQ_EMU_FAULT_CORRUPT);
	}
	if (x->mask & BIT(NVQ_EMU_FAULT_DROP_CQE)) {
		count(c, NVQ_EMU_FAULT_DROP_CQE);
		return;
	}
	e.result = req.dw0;
	e.dw1 = 0;
	e.sq_head = sq->head;
	e.sq_id = sq->qid;
	e.cid = sqe->cid;
	e.status = (uint16_t)(st << 1);
	if (x->mask & BIT(NVQ_EMU_FAULT_BAD_CID)) {
		/* Default: the top bit inverted, a CID nobody sent. */
		e.cid = x->cid >= 0 ? (uint16_t)x->cid :
				      (uint16_t)(sqe->cid ^ 0x8000);
		count(c, NVQ_EMU_FAULT_BAD_CID);
	}
	if (x->mask & BIT(NVQ_EMU_FAULT_BAD_SQID)) {
		e.sq_id = x->sqid >= 0 ? (uint16_t)x->sqid :
					 (uint16_t)(sq->qid ^ 0x8000);
		count(c, NVQ_EMU_FAULT_BAD_SQID);
	}
	if (st)
		emu_log_error(c, sq->qid, sqe->cid, st, &req);
	if (x->mask & BIT(NVQ_EMU_FAULT_DELAY)) {
		uint64_t due = emu_now() + x->delay_ns;

		hold(c, sq, &e, due, silent, false);
		if (x->mask & BIT(NVQ_EMU_FAULT_DUP_CQE))
			hold(c, sq, &e, due, false, true);
		count(c, NVQ_EMU_FAULT_DELAY);
		return;
	}
	post(c, sq, &e, true, silent);
	if (x->mask & BIT(NVQ_EMU_FAULT_DUP_CQE)) {
		struct nvq_cqe copy = e;

		if (post(c, sq, &copy, false, false))
			count(c, NVQ_EMU_FAULT_DUP_CQE);
		else
			hold(c, sq, &e, emu_now(), false, true);
	}
}

bool emu_fault_exec(struct nvq_emu *c, struct emu_sq *sq,
		    const struct nvq_sqe *sqe)
{
	struct emu_faults *F = c->faults;
	struct effects x = { .cid = -1, .sqid = -1 };
	uint32_t i = 0;

	/*
	 * The rest of a fetch batch after cfs or vanish fired: a dead
	 * controller executes nothing more (see stop()).
	 */
	if (emu_unlikely(c->fatal))
		return true;
	pthread_mutex_lock(&F->lock);
	while (i < F->n) {
		struct emu_fault *a = &F->armed[i];

		if (a->f.now || a->f.kind == NVQ_EMU_FAULT_NO_READY ||
		    !matches(&a->f, sq, sqe) || !trigger(a)) {
			i++;
			continue;
		}
		take(&x, a);
		if (use(a))
			disarm(F, i);
		else
			i++;
	}
	publish_armed(c);
	pthread_mutex_unlock(&F->lock);
	if (!x.mask)
		return false;
	apply(c, sq, sqe, &x);
	return true;
}
