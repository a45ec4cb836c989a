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
	OPT_RW = OPT_DSIZE | OPT_FUA,
	OPT_RW_MD = OPT_MD | OPT_MDSIZE | OPT_PRINFO | OPT_REFTAG | OPT_APPTAG |
		    OPT_APPMASK,
};

/* Most a command timeout may be (the library's limit: one hour). */

struct cmd;

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
	/* read/write: -z bytes of -d, -f, and the metadata/PI options */
	uint64_t data_size, md_size;
	const char *metadata;
	uint8_t prinfo; /* nvme-cli's -p: bit 3 PRACT, bits 2:0 PRCHK */
	uint32_t ref_tag;
	uint16_t app_tag, app_tag_mask;
	bool has_data_size, has_md_size, has_ref_tag, has_app_tag,
		has_app_tag_mask, fua;
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
	const char *synopsis; /* after "nvq NAME " */
	const char *summary;
	const char *help; /* description and options, for --help */
};

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
