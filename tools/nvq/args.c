// SPDX-License-Identifier: MIT
/*
 * nvq's command line: the options a command takes, their values (numbers
 * are decimal or 0x-prefixed hex, nothing else) and usage errors, which
 * exit with status 2 and say how to get help.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int usage_error(const struct cmd *c, const char *fmt, ...)
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

/* getopt codes of the options without a short name; a command's own
 * option i (struct xopt) is XOPT_CODE + i */
enum { LONG_IO_TMO = 256, LONG_ADMIN_TMO, XOPT_CODE = 1024 };

static const struct option_def {
	unsigned int flag;
	int short_name; /* or a LONG_* code */
	const char *long_name;
} option_defs[] = {
	{ OPT_NSID, 'n', "namespace-id" },
	{ OPT_SLBA, 's', "start-block" },
	{ OPT_COUNT, 'c', "block-count" },
	{ OPT_DATA, 'd', "data" },
	{ OPT_FMT, 'o', "output-format" },
	{ OPT_IO_TMO, LONG_IO_TMO, "io-timeout-ms" },
	{ OPT_ADMIN_TMO, LONG_ADMIN_TMO, "admin-timeout-ms" },
	{ OPT_DSIZE, 'z', "data-size" },
	{ OPT_FUA, 'f', "force-unit-access" },
	{ OPT_MD, 'M', "metadata" },
	{ OPT_MDSIZE, 'y', "metadata-size" },
	{ OPT_PRINFO, 'p', "prinfo" },
	{ OPT_REFTAG, 'r', "ref-tag" },
	{ OPT_APPTAG, 'a', "app-tag" },
	{ OPT_APPMASK, 'm', "app-tag-mask" },
};

/* The options that take no value (the rest need one) */
#define OPTS_NO_VALUE OPT_FUA

/* "-n/--namespace-id", or "--io-timeout-ms" for a long-only option. */
static const char *opt_name(const struct option_def *o, char *buf, size_t len)
{
	if (o->short_name < 256)
		snprintf(buf, len, "-%c/--%s", o->short_name, o->long_name);
	else
		snprintf(buf, len, "--%s", o->long_name);
	return buf;
}

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
	char name[48];

	if (ret == -EINVAL)
		return usage_error(c,
				   "invalid value '%s' for %s: expected "
				   "a decimal or 0x-prefixed hex number",
				   s, opt_name(o, name, sizeof(name)));
	if (ret == -ERANGE)
		return usage_error(c,
				   "value '%s' for %s is out of range "
				   "(max %" PRIu64 ")",
				   s, opt_name(o, name, sizeof(name)), max);
	return 0;
}

/* A command timeout: 1 ms to an hour (0 would mean "the default"). */
static int timeout_arg(const struct cmd *c, const struct option_def *o,
		       const char *s, unsigned int *out)
{
	char name[48];
	uint64_t v;
	int ret = num_arg(c, o, s, NVQ_TIMEOUT_MS_MAX, &v);

	if (ret)
		return ret;
	if (!v)
		return usage_error(c, "%s must be at least 1 (milliseconds)",
				   opt_name(o, name, sizeof(name)));
	*out = (unsigned int)v;
	return 0;
}

/* "-l/--log-len" or "--lsp" */
static const char *xopt_name(const struct xopt *x, char *buf, size_t len)
{
	if (x->short_name)
		snprintf(buf, len, "-%c/--%s", x->short_name, x->long_name);
	else
		snprintf(buf, len, "--%s", x->long_name);
	return buf;
}

/* The command's own option that getopt returned as @code, or -1. */
static int xopt_index(const struct cmd *c, int code)
{
	if (code >= XOPT_CODE && code < XOPT_CODE + c->nxopts)
		return code - XOPT_CODE;
	for (int i = 0; i < c->nxopts; i++)
		if (c->xopts[i].short_name && c->xopts[i].short_name == code)
			return i;
	return -1;
}

