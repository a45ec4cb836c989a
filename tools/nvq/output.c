// SPDX-License-Identifier: MIT
/*
 * How nvq reports: a failure as one "nvq: ..." line on standard error with
 * the exit status it means, and the checks that output on standard output
 * really arrived; also the cleaning of the strings a device reports.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

/* Report a failed operation as "nvq: <what>" and return EXIT_FAIL. */
int fail(const char *fmt, ...)
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
int flush_stdout(void)
{
	if (fflush(stdout))
		return fail("cannot write to standard output: %s",
			    strerror(errno));
	return EXIT_OK;
}

/* Why a library call failed: its own message, else the errno text. */
const char *lib_msg(int err)
{
	const char *m = nvq_errmsg();

	return m && *m ? m : strerror(-err);
}

/* Why a command failed, with the NVMe status when the device gave one. */
const char *io_msg(int err, uint16_t status, char *buf, size_t len)
{
	if (err == -EIO && status) {
		snprintf(buf, len, "%s (NVMe status: SCT %#x SC %#x%s)",
			 nvq_status_str(status), NVQ_SCT(status),
			 NVQ_SC(status), NVQ_DNR(status) ? ", DNR" : "");
		return buf;
	}
	return lib_msg(err);
}

int finish_json(struct json_writer *w)
{
	int ret = json_finish(w);

	if (ret)
		return fail("cannot write JSON to standard output: %s",
			    strerror(-ret));
	return EXIT_OK;
}

/*
 * Copy @len bytes of a device string (space padded, maybe NUL
 * terminated early) into @dst (len + 1 bytes). Whatever the device put
 * there, the result is printable ASCII, hence also valid UTF-8 for JSON.
 */
void dev_string(const void *src, size_t len, char *dst)
{
	const unsigned char *s = src;
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '.';
	dst[i] = '\0';
}

char *rtrim(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

/*
 * Ask before a command destroys data, as nvme-cli warns before a format:
 * --force skips the question. With standard input not a terminal there
 * is no one to ask, so nothing is done without --force.
 */
int confirm(const struct cmd *c, bool force, const char *what)
{
	char line[64];

	if (force)
		return CONTINUE;
	if (!isatty(STDIN_FILENO))
		return usage_error(
			c,
			"standard input is not a terminal, so "
			"there is no one to confirm the %s: add --force "
			"to %s without asking",
			what, c->name);
	fprintf(stderr,
		"Use the force [--force] option to suppress this "
		"question.\nPress y to confirm the %s: ",
		what);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (!strcmp(line, "y") || !strcmp(line, "Y") ||
	    !strcasecmp(line, "yes"))
		return CONTINUE;
	return fail("%s not confirmed (answer '%s', not y): nothing was "
		    "changed",
		    what, line);
}
