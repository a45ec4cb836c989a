/* SPDX-License-Identifier: MIT */
/* nvq's command table entries and the arguments parsed for them. */
#ifndef NVQ_TOOL_ARGS_H
#define NVQ_TOOL_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* parse_args() result meaning "go on and run the command" */
#define CONTINUE (-1)

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
	OPT_IO_TMO = 1 << 7, /* --io-timeout-ms */
	OPT_ADMIN_TMO = 1 << 8, /* --admin-timeout-ms */
	OPT_TIMEOUTS = OPT_IO_TMO | OPT_ADMIN_TMO,
	/* read/write, with nvme-cli's names and letters */
	OPT_DSIZE = 1 << 9, /* -z/--data-size */
	OPT_FUA = 1 << 10, /* -f/--force-unit-access */
	OPT_MD = 1 << 11, /* -M/--metadata */
	OPT_MDSIZE = 1 << 12, /* -y/--metadata-size */
	OPT_PRINFO = 1 << 13, /* -p/--prinfo */
	OPT_REFTAG = 1 << 14, /* -r/--ref-tag */
	OPT_APPTAG = 1 << 15, /* -a/--app-tag */
	OPT_APPMASK = 1 << 16, /* -m/--app-tag-mask */
	OPT_NSID_ZERO = 1 << 17, /* -n 0 allowed (Get Log Page: no namespace) */
	OPT_RW = OPT_DSIZE | OPT_FUA,
	OPT_RW_MD = OPT_MD | OPT_MDSIZE | OPT_PRINFO | OPT_REFTAG | OPT_APPTAG |
		    OPT_APPMASK,
};

/* Most a command timeout may be (the library's limit: one hour). */

/* The --help lines the commands share */
/* clang-format off */
#define HELP_URI \
	"  URI                      the controller: emu:[key=value,...] for the\n" \
	"                           emulator (e.g. emu:file=disk.img,size=64M),\n" \
	"                           vfio:DDDD:BB:DD.F for a PCI function bound to\n" \
	"                           vfio-pci (see 'nvq list'),\n" \
	"                           tcp:HOST[:PORT],nqn=NQN[,...] for NVMe/TCP\n" \
	"                           (docs/tcp.md); /NSID at the end (emu:ns=2/2,\n" \
	"                           vfio:0000:01:00.0/1) names a namespace\n"
#define HELP_NSID \
	"  -n, --namespace-id=NSID  namespace id (see 'nvq list'); optional when\n" \
	"                           the URI ends in /NSID (both: they must agree)\n"
#define HELP_SLBA \
	"  -s, --start-block=SLBA   first logical block (default 0)\n"
#define HELP_COUNT_NOTE \
	"                           COUNT is 1-based: the number of blocks\n" \
	"                           (nvme-cli's -c is 0-based; nvq -c 8 moves 8)\n"
#define HELP_RW \
	"  -z, --data-size=BYTES    bytes of FILE to move: whole blocks; alone it\n" \
	"                           gives COUNT, with -c it must agree with it\n" \
	"  -f, --force-unit-access  FUA: on the medium before completion\n" \
	"  -M, --metadata=FILE      separate metadata (ms bytes per block); with\n" \
	"                           extended LBAs it travels in FILE of -d\n" \
	"  -y, --metadata-size=N    bytes of -M; must be COUNT x ms\n" \
	"  -p, --prinfo=N           as nvme-cli: 8 PRACT (the controller inserts\n" \
	"                           or strips the PI), 4 check the guard, 2 the\n" \
	"                           application tag, 1 the reference tag\n" \
	"  -r, --ref-tag=N          reference tag of SLBA, +1 a block (types 1, 2;\n" \
	"                           type 1 default: SLBA, as it must be)\n" \
	"  -a, --app-tag=N          application tag\n" \
	"  -m, --app-tag-mask=N     application tag bits to check\n"
