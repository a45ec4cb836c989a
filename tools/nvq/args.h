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
	char **pos; /* positional arguments */
	int npos;
};

struct cmd {
	const char *name;
	int (*run)(struct args *a);
	unsigned int opts; /* OPT_* accepted */
	unsigned int required; /* OPT_* that must be given */
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
