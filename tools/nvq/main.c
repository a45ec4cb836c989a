// SPDX-License-Identifier: MIT
/*
 * nvq: command-line access to NVMe controllers through libnvq.
 *
 * Follows nvme-cli's conventions where it has them (option names, the
 * "key : value" identify output, the JSON field names), so scripts and
 * habits carry over. Exit status: 0 success, 1 the operation failed,
 * 2 wrong usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <nvq/nvq.h>

#include "json.h"

#ifndef NVQ_VERSION
#define NVQ_VERSION "unknown"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INTR = 130 };

/* parse_args() result meaning "go on and run the command" */
#define CONTINUE (-1)

/* Data moves through one DMA buffer of this size, whatever the length. */
#define CHUNK_BYTES (1u << 20)
/* Write Zeroes carries a 16-bit 0's based block count per command. */
#define WZ_MAX_BLOCKS 65536u
/* A DSM range holds a 32-bit count; stay well inside it per call. */
#define TRIM_MAX_BLOCKS (1u << 30)
#define NSID_ALL 0xffffffffu

#define URI_FORMS                                                             \
	"emu:[key=value,...] (the emulated controller) or vfio:DDDD:BB:DD.F " \
	"(a PCI function bound to vfio-pci)"

enum out_fmt { FMT_NORMAL, FMT_JSON, FMT_BINARY };

/* Options a command accepts (struct cmd.opts) */
enum {
	OPT_NSID = 1 << 0,
	OPT_SLBA = 1 << 1,
	OPT_COUNT = 1 << 2,
	OPT_DATA = 1 << 3,
	OPT_FMT = 1 << 4,
	OPT_FMT_BIN = 1 << 5, /* -o binary too */
	OPT_NSID_ALL = 1 << 6, /* -n 0xffffffff (every namespace) allowed */
};

struct cmd;

struct args {
	const struct cmd *cmd;
	uint32_t nsid;
	uint64_t slba;
	uint64_t count;
	const char *data;
	enum out_fmt fmt;
	bool has_nsid, has_count;
	char **pos; /* positional arguments */
	int npos;
};

struct cmd {
	const char *name;
	int (*run)(struct args *a);
	unsigned int opts; /* OPT_* accepted */
	unsigned int required; /* OPT_* that must be given */
	int min_pos, max_pos; /* positional arguments; max -1 = any */
	const char *synopsis; /* after "nvq NAME " */
	const char *summary;
	const char *help; /* description and options, for --help */
};

static const struct cmd *find_cmd(const char *name);
static void main_help(FILE *f);
static int run_setup(struct args *a);
static int run_reset(struct args *a);

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static int usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report wrong usage of @c (NULL: of nvq itself) and return EXIT_USAGE. */
static int usage_error(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvq%s%s: ", c ? " " : "", c ? c->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c)
		fprintf(stderr,
			"usage: nvq %s %s\n"
			"Try 'nvq %s --help' for more information.\n",
			c->name, c->synopsis, c->name);
	else
		fputs("usage: nvq <command> [options]\n"
		      "Try 'nvq --help' for the list of commands.\n",
		      stderr);
	return EXIT_USAGE;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report a failed operation as "nvq: <what>" and return EXIT_FAIL. */
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("nvq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

/* Exit status for a command whose output is complete on stdout. */
static int flush_stdout(void)
{
	if (fflush(stdout))
		return fail("cannot write to standard output: %s",
			    strerror(errno));
	return EXIT_OK;
}

/* Why a library call failed: its own message, else the errno text. */
static const char *lib_msg(int err)
{
	const char *m = nvq_errmsg();

	return m && *m ? m : strerror(-err);
}

/* Why a command failed, with the NVMe status when the device gave one. */
static const char *io_msg(int err, uint16_t status, char *buf, size_t len)
{
	if (err == -EIO && status) {
		snprintf(buf, len, "%s (NVMe status: SCT %#x SC %#x%s)",
			 nvq_status_str(status), NVQ_SCT(status),
			 NVQ_SC(status), NVQ_DNR(status) ? ", DNR" : "");
		return buf;
	}
	return lib_msg(err);
}

/* ------------------------------------------------------------------ */
/* Argument parsing                                                    */
/* ------------------------------------------------------------------ */

static const struct option_def {
	unsigned int flag;
	int short_name;
	const char *long_name;
} option_defs[] = {
	{ OPT_NSID, 'n', "namespace-id" }, { OPT_SLBA, 's', "start-block" },
	{ OPT_COUNT, 'c', "block-count" }, { OPT_DATA, 'd', "data" },
	{ OPT_FMT, 'o', "output-format" },
};

static const struct option_def *option_by_short(int c)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++)
		if (option_defs[i].short_name == c)
			return &option_defs[i];
	return NULL;
}

/*
 * Decimal or 0x-prefixed hex, nothing else: no sign, no spaces, no octal
 * (strtoull would read "010" as 8 and "-1" as 2^64-1).
 */