#define HELP_FMT_BIN \
	"  -o, --output-format=FMT  normal (default), json or binary\n"
#define HELP_TIMEOUTS \
	"      --io-timeout-ms=N    I/O command timeout, 1..3600000 ms\n" \
	"                           (default: the library's, 30000)\n" \
	"      --admin-timeout-ms=N admin command timeout, 1..3600000 ms\n" \
	"                           (default: the library's, 60000)\n"
#define HELP_HELP \
	"  -h, --help               show this help\n"
#define HELP_NUMBERS \
	"\nNumbers are decimal or 0x-prefixed hex.\n"

/* clang-format on */

struct cmd;

/*
 * A command's own options (struct cmd.xopts). nvme-cli gives one letter
 * different meanings in different commands (-s is --sel in get-feature,
 * --ses in format), so these are declared per command, beside its code,
 * and their values land in args.x[] / args.xs[] at their index in the
 * command's table. A letter must not also be one of the command's OPT_*
 * options (the --help test catches that: parse_args aborts).
 */
enum xopt_kind {
	XOPT_FLAG, /* no value; x[i] = 1 */
	XOPT_NUM, /* decimal or 0x hex, at most .max; x[i] */
	XOPT_STR, /* any non-empty string; xs[i] */
};

struct xopt {
	int short_name; /* 0: long only */
	const char *long_name;
	enum xopt_kind kind;
	uint64_t max; /* XOPT_NUM: the largest value */
	bool required;
};

#define XOPT_MAX 32

struct args {
	const struct cmd *cmd;
	uint32_t nsid;
	uint64_t slba;
	uint64_t count;
	const char *data;
	enum out_fmt fmt;
	/* command timeouts for nvq_opts; 0 = the library's default */
	unsigned int io_timeout_ms, admin_timeout_ms;
	bool has_nsid, has_count;
	/* -n is required but was not given: the URI's /NSID must name it
	 * (open_ctrl() takes it from nvq_ctrl_uri_nsid()) */
	bool need_nsid;
	/* read/write: -z bytes of -d, -f, and the metadata/PI options */
	uint64_t data_size, md_size;
	const char *metadata;
	uint8_t prinfo; /* nvme-cli's -p: bit 3 PRACT, bits 2:0 PRCHK */
	uint32_t ref_tag;
	uint16_t app_tag, app_tag_mask;
	bool has_data_size, has_md_size, has_ref_tag, has_app_tag,
		has_app_tag_mask, fua;
	/* the command's own options: values and which were given */
	uint64_t x[XOPT_MAX];
	const char *xs[XOPT_MAX];
	uint32_t xseen;
	char **pos; /* positional arguments */
	int npos;
};

struct cmd {
	const char *name;
	int (*run)(struct args *a);
	unsigned int opts; /* OPT_* accepted */
	unsigned int required; /* OPT_* that must be given */
	unsigned int required_any; /* at least one of these OPT_* */
	int min_pos, max_pos; /* positional arguments; max -1 = any */
	const char *pos_name; /* a missing one, for the message; NULL: URI */
	const struct xopt *xopts; /* the command's own options */
	int nxopts;
	const char *synopsis; /* after "nvq NAME " */
	const char *summary;
	const char *help; /* description and options, for --help */
};

/* Was the command's own option @i given? */
static inline bool xhas(const struct args *a, int i)
{
	return a->xseen & (1u << i);
}

/*
 * Parse the command's options and positional arguments into @a.
 * Returns CONTINUE, or the exit status when the command must not run
 * (EXIT_OK after --help, EXIT_USAGE after a usage error).
 */
int parse_args(const struct cmd *c, int argc, char **argv, struct args *a);

/* The command's --help text, on standard output. */
void cmd_help(const struct cmd *c);

/* Report wrong usage of @c (NULL: of nvq itself) and return EXIT_USAGE. */
int usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* NVQ_TOOL_ARGS_H */