static int xopt_arg(const struct cmd *c, int i, const char *s, struct args *a)
{
	const struct xopt *x = &c->xopts[i];
	char name[64];
	int ret;

	switch (x->kind) {
	case XOPT_FLAG:
		a->x[i] = 1;
		break;
	case XOPT_NUM:
		ret = parse_num(s, x->max, &a->x[i]);
		if (ret == -EINVAL)
			return usage_error(c,
					   "invalid value '%s' for %s: "
					   "expected a decimal or 0x-prefixed "
					   "hex number",
					   s, xopt_name(x, name, sizeof(name)));
		if (ret == -ERANGE)
			return usage_error(c,
					   "value '%s' for %s is out of range "
					   "(max %" PRIu64 ")",
					   s, xopt_name(x, name, sizeof(name)),
					   x->max);
		break;
	case XOPT_STR:
		if (!*s)
			return usage_error(c, "empty value for %s",
					   xopt_name(x, name, sizeof(name)));
		a->xs[i] = s;
		break;
	}
	a->xseen |= 1u << i;
	return 0;
}

/*
 * A command's own options must not reuse a letter or name of its shared
 * ones, nor each other's: a programming error, caught by the --help test.
 */
static void check_xopts(const struct cmd *c)
{
	if (c->nxopts > XOPT_MAX)
		goto bad;
	for (int i = 0; i < c->nxopts; i++) {
		const struct xopt *x = &c->xopts[i];

		if (x->short_name == 'h' || !strcmp(x->long_name, "help"))
			goto bad;
		for (size_t j = 0; j < ARRAY_SIZE(option_defs); j++)
			if ((c->opts & option_defs[j].flag) &&
			    ((x->short_name &&
			      x->short_name == option_defs[j].short_name) ||
			     !strcmp(x->long_name, option_defs[j].long_name)))
				goto bad;
		for (int k = 0; k < i; k++)
			if ((x->short_name &&
			     x->short_name == c->xopts[k].short_name) ||
			    !strcmp(x->long_name, c->xopts[k].long_name))
				goto bad;
	}
	return;
bad:
	fprintf(stderr, "nvq %s: internal error: clashing options\n", c->name);
	abort();
}

void cmd_help(const struct cmd *c)
{
	printf("usage: nvq %s %s\n\n%s\n%s", c->name, c->synopsis, c->summary,
	       c->help);
}