static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -EINVAL;
		if (d > max || v > (max - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int num_arg(const struct cmd *c, const struct option_def *o,
		   const char *s, uint64_t max, uint64_t *out)
{
	int ret = parse_num(s, max, out);

	if (ret == -EINVAL)
		return usage_error(c,
				   "invalid value '%s' for -%c/--%s: expected "
				   "a decimal or 0x-prefixed hex number",
				   s, o->short_name, o->long_name);
	if (ret == -ERANGE)
		return usage_error(c,
				   "value '%s' for -%c/--%s is out of range "
				   "(max %" PRIu64 ")",
				   s, o->short_name, o->long_name, max);
	return 0;
}

static void cmd_help(const struct cmd *c)
{
	printf("usage: nvq %s %s\n\n%s\n%s", c->name, c->synopsis, c->summary,
	       c->help);
}

/*
 * Parse the command's options and positional arguments into @a.
 * Returns CONTINUE, or the exit status when the command must not run
 * (EXIT_OK after --help, EXIT_USAGE after a usage error).
 */
static int parse_args(const struct cmd *c, int argc, char **argv,
		      struct args *a)
{
	struct option longopts[ARRAY_SIZE(option_defs) + 2];
	char optstring[2 * ARRAY_SIZE(option_defs) + 4] = ":h";
	unsigned int seen = 0, n = 0;
	size_t len = strlen(optstring);
	uint64_t v;
	int o, ret;

	for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++) {
		if (!(c->opts & option_defs[i].flag))
			continue;
		longopts[n++] = (struct option){ option_defs[i].long_name,
						 required_argument, NULL,
						 option_defs[i].short_name };
		optstring[len++] = (char)option_defs[i].short_name;
		optstring[len++] = ':';
	}
	optstring[len] = '\0';
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	a->cmd = c;
	a->fmt = FMT_NORMAL;
	opterr = 0;
	optind = 0; /* glibc: full re-initialisation */
	while ((o = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		const struct option_def *od = option_by_short(o);

		switch (o) {
		case 'h':
			cmd_help(c);
			return EXIT_OK;
		case 'n':
			ret = num_arg(c, od, optarg, UINT32_MAX, &v);
			if (ret)
				return ret;
			a->nsid = (uint32_t)v;
			a->has_nsid = true;
			break;
		case 's':
			ret = num_arg(c, od, optarg, UINT64_MAX, &a->slba);
			if (ret)
				return ret;
			break;
		case 'c':
			ret = num_arg(c, od, optarg, UINT64_MAX, &a->count);
			if (ret)
				return ret;
			if (!a->count)
				return usage_error(
					c, "-c/--block-count must be "
					   "at least 1 (COUNT is the "
					   "number of blocks, 1-based)");
			a->has_count = true;
			break;
		case 'd':
			if (!*optarg)
				return usage_error(c, "empty file name for "
						      "-d/--data");
			a->data = optarg;
			break;
		case 'o':
			if (!strcmp(optarg, "normal"))
				a->fmt = FMT_NORMAL;
			else if (!strcmp(optarg, "json"))
				a->fmt = FMT_JSON;
			else if (!strcmp(optarg, "binary") &&
				 (c->opts & OPT_FMT_BIN))
				a->fmt = FMT_BINARY;
			else
				return usage_error(
					c,
					"unknown output format '%s' (use %s)",
					optarg,
					c->opts & OPT_FMT_BIN ?
						"normal, json or binary" :
						"normal or json");
			break;
		case ':':
			od = option_by_short(optopt);
			if (od)
				return usage_error(c, "-%c/--%s needs a value",
						   od->short_name,
						   od->long_name);
			return usage_error(c, "option '%s' needs a value",
					   argv[optind - 1]);
		default:
			if (optopt)
				return usage_error(c, "unknown option '-%c'",
						   optopt);
			return usage_error(c, "unknown option '%s'",
					   argv[optind - 1]);
		}
		if (od)
			seen |= od->flag;
	}

	a->pos = argv + optind;
	a->npos = argc - optind;
	if (a->npos < c->min_pos)
		return usage_error(c, "missing %s",
				   c->run == run_setup || c->run == run_reset ?
					   "PCI address (DDDD:BB:DD.F)" :
					   "URI of the controller (" URI_FORMS
					   ")");
	if (c->max_pos >= 0 && a->npos > c->max_pos)
		return usage_error(c, "unexpected argument '%s'",
				   a->pos[c->max_pos]);
	for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++) {
		const struct option_def *od = &option_defs[i];

		if ((c->required & od->flag) && !(seen & od->flag))
			return usage_error(c, "missing -%c/--%s",
					   od->short_name, od->long_name);
	}
	if (a->has_nsid && a->nsid == 0)
		return usage_error(c, "namespace id 0 is not valid");
	if (a->has_nsid && a->nsid == NSID_ALL && !(c->opts & OPT_NSID_ALL))
		return usage_error(c, "namespace id 0xffffffff (all "
				      "namespaces) is only valid for flush");
	return CONTINUE;
}

/* ------------------------------------------------------------------ */
/* Controller, namespace and file helpers                              */
/* ------------------------------------------------------------------ */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Let SIGINT/SIGTERM end a long transfer between chunks, so the
 * controller is still shut down in order (CC.SHN) rather than abandoned
 * mid-command.
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int open_ctrl(const char *uri, struct nvq_ctrl **ctrl)
{
	sigset_t block, old;
	struct nvq_opts o;
	const char *msg;
	int ret;

	nvq_opts_init(&o);
	o.nr_queues = 1; /* one command at a time: one queue is plenty */
	o.mode = NVQ_MODE_POLL;

	/* Threads the library starts inherit this mask: signals stay with us */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = nvq_open(uri, &o, ctrl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		return 0;
	msg = lib_msg(ret);
	fail("cannot open '%s': %s", uri, msg);
	/* unless the library's message already said what a URI looks like */
	if (strncmp(uri, "emu:", 4) && strncmp(uri, "vfio:", 5) &&
	    !strstr(msg, "emu:"))
		fprintf(stderr, "nvq: a URI is %s\n", URI_FORMS);
	return EXIT_FAIL;
}

static int get_ns(struct nvq_ctrl *ctrl, uint32_t nsid, struct nvq_ns_info *ns)
{
	uint32_t ids[16];
	char list[16 * 12 + 8]; /* 16 times ", 4294967295", then ", ..." */
	size_t len = 0;
	int ret, n;

	ret = nvq_ns_info(ctrl, nsid, ns);
	if (!ret) {
		if (!ns->lba_size || !ns->id)
			return fail("namespace %u: the driver reports no "
				    "LBA size",
				    nsid);
		return 0;
	}
	if (ret != -ENOENT)
		return fail("namespace %u: %s", nsid, lib_msg(ret));

	n = nvq_ns_list(ctrl, ids, ARRAY_SIZE(ids));
	list[0] = '\0';
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(ids); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u",
					i ? ", " : "", ids[i]);
	if (n > (int)ARRAY_SIZE(ids))
		snprintf(list + len, sizeof(list) - len, ", ...");
	return fail("namespace %u is not active on %s (active: %s)", nsid,
		    nvq_ctrl_uri(ctrl), n > 0 ? list : "none");
}

/* Refuse a range that does not lie inside the namespace, before any I/O. */
static int check_range(const struct nvq_ns_info *ns, uint64_t slba,
		       uint64_t count)
{
	if (slba < ns->nlba && count <= ns->nlba - slba)
		return 0;
	return fail("LBA range %" PRIu64 "+%" PRIu64 " (SLBA+COUNT) lies "
		    "beyond the end of namespace %u, which has %" PRIu64
		    " blocks of %u bytes (LBA 0..%" PRIu64 ")",
		    slba, count, ns->nsid, ns->nlba, ns->lba_size,
		    ns->nlba ? ns->nlba - 1 : 0);
}

/* A DMA buffer for up to CHUNK_BYTES of whole blocks (at least one). */
static int alloc_chunk(struct nvq_ctrl *ctrl, const struct nvq_ns_info *ns,
		       uint64_t max_blocks, void **buf, uint32_t *chunk_blocks)
{
	uint64_t blocks = CHUNK_BYTES / ns->lba_size;
	size_t bytes;

	if (!blocks)
		blocks = 1;
	if (max_blocks && blocks > max_blocks)
		blocks = max_blocks;
	bytes = (size_t)blocks * ns->lba_size;
	*buf = nvq_dma_alloc(ctrl, bytes, -1);
	if (!*buf)
		return fail("cannot allocate %zu bytes of DMA memory: %s",
			    bytes, lib_msg(-ENOMEM));
	*chunk_blocks = (uint32_t)blocks;
	return 0;
}

/* Read until @len bytes or end of file; *@got says how many arrived. */
static int read_full(int fd, void *buf, size_t len, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r;

		/* after a partial read the signal is no longer pending */
		if (stop_signal)
			return -EINTR;
		r = read(fd, (char *)buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r;

		/* after a partial write the signal is no longer pending */
		if (stop_signal)
			return -EINTR;
		r = write(fd, (const char *)buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

static const char *file_name(const char *path, bool output)
{
	if (strcmp(path, "-"))
		return path;
	return output ? "standard output" : "standard input";
}

static int interrupted(uint64_t done, uint64_t total)
{
	fprintf(stderr, "nvq: interrupted by signal %d after %" PRIu64,
		(int)stop_signal, done);
	if (total)
		fprintf(stderr, " of %" PRIu64, total);
	fputs(" blocks\n", stderr);
	return EXIT_INTR;
}

/*
 * Copy @len bytes of a device string (space padded, maybe NUL
 * terminated early) into @dst (len + 1 bytes). Whatever the device put
 * there, the result is printable ASCII, hence also valid UTF-8 for JSON.
 */
static void dev_string(const void *src, size_t len, char *dst)
{
	const unsigned char *s = src;
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '.';
	dst[i] = '\0';
}

/* "@dir/@name" into @out; false when it does not fit. */
static bool path_join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n >= 0 && (size_t)n < len;
}

/* @src into @dst of @len bytes, cut short if need be. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static char *rtrim(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

/* ------------------------------------------------------------------ */
/* Identify output                                                     */
/* ------------------------------------------------------------------ */

enum field_kind {
	F_DEC, /* number, decimal in normal output */
	F_HEX, /* number, %#x in normal output */
	F_STR, /* space-padded ASCII */
	F_U128, /* 128-bit little-endian counter */
	F_IEEE, /* 3-byte OUI */
	F_UUID, /* 16 bytes shown as a UUID */
	F_HEXSTR, /* bytes shown as one hex string (NGUID, EUI64) */
};

struct field {
	const char *name;
	unsigned short off;
	unsigned short len;
	unsigned char kind;
	bool optperf; /* id-ns: only shown when NSFEAT bit 4 (OPTPERF) */
};

/* clang-format off */
#define FLD(type, f, k, opt) \
	{ #f, offsetof(struct type, f), sizeof(((struct type *)0)->f), k, opt }
/* clang-format on */
#define CTRL(f, k) FLD(nvq_id_ctrl, f, k, false)
#define NS(f, k) FLD(nvq_id_ns, f, k, false)
#define NSP(f) FLD(nvq_id_ns, f, F_DEC, true)

/* nvme-cli's order and names (nvme-print.c / nvme-print-json.c) */
static const struct field id_ctrl_fields[] = {
	CTRL(vid, F_HEX),	CTRL(ssvid, F_HEX),	CTRL(sn, F_STR),
	CTRL(mn, F_STR),	CTRL(fr, F_STR),	CTRL(rab, F_DEC),
	CTRL(ieee, F_IEEE),	CTRL(cmic, F_HEX),	CTRL(mdts, F_DEC),
	CTRL(cntlid, F_HEX),	CTRL(ver, F_HEX),	CTRL(rtd3r, F_HEX),
	CTRL(rtd3e, F_HEX),	CTRL(oaes, F_HEX),	CTRL(ctratt, F_HEX),
	CTRL(rrls, F_HEX),	CTRL(cntrltype, F_DEC), CTRL(fguid, F_UUID),
	CTRL(crdt1, F_DEC),	CTRL(crdt2, F_DEC),	CTRL(crdt3, F_DEC),
	CTRL(nvmsr, F_DEC),	CTRL(vwci, F_DEC),	CTRL(mec, F_DEC),
	CTRL(oacs, F_HEX),	CTRL(acl, F_DEC),	CTRL(aerl, F_DEC),
	CTRL(frmw, F_HEX),	CTRL(lpa, F_HEX),	CTRL(elpe, F_DEC),
	CTRL(npss, F_DEC),	CTRL(avscc, F_HEX),	CTRL(apsta, F_HEX),
	CTRL(wctemp, F_DEC),	CTRL(cctemp, F_DEC),	CTRL(mtfa, F_DEC),
	CTRL(hmpre, F_DEC),	CTRL(hmmin, F_DEC),	CTRL(tnvmcap, F_U128),
	CTRL(unvmcap, F_U128),	CTRL(rpmbs, F_HEX),	CTRL(edstt, F_DEC),
	CTRL(dsto, F_DEC),	CTRL(fwug, F_DEC),	CTRL(kas, F_DEC),
	CTRL(hctma, F_HEX),	CTRL(mntmt, F_DEC),	CTRL(mxtmt, F_DEC),
	CTRL(sanicap, F_HEX),	CTRL(hmminds, F_DEC),	CTRL(hmmaxd, F_DEC),
	CTRL(nsetidmax, F_DEC), CTRL(endgidmax, F_DEC), CTRL(anatt, F_DEC),
	CTRL(anacap, F_DEC),	CTRL(anagrpmax, F_DEC), CTRL(nanagrpid, F_DEC),
	CTRL(pels, F_DEC),	CTRL(domainid, F_DEC),	CTRL(megcap, F_U128),
	CTRL(sqes, F_HEX),	CTRL(cqes, F_HEX),	CTRL(maxcmd, F_DEC),
	CTRL(nn, F_DEC),	CTRL(oncs, F_HEX),	CTRL(fuses, F_HEX),
	CTRL(fna, F_HEX),	CTRL(vwc, F_HEX),	CTRL(awun, F_DEC),
	CTRL(awupf, F_DEC),	CTRL(icsvscc, F_DEC),	CTRL(nwpc, F_DEC),
	CTRL(acwu, F_DEC),	CTRL(ocfs, F_HEX),	CTRL(sgls, F_HEX),
	CTRL(mnan, F_DEC),	CTRL(maxdna, F_U128),	CTRL(maxcna, F_DEC),
	CTRL(subnqn, F_STR),	CTRL(ioccsz, F_DEC),	CTRL(iorcsz, F_DEC),
	CTRL(icdoff, F_DEC),	CTRL(fcatt, F_HEX),	CTRL(msdbd, F_DEC),
	CTRL(ofcs, F_DEC),
};

static const struct field id_ns_fields[] = {
	NS(nsze, F_HEX),     NS(ncap, F_HEX),	  NS(nuse, F_HEX),
	NS(nsfeat, F_HEX),   NS(nlbaf, F_DEC),	  NS(flbas, F_HEX),
	NS(mc, F_HEX),	     NS(dpc, F_HEX),	  NS(dps, F_HEX),
	NS(nmic, F_HEX),     NS(rescap, F_HEX),	  NS(fpi, F_HEX),
	NS(dlfeat, F_DEC),   NS(nawun, F_DEC),	  NS(nawupf, F_DEC),
	NS(nacwu, F_DEC),    NS(nabsn, F_DEC),	  NS(nabo, F_DEC),
	NS(nabspf, F_DEC),   NS(noiob, F_DEC),	  NS(nvmcap, F_U128),
	NSP(npwg),	     NSP(npwa),		  NSP(npdg),
	NSP(npda),	     NSP(nows),		  NS(mssrl, F_DEC),
	NS(mcl, F_DEC),	     NS(msrc, F_DEC),	  NS(anagrpid, F_DEC),
	NS(nsattr, F_DEC),   NS(nvmsetid, F_DEC), NS(endgid, F_DEC),
	NS(nguid, F_HEXSTR), NS(eui64, F_HEXSTR),
};

#define NVME_NS_NSFEAT_OPTPERF (1u << 4)

static uint64_t field_uint(const uint8_t *base, const struct field *f)
{
	uint64_t v = 0;

	/* spec.h guarantees a little-endian host */
	memcpy(&v, base + f->off, f->len < sizeof(v) ? f->len : sizeof(v));
	return v;
}

/* 128-bit little-endian integer in decimal (at most 39 digits). */
static void u128_str(const uint8_t *src, char out[40])
{
	uint8_t t[16];
	char digits[40];
	int n = 0;
	bool nonzero;

	memcpy(t, src, sizeof(t));
	do {
		unsigned int rem = 0;

		nonzero = false;
		for (int i = 15; i >= 0; i--) {
			unsigned int cur = rem * 256 + t[i];

			t[i] = (uint8_t)(cur / 10);
			rem = cur % 10;
			nonzero |= t[i] != 0;
		}
		digits[n++] = (char)('0' + rem);
	} while (nonzero);
	for (int i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	out[n] = '\0';
}

static void hex_str(const uint8_t *src, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", src[i]);
	out[2 * len] = '\0';
}

static void uuid_str(const uint8_t *u, char out[37])
{
	char *p = out;

	for (int i = 0; i < 16; i++) {
		p += sprintf(p, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
}

static uint32_t ieee_oui(const uint8_t *b)
{
	return (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static void print_field(const uint8_t *base, const struct field *f, int width)
{
	char buf[257];

	printf("%-*s: ", width, f->name);
	switch (f->kind) {
	case F_DEC:
		printf("%" PRIu64 "\n", field_uint(base, f));
		break;
	case F_HEX:
		printf("%#" PRIx64 "\n", field_uint(base, f));
		break;
	case F_STR:
		dev_string(base + f->off, f->len, buf);
		printf("%s\n", buf);
		break;
	case F_U128:
		u128_str(base + f->off, buf);
		printf("%s\n", buf);
		break;
	case F_IEEE:
		printf("%06" PRIx32 "\n", ieee_oui(base + f->off));
		break;
	case F_UUID:
		uuid_str(base + f->off, buf);
		printf("%s\n", buf);
		break;
	case F_HEXSTR:
		hex_str(base + f->off, f->len, buf);
		printf("%s\n", buf);
		break;
	}
}

static void json_field(struct json_writer *w, const uint8_t *base,
		       const struct field *f)
{
	char buf[257];

	switch (f->kind) {
	case F_DEC:
	case F_HEX:
		json_uint(w, f->name, field_uint(base, f));
		break;
	case F_STR:
		dev_string(base + f->off, f->len, buf);
		json_string(w, f->name, buf);
		break;
	case F_U128:
		u128_str(base + f->off, buf);
		json_raw(w, f->name, buf);
		break;
	case F_IEEE:
		json_uint(w, f->name, ieee_oui(base + f->off));
		break;
	case F_UUID:
		uuid_str(base + f->off, buf);
		json_string(w, f->name, buf);
		break;
	case F_HEXSTR:
		hex_str(base + f->off, f->len, buf);
		json_string(w, f->name, buf);
		break;
	}
}

/* Power in the unit a PSD scale selects, as nvme-cli prints it. */
static void print_power(unsigned int power, unsigned int scale)
{
	switch (scale & 0x3) {
	case 0:
		printf("-");
		break;
	case 1:
		printf("%u.%04uW", power / 10000, power % 10000);
		break;
	case 2:
		printf("%u.%02uW", power / 100, power % 100);
		break;
	default:
		printf("reserved");
	}
}

static void print_psd(unsigned int i, const struct nvq_id_power_state *ps)
{
	printf("ps %4u : mp:", i);
	/* flags bit 0: MXPS (max power in 0.0001 W), bit 1: NOPS */
	if (ps->flags & 0x1)
		printf("%u.%04uW ", ps->max_power / 10000,
		       ps->max_power % 10000);
	else
		printf("%u.%02uW ", ps->max_power / 100, ps->max_power % 100);
	printf("%soperational enlat:%" PRIu32 " exlat:%" PRIu32
	       " rrt:%u rrl:%u\n          rwt:%u rwl:%u idle_power:",
	       ps->flags & 0x2 ? "non-" : "", ps->entry_lat, ps->exit_lat,
	       ps->read_tput, ps->read_lat, ps->write_tput, ps->write_lat);
	print_power(ps->idle_power, ps->idle_scale >> 6);
	printf(" active_power:");
	print_power(ps->active_power, ps->active_work_scale >> 6);
	printf("\n");
}

static int write_binary(const void *data, size_t len)
{
	int ret;

	fflush(stdout);
	ret = write_full(STDOUT_FILENO, data, len);
	if (ret)
		return fail("cannot write to standard output: %s",
			    strerror(-ret));
	return EXIT_OK;
}

static int finish_json(struct json_writer *w)
{
	int ret = json_finish(w);

	if (ret)
		return fail("cannot write JSON to standard output: %s",
			    strerror(-ret));
	return EXIT_OK;
}

static int show_id_ctrl(const struct nvq_id_ctrl *id, enum out_fmt fmt)
{
	const uint8_t *base = (const uint8_t *)id;
	unsigned int npss = id->npss < 32 ? id->npss : 31;
	struct json_writer w;

	if (fmt == FMT_BINARY)
		return write_binary(id, sizeof(*id));
	if (fmt == FMT_NORMAL) {
		printf("NVME Identify Controller:\n");
		for (size_t i = 0; i < ARRAY_SIZE(id_ctrl_fields); i++)
			print_field(base, &id_ctrl_fields[i], 10);
		for (unsigned int i = 0; i <= npss; i++)
			print_psd(i, &id->psd[i]);
		return flush_stdout();
	}

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(id_ctrl_fields); i++)
		json_field(&w, base, &id_ctrl_fields[i]);
	json_begin_array(&w, "psds");
	for (unsigned int i = 0; i <= npss; i++) {
		const struct nvq_id_power_state *ps = &id->psd[i];

		json_begin_object(&w, NULL);
		json_uint(&w, "max_power", ps->max_power);
		json_uint(&w, "flags", ps->flags);
		json_uint(&w, "entry_lat", ps->entry_lat);
		json_uint(&w, "exit_lat", ps->exit_lat);
		json_uint(&w, "read_tput", ps->read_tput);
		json_uint(&w, "read_lat", ps->read_lat);
		json_uint(&w, "write_tput", ps->write_tput);
		json_uint(&w, "write_lat", ps->write_lat);
		json_uint(&w, "idle_power", ps->idle_power);
		json_uint(&w, "idle_scale", ps->idle_scale);
		json_uint(&w, "active_power", ps->active_power);
		json_uint(&w, "active_work_scale", ps->active_work_scale);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

static int show_id_ns(uint32_t nsid, const struct nvq_id_ns *id,
		      enum out_fmt fmt)
{
	const uint8_t *base = (const uint8_t *)id;
	unsigned int nlbaf = id->nlbaf < 64 ? id->nlbaf : 63;
	unsigned int in_use = nvq_flbas_index(id->flbas);
	bool optperf = id->nsfeat & NVME_NS_NSFEAT_OPTPERF;
	struct json_writer w;

	if (fmt == FMT_BINARY)
		return write_binary(id, sizeof(*id));
	if (fmt == FMT_NORMAL) {
		printf("NVME Identify Namespace %u:\n", nsid);
		for (size_t i = 0; i < ARRAY_SIZE(id_ns_fields); i++)
			if (optperf || !id_ns_fields[i].optperf)
				print_field(base, &id_ns_fields[i], 8);
		for (unsigned int i = 0; i <= nlbaf; i++)
			printf("lbaf %2u : ms:%-3u lbads:%-2u rp:%#x %s\n", i,
			       id->lbaf[i].ms, id->lbaf[i].ds,
			       id->lbaf[i].rp & 0x3,
			       i == in_use ? "(in use)" : "");
		return flush_stdout();
	}

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(id_ns_fields); i++)
		if (optperf || !id_ns_fields[i].optperf)
			json_field(&w, base, &id_ns_fields[i]);
	json_begin_array(&w, "lbafs");
	for (unsigned int i = 0; i <= nlbaf; i++) {
		json_begin_object(&w, NULL);
		json_uint(&w, "ms", id->lbaf[i].ms);
		json_uint(&w, "ds", id->lbaf[i].ds);
		json_uint(&w, "rp", id->lbaf[i].rp);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

static int run_id_ctrl(struct args *a)
{
	struct nvq_ctrl *ctrl;
	const struct nvq_id_ctrl *id;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	id = nvq_ctrl_id(ctrl);
	if (id)
		rc = show_id_ctrl(id, a->fmt);
	else
		rc = fail("%s: no Identify Controller data", a->pos[0]);
	nvq_close(ctrl);
	return rc;
}

/*
 * Identify a namespace the driver does not use: it may exist but be
 * inactive (zero-filled data) or have a format the driver refused.
 */
static int identify_ns_raw(struct nvq_ctrl *ctrl, uint32_t nsid,
			   struct nvq_id_ns *id)
{
	static const uint8_t zero[sizeof(id->nsze) * 3];
	struct nvq_sqe cmd;
	uint16_t status = 0;
	char buf[160];
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = nvq_admin_identify;
	cmd.nsid = nsid;
	cmd.cdw10 = NVQ_ID_CNS_NS;
	ret = nvq_admin(ctrl, &cmd, id, sizeof(*id), NULL, &status);
	if (ret == -EIO && NVQ_SCT(status) == NVQ_SCT_GENERIC &&
	    NVQ_SC(status) == NVQ_SC_INVALID_NS)
		return fail("namespace %u does not exist on %s (NN = %" PRIu32
			    ")",
			    nsid, nvq_ctrl_uri(ctrl), nvq_ctrl_id(ctrl)->nn);
	if (ret)
		return fail("identify namespace %u: %s", nsid,
			    io_msg(ret, status, buf, sizeof(buf)));
	/* NSZE, NCAP and NUSE all zero: an allocated but inactive nsid */
	if (!memcmp(id, zero, sizeof(zero)))
		return get_ns(ctrl, nsid, &(struct nvq_ns_info){ 0 });
	fprintf(stderr,
		"nvq: note: namespace %u is not usable for I/O through nvq\n",
		nsid);
	return 0;
}

static int run_id_ns(struct args *a)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	struct nvq_id_ns *raw = NULL;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	rc = nvq_ns_info(ctrl, a->nsid, &ns);
	if (!rc && ns.id) {
		rc = show_id_ns(a->nsid, ns.id, a->fmt);
	} else if (rc == -ENOENT) {
		raw = calloc(1, sizeof(*raw));
		if (!raw)
			rc = fail("out of memory");
		else
			rc = identify_ns_raw(ctrl, a->nsid, raw);
		if (!rc)
			rc = show_id_ns(a->nsid, raw, a->fmt);
	} else {
		rc = fail("namespace %u: %s", a->nsid,
			  rc ? lib_msg(rc) : "no Identify Namespace data");
	}
	free(raw);
	nvq_close(ctrl);
	return rc;
}

/* What read and write share: the controller, the namespace, the buffer. */
struct xfer {
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	void *buf;
	uint32_t chunk_blocks;
	int fd;
};

static void xfer_end(struct xfer *x)
{
	if (x->fd > STDERR_FILENO)
		close(x->fd);
	if (x->buf)
		nvq_dma_free(x->ctrl, x->buf);
	if (x->ctrl)
		nvq_close(x->ctrl);
}

static int run_read(struct args *a)
{
	struct xfer x = { .fd = -1 };
	uint64_t done = 0, lba = a->slba;
	const char *name = file_name(a->data, true);
	int rc;

	rc = open_ctrl(a->pos[0], &x.ctrl);
	if (rc)
		return rc;
	rc = get_ns(x.ctrl, a->nsid, &x.ns);
	if (!rc)
		rc = check_range(&x.ns, a->slba, a->count);
	if (!rc)
		rc = alloc_chunk(x.ctrl, &x.ns, a->count, &x.buf,
				 &x.chunk_blocks);
	if (rc)
		goto out;
	/* Opened only now so that a refused request leaves the file alone. */
	if (!strcmp(a->data, "-"))
		x.fd = STDOUT_FILENO;
	else
		x.fd = open(a->data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0666);
	if (x.fd < 0) {
		rc = fail("cannot open '%s' for writing: %s", a->data,
			  strerror(errno));
		goto out;
	}

	catch_signals();
	while (done < a->count) {
		uint64_t left = a->count - done;
		uint32_t n = left < x.chunk_blocks ? (uint32_t)left :
						     x.chunk_blocks;
		uint16_t status = 0;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			goto out;
		}
		ret = nvq_read_sync(x.ctrl, a->nsid, x.buf, lba, n, &status);
		if (ret) {
			rc = fail("read of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  n, lba,
				  io_msg(ret, status, msg, sizeof(msg)));
			goto out;
		}
		ret = write_full(x.fd, x.buf, (size_t)n * x.ns.lba_size);
		if (ret) {
			rc = stop_signal ? interrupted(done, a->count) :
					   fail("cannot write to '%s': %s",
						name, strerror(-ret));
			goto out;
		}
		done += n;
		lba += n;
	}
	if (x.fd > STDERR_FILENO) {
		int fd = x.fd;

		x.fd = -1;
		if (close(fd))
			rc = fail("cannot write to '%s': %s", name,
				  strerror(errno));
	}
out:
	xfer_end(&x);
	return rc;
}

/*
 * With no COUNT the file's length decides it, and it must be whole
 * blocks; with COUNT the file must hold at least that much. Pipes cannot
 * be measured: their length is checked as the data arrives.
 */
static int write_plan(const struct args *a, const struct xfer *x,
		      const char *name, uint64_t *count)
{
	uint32_t lbs = x->ns.lba_size;
	struct stat st;
	uint64_t need;

	*count = a->has_count ? a->count : 0;
	if (fstat(x->fd, &st))
		return fail("cannot stat '%s': %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail("cannot read '%s': %s", name, strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return a->has_count ? check_range(&x->ns, a->slba, *count) : 0;

	if (!a->has_count) {
		if (!st.st_size)
			return fail("'%s' is empty: nothing to write", name);
		if ((uint64_t)st.st_size % lbs)
			return fail("size of '%s' (%jd bytes) is not a "
				    "multiple of the LBA size of namespace "
				    "%u (%u bytes)",
				    name, (intmax_t)st.st_size, a->nsid, lbs);
		*count = (uint64_t)st.st_size / lbs;
		return check_range(&x->ns, a->slba, *count);
	}
	if (check_range(&x->ns, a->slba, *count))
		return EXIT_FAIL;
	if (__builtin_mul_overflow(*count, lbs, &need) ||
	    (uint64_t)st.st_size < need)
		return fail("'%s' has %jd bytes, fewer than the %" PRIu64
			    " blocks of %u bytes to write",
			    name, (intmax_t)st.st_size, *count, lbs);
	return 0;
}

/* How much of a refused input went to the device anyway. */
static void written_msg(uint64_t done, char *buf, size_t len)
{
	if (done)
		snprintf(buf, len, "%" PRIu64 " blocks were written", done);
	else
		snprintf(buf, len, "nothing was written");
}

/*
 * The input ended before the chunk was full. Decide before writing that
 * chunk, so input refused as a whole (the usual case: less than one
 * chunk) leaves the device untouched.
 */
static int short_input(const struct args *a, const char *name, uint64_t count,
		       uint64_t done, size_t got, uint32_t lbs)
{
	uint64_t total = done * lbs + got;
	char written[64];

	written_msg(done, written, sizeof(written));
	if (count)
		return fail("'%s' ended after %" PRIu64 " bytes, but %" PRIu64
			    " blocks of %u bytes were asked for; %s",
			    name, total, count, lbs, written);
	if (got % lbs)
		return fail("length of '%s' (%" PRIu64 " bytes) is not a "
			    "multiple of the LBA size of namespace %u (%u "
			    "bytes); %s",
			    name, total, a->nsid, lbs, written);
	if (!total)
		return fail("'%s' is empty: nothing to write", name);
	return 0;
}

static int run_write(struct args *a)
{
	struct xfer x = { .fd = -1 };
	uint64_t count, done = 0, lba = a->slba;
	const char *name = file_name(a->data, false);
	uint32_t lbs;
	int rc;

	/* A missing input file is the cheapest error: before bring-up. */
	if (!strcmp(a->data, "-"))
		x.fd = STDIN_FILENO;
	else
		x.fd = open(a->data, O_RDONLY | O_CLOEXEC);
	if (x.fd < 0)
		return fail("cannot open '%s' for reading: %s", a->data,
			    strerror(errno));

	rc = open_ctrl(a->pos[0], &x.ctrl);
	if (rc)
		goto out;
	rc = get_ns(x.ctrl, a->nsid, &x.ns);
	if (!rc)
		rc = write_plan(a, &x, name, &count);
	if (!rc)
		rc = alloc_chunk(x.ctrl, &x.ns, count, &x.buf, &x.chunk_blocks);
	if (rc)
		goto out;
	lbs = x.ns.lba_size;

	catch_signals();
	while (!count || done < count) {
		uint64_t want = x.chunk_blocks;
		uint16_t status = 0;
		bool last;
		size_t got = 0;
		uint32_t n;
		char msg[160];
		int ret;

		if (count && count - done < want)
			want = count - done;
		if (stop_signal) {
			rc = interrupted(done, count);
			break;
		}
		ret = read_full(x.fd, x.buf, (size_t)want * lbs, &got);
		if (ret) {
			rc = stop_signal ? interrupted(done, count) :
					   fail("cannot read '%s': %s", name,
						strerror(-ret));
			break;
		}
		last = got < (size_t)want * lbs;
		if (last) {
			rc = short_input(a, name, count, done, got, lbs);
			if (rc)
				break;
		}
		n = (uint32_t)(got / lbs);
		if (n > x.ns.nlba - lba) {
			written_msg(done, msg, sizeof(msg));
			rc = fail("'%s' continues beyond the end of namespace "
				  "%u (%" PRIu64 " blocks of %u bytes); %s",
				  name, a->nsid, x.ns.nlba, lbs, msg);
			break;
		}
		if (n) {
			ret = nvq_write_sync(x.ctrl, a->nsid, x.buf, lba, n,
					     &status);
			if (ret) {
				rc = fail("write of %u blocks at LBA %" PRIu64
					  " failed: %s",
					  n, lba,
					  io_msg(ret, status, msg,
						 sizeof(msg)));
				break;
			}
			done += n;
			lba += n;
		}
		if (last)
			break;
	}
out:
	xfer_end(&x);
	return rc;
}

static int run_flush(struct args *a)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	uint16_t status = 0;
	char msg[160];
	int rc, ret;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	if (a->nsid != NSID_ALL)
		rc = get_ns(ctrl, a->nsid, &ns);
	if (!rc) {
		ret = nvq_flush_sync(ctrl, a->nsid, &status);
		if (ret)
			rc = fail("flush of namespace %#x failed: %s", a->nsid,
				  io_msg(ret, status, msg, sizeof(msg)));
	}
	nvq_close(ctrl);
	return rc;
}

typedef int (*range_op)(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			uint32_t nlb, uint16_t *status);

/* Write Zeroes or Deallocate over a range, in commands of @max blocks. */
static int run_range(struct args *a, range_op op, uint32_t max,
		     const char *what)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	uint64_t done = 0;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	rc = get_ns(ctrl, a->nsid, &ns);
	if (!rc)
		rc = check_range(&ns, a->slba, a->count);
	if (!rc)
		catch_signals();
	while (!rc && done < a->count) {
		uint64_t left = a->count - done;
		uint32_t n = left < max ? (uint32_t)left : max;
		uint16_t status = 0;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			break;
		}
		ret = op(ctrl, a->nsid, a->slba + done, n, &status);
		if (ret)
			rc = fail("%s of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  what, n, a->slba + done,
				  io_msg(ret, status, msg, sizeof(msg)));
		done += n;
	}
	nvq_close(ctrl);
	return rc;
}

static int run_write_zeroes(struct args *a)
{
	return run_range(a, nvq_write_zeroes_sync, WZ_MAX_BLOCKS,
			 "write zeroes");
}

static int run_trim(struct args *a)
{
	return run_range(a, nvq_deallocate_sync, TRIM_MAX_BLOCKS, "deallocate");
}

/* --- list ---------------------------------------------------------- */

struct pci_nvme {
	char bdf[64];
	char driver[64];
	unsigned int vendor, device;
	char model[41], serial[21], firmware[9];
};

static bool read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	if (!path_join(path, sizeof(path), dir, name))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static unsigned int read_hex(const char *dir, const char *name)
{
	char buf[32];

	if (!read_line(dir, name, buf, sizeof(buf)))
		return 0;
	return (unsigned int)strtoul(buf, NULL, 16);
}

/* Model, serial and firmware of a controller the kernel's nvme owns. */
static void pci_nvme_names(const char *dev, struct pci_nvme *p)
{
	char dir[PATH_MAX], buf[64];
	struct dirent *de;
	DIR *d;

	if (!path_join(dir, sizeof(dir), dev, "nvme"))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];

		if (strncmp(de->d_name, "nvme", 4))
			continue;
		if (!path_join(sub, sizeof(sub), dir, de->d_name))
			continue;
		if (read_line(sub, "model", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->model) - 1, p->model);
		if (read_line(sub, "serial", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->serial) - 1, p->serial);
		if (read_line(sub, "firmware_rev", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->firmware) - 1, p->firmware);
		rtrim(p->model);
		rtrim(p->serial);
		rtrim(p->firmware);
		break;
	}
	closedir(d);
}

/*
 * NVMe controllers (class 01h/08h/02h) in sysfs, sorted by address.
 * NVQ_SYSFS_PCI replaces /sys/bus/pci/devices (for tests).
 */
static int pci_scan(struct pci_nvme **out, size_t *nr)
{
	const char *root = getenv("NVQ_SYSFS_PCI");
	struct dirent **list;
	struct pci_nvme *v = NULL;
	size_t n = 0;
	int entries;

	if (!root || !*root)
		root = "/sys/bus/pci/devices";
	*out = NULL;
	*nr = 0;
	entries = scandir(root, &list, NULL, alphasort);
	if (entries < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < entries; i++) {
		char dev[PATH_MAX], link[PATH_MAX], target[PATH_MAX], cls[32];
		struct pci_nvme *p, *nv;
		ssize_t l;

		if (list[i]->d_name[0] == '.' ||
		    !path_join(dev, sizeof(dev), root, list[i]->d_name) ||
		    !read_line(dev, "class", cls, sizeof(cls)) ||
		    strtoul(cls, NULL, 16) != 0x010802)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		p = &v[n++];
		memset(p, 0, sizeof(*p));
		copy_str(p->bdf, sizeof(p->bdf), list[i]->d_name);
		p->vendor = read_hex(dev, "vendor");
		p->device = read_hex(dev, "device");
		l = -1;
		if (path_join(link, sizeof(link), dev, "driver"))
			l = readlink(link, target, sizeof(target) - 1);
		if (l > 0) {
			target[l] = '\0';
			copy_str(p->driver, sizeof(p->driver),
				 strrchr(target, '/') ?
					 strrchr(target, '/') + 1 :
					 target);
		} else {
			copy_str(p->driver, sizeof(p->driver), "none");
		}
		if (!strcmp(p->driver, "nvme"))
			pci_nvme_names(dev, p);
	}
	for (int i = 0; i < entries; i++)
		free(list[i]);
	free(list);
	*out = v;
	*nr = n;
	return 0;
}

static bool pci_usable(const struct pci_nvme *p)
{
	return !strcmp(p->driver, "vfio-pci");
}

static void si_size(double v, char *buf, size_t len)
{
	static const char *const unit[] = { "", "k", "M", "G", "T", "P", "E" };
	unsigned int i = 0;

	while (v >= 1000 && i + 1 < ARRAY_SIZE(unit)) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%6.2f %2sB", v, unit[i]);
}

static void lba_format(uint32_t lbs, unsigned int ms, char *buf, size_t len)
{
	if (lbs >= 1024 && !(lbs % 1024))
		snprintf(buf, len, "%3u KiB + %2u B", lbs / 1024, ms);
	else
		snprintf(buf, len, "%3u   B + %2u B", lbs, ms);
}

static unsigned int ns_ms(const struct nvq_id_ns *id)
{
	unsigned int f = nvq_flbas_index(id->flbas);

	return f < 64 ? id->lbaf[f].ms : 0;
}

/* The namespaces of one controller, as rows of `nvq list`. */
static int list_ctrl(const char *uri, struct json_writer *w)
{
	const struct nvq_id_ctrl *id;
	struct nvq_ctrl *ctrl;
	uint32_t small[64], *ids = small;
	char sn[21], mn[41], fr[9];
	int n, rc;

	rc = open_ctrl(uri, &ctrl);
	if (rc)
		return rc;
	id = nvq_ctrl_id(ctrl);
	if (!id) {
		nvq_close(ctrl);
		return fail("%s: no Identify Controller data", uri);
	}
	dev_string(id->sn, sizeof(id->sn), sn);
	dev_string(id->mn, sizeof(id->mn), mn);
	dev_string(id->fr, sizeof(id->fr), fr);
	rtrim(sn);
	rtrim(mn);
	rtrim(fr);

	n = nvq_ns_list(ctrl, small, ARRAY_SIZE(small));
	if (n > (int)ARRAY_SIZE(small)) {
		ids = calloc((size_t)n, sizeof(*ids));
		if (!ids) {
			nvq_close(ctrl);
			return fail("out of memory");
		}
		n = nvq_ns_list(ctrl, ids, (unsigned int)n);
	}
	if (n < 0) {
		rc = fail("%s: cannot list namespaces: %s", uri, lib_msg(n));
		n = 0;
	}
	if (!n && !w)
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n", uri, "-", sn,
		       mn, "(no active namespaces)", "", fr);
	for (int i = 0; i < n; i++) {
		struct nvq_ns_info ns;
		char used[32], max[32], fmt[32];

		if (nvq_ns_info(ctrl, ids[i], &ns) || !ns.id)
			continue;
		if (w) {
			json_begin_object(w, NULL);
			json_string(w, "URI", uri);
			json_string(w, "Transport",
				    strncmp(uri, "vfio:", 5) ? "emu" : "pcie");
			json_uint(w, "NameSpace", ns.nsid);
			json_string(w, "Firmware", fr);
			json_string(w, "ModelNumber", mn);
			json_string(w, "SerialNumber", sn);
			json_uint(w, "UsedBytes", ns.id->nuse * ns.lba_size);
			json_uint(w, "MaximumLBA", ns.nlba);
			json_uint(w, "PhysicalSize", ns.nlba * ns.lba_size);
			json_uint(w, "SectorSize", ns.lba_size);
			json_end_object(w);
			continue;
		}
		si_size((double)ns.id->nuse * ns.lba_size, used, sizeof(used));
		si_size((double)ns.nlba * ns.lba_size, max, sizeof(max));
		lba_format(ns.lba_size, ns_ms(ns.id), fmt, sizeof(fmt));
		printf("%-21s %-9u %-20s %-40s %s / %s %-16s %s\n", uri,
		       ns.nsid, sn, mn, used, max, fmt, fr);
	}
	if (ids != small)
		free(ids);
	nvq_close(ctrl);
	return rc;
}

static void list_pci_normal(const struct pci_nvme *p, size_t n)
{
	if (!n) {
		printf("\nNo PCI NVMe controllers found.\n");
		return;
	}
	printf("\nPCI NVMe controllers:\n%-14s %-9s %-10s %-30s %s\n",
	       "Address", "ID", "Driver", "URI", "Model");
	printf("%-14s %-9s %-10s %-30s %s\n", "--------------", "---------",
	       "----------", "------------------------------",
	       "----------------------------------------");
	for (size_t i = 0; i < n; i++) {
		char uri[80];

		if (pci_usable(&p[i]))
			snprintf(uri, sizeof(uri), "vfio:%s", p[i].bdf);
		else
			snprintf(uri, sizeof(uri), "- (bind to vfio-pci)");
		printf("%-14s %04x:%04x %-10s %-30s %s\n", p[i].bdf,
		       p[i].vendor, p[i].device, p[i].driver, uri,
		       p[i].model[0] ? p[i].model : "-");
	}
}

static void list_pci_json(struct json_writer *w, const struct pci_nvme *p,
			  size_t n)
{
	json_begin_array(w, "PCIControllers");
	for (size_t i = 0; i < n; i++) {
		json_begin_object(w, NULL);
		json_string(w, "Address", p[i].bdf);
		json_uint(w, "VendorId", p[i].vendor);
		json_uint(w, "DeviceId", p[i].device);
		json_string(w, "Driver", p[i].driver);
		if (pci_usable(&p[i])) {
			char uri[80];

			snprintf(uri, sizeof(uri), "vfio:%s", p[i].bdf);
			json_string(w, "URI", uri);
		} else {
			json_null(w, "URI");
		}
		if (p[i].model[0]) {
			json_string(w, "ModelNumber", p[i].model);
			json_string(w, "SerialNumber", p[i].serial);
			json_string(w, "Firmware", p[i].firmware);
		}
		json_end_object(w);
	}
	json_end_array(w);
}

static int run_list(struct args *a)
{
	char *def_uri[] = { "emu:" };
	char **uris = a->npos ? a->pos : def_uri;
	int nuris = a->npos ? a->npos : 1;
	struct json_writer w, *wp = NULL;
	struct pci_nvme *pci;
	size_t npci;
	int rc = EXIT_OK, ret;

	if (a->fmt == FMT_JSON) {
		wp = &w;
		json_init(wp, stdout, true);
		json_begin_object(wp, NULL);
		json_begin_array(wp, "Devices");
	} else {
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n", "URI",
		       "Namespace", "SN", "Model", "Usage", "Format", "FW Rev");
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n",
		       "---------------------", "---------",
		       "--------------------",
		       "----------------------------------------",
		       "--------------------------", "----------------",
		       "--------");
	}
	for (int i = 0; i < nuris; i++)
		if (list_ctrl(uris[i], wp))
			rc = EXIT_FAIL;

	ret = pci_scan(&pci, &npci);
	if (ret)
		rc = fail("cannot scan PCI devices: %s", strerror(-ret));
	if (wp) {
		json_end_array(wp);
		list_pci_json(wp, pci, npci);
		json_end_object(wp);
		if (finish_json(wp))
			rc = EXIT_FAIL;
	} else {
		list_pci_normal(pci, npci);
		if (fflush(stdout))
			rc = fail("cannot write to standard output: %s",
				  strerror(errno));
	}
	free(pci);
	return rc;
}

/* --- setup / reset: hand a controller to vfio-pci and back ---------- */

static const char *pci_root(void)
{
	const char *root = getenv("NVQ_SYSFS_PCI");

	return root && *root ? root : "/sys/bus/pci/devices";
}

/* "0000:01:00.0" or "01:00.0" into the canonical form; false if not. */
static bool parse_bdf(const char *s, char *out, size_t len)
{
	unsigned int d = 0, b, dev, f;
	int n = -1;

	if (sscanf(s, "%4x:%2x:%2x.%1x%n", &d, &b, &dev, &f, &n) != 4 || s[n]) {
		n = -1;
		d = 0;
		if (sscanf(s, "%2x:%2x.%1x%n", &b, &dev, &f, &n) != 3 || s[n])
			return false;
	}
	if (strchr(s, '-') || strchr(s, '+') || strchr(s, ' ') || dev > 0x1f ||
	    f > 7)
		return false;
	return snprintf(out, len, "%04x:%02x:%02x.%x", d, b, dev, f) > 0;
}

static int write_attr(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!path_join(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* Last component of the symlink @dir/@name, "none" if there is none. */
static void link_base(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t l = -1;

	if (path_join(path, sizeof(path), dir, name))
		l = readlink(path, target, sizeof(target) - 1);
	if (l <= 0) {
		copy_str(buf, len, "none");
		return;
	}
	target[l] = '\0';
	copy_str(buf, len,
		 strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
}

/* The PID of a process that holds @path open, 0 if none. */
static long holder_of(const char *path, char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	long pid = 0;

	if (!proc)
		return 0;
	while (!pid && (p = readdir(proc))) {
		char fddir[300], fdp[600], target[PATH_MAX];
		struct dirent *f;
		DIR *fds;

		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    snprintf(fddir, sizeof(fddir), "/proc/%.32s/fd",
			     p->d_name) < 0)
			continue;
		fds = opendir(fddir);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			ssize_t l;

			if (!path_join(fdp, sizeof(fdp), fddir, f->d_name))
				continue;
			l = readlink(fdp, target, sizeof(target) - 1);
			if (l > 0 &&
			    (target[l] = '\0', !strcmp(target, path))) {
				pid = atol(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	if (pid) {
		char dir[64];

		snprintf(dir, sizeof(dir), "/proc/%ld", pid);
		if (!read_line(dir, "comm", comm, len))
			copy_str(comm, len, "?");
	}
	return pid;
}

/* A mounted (or swapped-on) namespace of the controller at @dev, if any. */
static bool ns_in_use(const char *dev, char *what, size_t len)
{
	static const char *const tables[] = { "/proc/mounts", "/proc/swaps" };
	char dir[PATH_MAX], ctrl[PATH_MAX], line[1024];
	struct dirent *c, *b;
	DIR *cd, *bd;
	bool busy = false;

	if (!path_join(dir, sizeof(dir), dev, "nvme") || !(cd = opendir(dir)))
		return false;
	while (!busy && (c = readdir(cd))) {
		if (strncmp(c->d_name, "nvme", 4) ||
		    !path_join(ctrl, sizeof(ctrl), dir, c->d_name) ||
		    !(bd = opendir(ctrl)))
			continue;
		while (!busy && (b = readdir(bd))) {
			char name[300];

			if (strncmp(b->d_name, "nvme", 4) ||
			    !strchr(b->d_name, 'n'))
				continue;
			snprintf(name, sizeof(name), "/dev/%s", b->d_name);
			for (size_t t = 0; !busy && t < ARRAY_SIZE(tables);
			     t++) {
				FILE *f = fopen(tables[t], "re");

				while (f && !busy &&
				       fgets(line, sizeof(line), f))
					if (!strncmp(line, name,
						     strlen(name))) {
						busy = true;
						copy_str(what, len, line);
						what[strcspn(what, "\n")] =
							'\0';
					}
				if (f)
					fclose(f);
			}
		}
		closedir(bd);
	}
	closedir(cd);
	return busy;
}

/* Load @mod unless its PCI driver is there already. */
static void load_driver(const char *mod)
{
	char dir[PATH_MAX];
	struct stat st;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/../drivers/%s", pci_root(), mod);
	if (!stat(dir, &st) || getenv("NVQ_SYSFS_PCI"))
		return;
	pid = fork();
	if (pid == 0) {
		execlp("modprobe", "modprobe", mod, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * Move the device at @dev to the driver @drv ("" = whatever matches):
 * driver_override, unbind, drivers_probe - the kernel's documented way.
 */
static int rebind(const char *bdf, const char *dev, const char *drv)
{
	char old[64], probe[PATH_MAX];
	int ret;

	ret = write_attr(dev, "driver_override", drv[0] ? drv : "\n");
	if (ret)
		return fail("%s: cannot write driver_override: %s%s", bdf,
			    strerror(-ret),
			    ret == -EACCES || ret == -EPERM ? " (run as root)" :
							      "");
	link_base(dev, "driver", old, sizeof(old));
	if (strcmp(old, "none")) {
		ret = write_attr(dev, "driver/unbind", bdf);
		if (ret)
			return fail("%s: cannot unbind it from %s: %s", bdf,
				    old, strerror(-ret));
	}
	snprintf(probe, sizeof(probe), "%s/..", pci_root());
	ret = write_attr(probe, "drivers_probe", bdf);
	if (ret && ret != -ENODEV && ret != -EINVAL)
		return fail("%s: drivers_probe failed: %s", bdf,
			    strerror(-ret));
	return EXIT_OK;
}

/* The device directory of the controller named by @arg, or a failure. */
static int nvme_device(const char *arg, char *bdf, size_t blen, char *dev,
		       size_t dlen)
{
	char cls[32];

	if (!parse_bdf(arg, bdf, blen))
		return usage_error(find_cmd("setup"),
				   "'%s' is not a PCI address (DDDD:BB:DD.F, "
				   "as 'nvq list' shows)",
				   arg);
	if (!path_join(dev, dlen, pci_root(), bdf) ||
	    !read_line(dev, "class", cls, sizeof(cls)))
		return fail("no PCI device %s (see 'nvq list')", bdf);
	if (strtoul(cls, NULL, 16) != 0x010802)
		return fail("%s is not an NVMe controller (class %s)", bdf,
			    cls);
	return CONTINUE;
}

static int run_setup(struct args *a)
{
	char bdf[32], dev[PATH_MAX], drv[64], grp[32], busy[256];
	int rc;

	rc = nvme_device(a->pos[0], bdf, sizeof(bdf), dev, sizeof(dev));
	if (rc != CONTINUE)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	link_base(dev, "iommu_group", grp, sizeof(grp));
	if (!strcmp(drv, "vfio-pci")) {
		printf("%s: already bound to vfio-pci (IOMMU group %s); open "
		       "it as vfio:%s\n",
		       bdf, grp, bdf);
		return EXIT_OK;
	}
	if (!strcmp(grp, "none"))
		return fail("%s has no IOMMU group: the IOMMU is off; enable "
			    "VT-d/AMD-Vi in the firmware and boot with "
			    "intel_iommu=on (or amd_iommu=on)",
			    bdf);
	if (ns_in_use(dev, busy, sizeof(busy)))
		return fail("%s is in use by the kernel: %s; unmount it first",
			    bdf, busy);
	load_driver("vfio-pci");
	rc = rebind(bdf, dev, "vfio-pci");
	if (rc)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	if (strcmp(drv, "vfio-pci"))
		return fail("%s: vfio-pci did not take it (driver: %s); is "
			    "vfio-pci loaded? dmesg tells why",
			    bdf, drv);
	printf("%s: bound to vfio-pci; IOMMU group %s (/dev/vfio/%s); open "
	       "it as vfio:%s\n",
	       bdf, grp, grp, bdf);
	return EXIT_OK;
}

static int run_reset(struct args *a)
{
	char bdf[32], dev[PATH_MAX], drv[64], grp[32], path[64], comm[64];
	long pid;
	int rc;

	rc = nvme_device(a->pos[0], bdf, sizeof(bdf), dev, sizeof(dev));
	if (rc != CONTINUE)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	link_base(dev, "iommu_group", grp, sizeof(grp));
	if (!strcmp(drv, "nvme")) {
		printf("%s: already bound to nvme\n", bdf);
		return EXIT_OK;
	}
	/* Unbinding from vfio-pci blocks until its user lets go. */
	snprintf(path, sizeof(path), "/dev/vfio/%s", grp);
	if (!strcmp(drv, "vfio-pci") &&
	    (pid = holder_of(path, comm, sizeof(comm))))
		return fail("%s is in use: process %ld (%s) has %s open; stop "
			    "it first",
			    bdf, pid, comm, path);
	load_driver("nvme");
	rc = rebind(bdf, dev, "");
	if (rc)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	if (strcmp(drv, "nvme"))
		return fail("%s: the nvme driver did not take it (driver: "
			    "%s); is the nvme module available?",
			    bdf, drv);
	printf("%s: returned to the kernel's nvme driver\n", bdf);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* Command table and main                                              */
/* ------------------------------------------------------------------ */

/* clang-format off */
#define HELP_URI \
	"  URI                      the controller: emu:[key=value,...] for the\n" \
	"                           emulator (e.g. emu:file=disk.img,size=64M),\n" \
	"                           vfio:DDDD:BB:DD.F for a PCI function bound to\n" \
	"                           vfio-pci (see 'nvq list')\n"
#define HELP_NSID \
	"  -n, --namespace-id=NSID  namespace id (see 'nvq list')\n"
#define HELP_SLBA \
	"  -s, --start-block=SLBA   first logical block (default 0)\n"
#define HELP_COUNT_NOTE \
	"                           COUNT is 1-based: the number of blocks\n" \
	"                           (nvme-cli's -c is 0-based; nvq -c 8 moves 8)\n"
#define HELP_FMT_BIN \
	"  -o, --output-format=FMT  normal (default), json or binary\n"
#define HELP_HELP \
	"  -h, --help               show this help\n"
#define HELP_NUMBERS \
	"\nNumbers are decimal or 0x-prefixed hex.\n"

static const struct cmd commands[] = {
	{
		.name = "list",
		.run = run_list,
		.opts = OPT_FMT,
		.min_pos = 0,
		.max_pos = -1,
		.synopsis = "[URI...] [-o normal|json]",
		.summary =
			"List the emulated controller (or the controllers given as URIs)\n"
			"with its namespaces, and the PCI NVMe controllers of this machine\n"
			"with their driver and the URI that opens them.\n",
		.help =
			"  URI...                   controllers to list (default: emu:)\n"
			"  -o, --output-format=FMT  normal (default) or json\n"
			HELP_HELP,
	},
	{
		.name = "id-ctrl",
		.run = run_id_ctrl,
		.opts = OPT_FMT | OPT_FMT_BIN,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI [-o normal|json|binary]",
		.summary =
			"Show the Identify Controller data (nvme-cli's field names).\n",
		.help = HELP_URI HELP_FMT_BIN HELP_HELP,
	},
	{
		.name = "id-ns",
		.run = run_id_ns,
		.opts = OPT_NSID | OPT_FMT | OPT_FMT_BIN,
		.required = OPT_NSID,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID [-o normal|json|binary]",
		.summary =
			"Show the Identify Namespace data (nvme-cli's field names); the\n"
			"normal output marks the LBA format in use.\n",
		.help = HELP_URI HELP_NSID HELP_FMT_BIN HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "read",
		.run = run_read,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_DATA,
		.required = OPT_NSID | OPT_COUNT | OPT_DATA,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID [-s SLBA] -c COUNT -d FILE",
		.summary =
			"Read COUNT blocks starting at SLBA into FILE (created or\n"
			"truncated).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks to read\n"
			HELP_COUNT_NOTE
			"  -d, --data=FILE          output file, - for standard output\n"
			HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "write",
		.run = run_write,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_DATA,
		.required = OPT_NSID | OPT_DATA,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID [-s SLBA] [-c COUNT] -d FILE",
		.summary = "Write FILE to the namespace starting at SLBA.\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks to write; the file must\n"
			"                           hold at least that many (default: the\n"
			"                           file's length, which must then be a\n"
			"                           multiple of the LBA size)\n"
			HELP_COUNT_NOTE
			"  -d, --data=FILE          input file, - for standard input\n"
			HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "flush",
		.run = run_flush,
		.opts = OPT_NSID | OPT_NSID_ALL,
		.required = OPT_NSID,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID",
		.summary =
			"Flush the volatile write cache of a namespace (NSID 0xffffffff:\n"
			"all namespaces).\n",
		.help = HELP_URI HELP_NSID HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "write-zeroes",
		.run = run_write_zeroes,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT,
		.required = OPT_NSID | OPT_COUNT,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID [-s SLBA] -c COUNT",
		.summary =
			"Set COUNT blocks starting at SLBA to zeroes (Write Zeroes: no\n"
			"data transfer).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks\n"
			HELP_COUNT_NOTE HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "trim",
		.run = run_trim,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT,
		.required = OPT_NSID | OPT_COUNT,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI -n NSID [-s SLBA] -c COUNT",
		.summary =
			"Deallocate COUNT blocks starting at SLBA (Dataset Management\n"
			"with the Deallocate attribute).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks\n"
			HELP_COUNT_NOTE HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "setup",
		.run = run_setup,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "BDF",
		.summary =
			"Hand the PCI NVMe controller BDF to vfio-pci (driver_override,\n"
			"unbind, drivers_probe) so that nvq can open it as vfio:BDF. Its\n"
			"namespaces disappear from the kernel; refused while one is\n"
			"mounted. Needs root. 'nvq reset BDF' gives it back.\n",
		.help =
			"  BDF                      the controller's PCI address, e.g.\n"
			"                           0000:01:00.0 (see 'nvq list')\n"
			HELP_HELP,
	},
	{
		.name = "reset",
		.run = run_reset,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "BDF",
		.summary =
			"Return the PCI NVMe controller BDF from vfio-pci to the kernel's\n"
			"nvme driver (refused while a process has it open). Needs root.\n",
		.help =
			"  BDF                      the controller's PCI address\n"
			HELP_HELP,
	},
};
/* clang-format on */

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void main_help(FILE *f)
{
	fprintf(f, "usage: nvq <command> [options]\n\n"
		   "Userspace NVMe access through libnvq.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-13s %s\n", commands[i].name,
			commands[i].synopsis);
	fprintf(f,
		"  %-13s show help for a command\n"
		"  %-13s show the version\n\n"
		"URIs: emu:[key=value,...]  the emulated controller, e.g.\n"
		"                           emu:file=disk.img,size=64M,lbads=9\n"
		"      vfio:DDDD:BB:DD.F    a PCI function bound to vfio-pci\n"
		"'nvq <command> --help' describes a command's options.\n"
		"Exit status: 0 success, 1 the operation failed, 2 wrong "
		"usage.\n",
		"help [CMD]", "version");
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	struct args a;
	int rc;

	if (argc < 2)
		return usage_error(NULL, "missing command");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		main_help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("nvq %s\n", NVQ_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2) {
			main_help(stdout);
			return EXIT_OK;
		}
		c = find_cmd(argv[2]);
		if (!c)
			return usage_error(NULL, "no such command '%s'",
					   argv[2]);
		if (argc > 3)
			return usage_error(NULL, "unexpected argument '%s'",
					   argv[3]);
		cmd_help(c);
		return EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);

	memset(&a, 0, sizeof(a));
	rc = parse_args(c, argc - 1, argv + 1, &a);
	if (rc != CONTINUE)
		return rc;
	return c->run(&a);
}
