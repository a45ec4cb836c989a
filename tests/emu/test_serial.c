// SPDX-License-Identifier: MIT
/*
 * Identify's serial number: the first RAM controller of a process with
 * the same options has the same serial in every process (scripts key on
 * it), two controllers of one process differ, other options give another
 * serial, and sn= sets it (space-padded, as SN is) or is refused when it
 * cannot be one.
 */
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "harness.h"

/* The serial of a fresh controller with @params, NUL-terminated. */
static void serial(const char *params, char out[21])
{
	struct h *h = h_open(params);
	struct nvq_id_ctrl *id;

	h_enable(h);
	id = h_alloc(h, 4096, NULL);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	memcpy(out, id->sn, 20);
	out[20] = 0;
	h_close(h);
}

int main(int argc, char **argv)
{
	char a[21], b[21], c[21], d[21], e[21], line[4096];
	struct nvq_emu_params p;
	FILE *f;

	if (argc == 2 && !strcmp(argv[1], "--print")) {
		serial("size=16M", a);
		printf("%s\n", a);
		return 0;
	}
	serial("size=16M", a);
	serial("size=16M", b);
	serial("size=32M", c);
	serial("size=16M,sn=disk-7", d);
	printf("serials: '%s' '%s' '%s' '%s'\n", a, b, c, d);
	CHECK(strcmp(a, b) != 0);
	CHECK(strcmp(a, c) != 0);
	CHECK(!strcmp(d, "disk-7              "));

	/* Another process, same options, first controller: the same. */
	/* Cut short, "--print" would be lost and the child would run this
	 * again, recursively: a fork bomb in a worktree with a long path. */
	CHECK((size_t)snprintf(line, sizeof(line), "'%s' --print", argv[0]) <
	      sizeof(line));
	f = popen(line, "r");
	CHECK(f != NULL);
	CHECK(fgets(e, sizeof(e), f) != NULL);
	CHECK_EQ(pclose(f), 0);
	e[strcspn(e, "\n")] = 0;
	printf("first controller of another process: '%s'\n", e);
	CHECK(!strcmp(a, e));

	nvq_emu_params_default(&p);
	CHECK_EQ(nvq_emu_params_parse("sn=", &p), -EINVAL);
	CHECK_EQ(nvq_emu_params_parse("sn=123456789012345678901", &p), -EINVAL);
	CHECK_EQ(nvq_emu_params_parse("sn=tab\there", &p), -EINVAL);
	CHECK_EQ(nvq_emu_params_parse("sn=12345678901234567890", &p), 0);
	printf("emu-serial: ok\n");
	return 0;
}