int parse_args(const struct cmd *c, int argc, char **argv, struct args *a)
{
	struct option longopts[ARRAY_SIZE(option_defs) + XOPT_MAX + 2];
	char optstring[2 * (ARRAY_SIZE(option_defs) + XOPT_MAX) + 4] = ":h";
	unsigned int seen = 0, n = 0;
	size_t len = strlen(optstring);
	uint64_t v;
	int o, ret;

	for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++) {
		if (!(c->opts & option_defs[i].flag))
			continue;
		longopts[n++] =
			(struct option){ option_defs[i].long_name,
					 (option_defs[i].flag & OPTS_NO_VALUE) ?
						 no_argument :
						 required_argument,
					 NULL, option_defs[i].short_name };
		if (option_defs[i].short_name >= 256)
			continue; /* long only */
		optstring[len++] = (char)option_defs[i].short_name;
		if (!(option_defs[i].flag & OPTS_NO_VALUE))
			optstring[len++] = ':';
	}
	check_xopts(c);
	for (int i = 0; i < c->nxopts; i++) {
		const struct xopt *x = &c->xopts[i];
		int has_arg = x->kind == XOPT_FLAG ? no_argument :
						     required_argument;

		longopts[n++] = (struct option){ x->long_name, has_arg, NULL,
						 x->short_name ?
							 x->short_name :
							 XOPT_CODE + i };
		if (!x->short_name)
			continue;
		optstring[len++] = (char)x->short_name;
		if (has_arg == required_argument)
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
		const struct option_def *od;
		int xi = o == ':' ? xopt_index(c, optopt) : xopt_index(c, o);

		if (xi >= 0 && o != ':') {
			ret = xopt_arg(c, xi, optarg, a);
			if (ret)
				return ret;
			continue;
		}
		if (xi >= 0) {
			char name[64];

			return usage_error(c, "%s needs a value",
					   xopt_name(&c->xopts[xi], name,
						     sizeof(name)));
		}
		od = option_by_short(o);
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
					   "at least 1 (nvq's COUNT is the "
					   "number of blocks, 1-based; "
					   "nvme-cli's -c 0 is nvq's -c 1)");
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
		case 'z':
			ret = num_arg(c, od, optarg, UINT64_MAX, &a->data_size);
			if (ret)
				return ret;
			if (!a->data_size)
				return usage_error(c, "-z/--data-size must be "
						      "at least 1 (bytes)");
			a->has_data_size = true;
			break;
		case 'f':
			a->fua = true;
			break;
		case 'M':
			if (!*optarg)
				return usage_error(c, "empty file name for "
						      "-M/--metadata");
			a->metadata = optarg;
			break;
		case 'y':
			ret = num_arg(c, od, optarg, UINT64_MAX, &a->md_size);
			if (ret)
				return ret;
			a->has_md_size = true;
			break;
		case 'p':
			ret = num_arg(c, od, optarg, 15, &v);
			if (ret)
				return ret;
			a->prinfo = (uint8_t)v;
			break;
		case 'r':
			ret = num_arg(c, od, optarg, UINT32_MAX, &v);
			if (ret)
				return ret;
			a->ref_tag = (uint32_t)v;
			a->has_ref_tag = true;
			break;
		case 'a':
			ret = num_arg(c, od, optarg, UINT16_MAX, &v);
			if (ret)
				return ret;
			a->app_tag = (uint16_t)v;
			a->has_app_tag = true;
			break;
		case 'm':
			ret = num_arg(c, od, optarg, UINT16_MAX, &v);
			if (ret)
				return ret;
			a->app_tag_mask = (uint16_t)v;
			a->has_app_tag_mask = true;
			break;
		case LONG_IO_TMO:
			ret = timeout_arg(c, od, optarg, &a->io_timeout_ms);
			if (ret)
				return ret;
			break;
		case LONG_ADMIN_TMO:
			ret = timeout_arg(c, od, optarg, &a->admin_timeout_ms);
			if (ret)
				return ret;
			break;
		case ':': {
			char name[48];

			od = option_by_short(optopt);
			if (od)
				return usage_error(c, "%s needs a value",
						   opt_name(od, name,
							    sizeof(name)));
			return usage_error(c, "option '%s' needs a value",
					   argv[optind - 1]);
		}
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
		return usage_error(
			c, "missing %s",
			c->pos_name ? c->pos_name :
				      "URI of the controller (" URI_FORMS ")");
	if (c->max_pos >= 0 && a->npos > c->max_pos)
		return usage_error(c, "unexpected argument '%s'",
				   a->pos[c->max_pos]);
	for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++) {
		const struct option_def *od = &option_defs[i];

		char name[48];

		if (!(c->required & od->flag) || (seen & od->flag))
			continue;
		/*
		 * A URI with a '/' may end in /NSID: whether it does is the
		 * library's grammar, read when open_ctrl() opens it.
		 */
		if (od->flag == OPT_NSID && a->npos && strchr(a->pos[0], '/')) {
			a->need_nsid = true;
			continue;
		}
		return usage_error(c, "missing %s",
				   opt_name(od, name, sizeof(name)));
	}
	for (int i = 0; i < c->nxopts; i++) {
		char name[64];

		if (c->xopts[i].required && !xhas(a, i))
			return usage_error(c, "missing %s",
					   xopt_name(&c->xopts[i], name,
						     sizeof(name)));
	}
	if (c->required_any && !(seen & c->required_any)) {
		char list[160] = "";
		size_t l = 0;

		for (size_t i = 0; i < ARRAY_SIZE(option_defs); i++) {
			const struct option_def *od = &option_defs[i];
			char name[48];

			if (!(c->required_any & od->flag))
				continue;
			l += (size_t)snprintf(list + l, sizeof(list) - l,
					      "%s%s", l ? " or " : "",
					      opt_name(od, name, sizeof(name)));
			if (l >= sizeof(list))
				break;
		}
		return usage_error(c, "missing %s", list);
	}
	if (a->has_nsid && a->nsid == 0 && !(c->opts & OPT_NSID_ZERO))
		return usage_error(c, "namespace id 0 is not valid for %s",
				   c->name);
	if (a->has_nsid && a->nsid == NVQ_NSID_ALL && !(c->opts & OPT_NSID_ALL))
		return usage_error(c,
				   "namespace id 0xffffffff (all namespaces) "
				   "is not valid for %s",
				   c->name);
	return CONTINUE;
}
