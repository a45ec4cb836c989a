// SPDX-License-Identifier: MIT
/*
 * nvq-latd's config file parser (tools/latd/config.c): sections, keys,
 * the merge order, and an error with the line number for every kind of
 * mistake a sysadmin makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvq/qos.h>

#include "check.h"
#include "config.h"

static void parses(const char *text, struct latd_config *c)
{
	char err[256] = "";
	int ret = latd_config_parse(text, "t.conf", c, err, sizeof(err));

	if (ret)
		check_failed(__FILE__, __LINE__, "latd_config_parse", "%d: %s",
			     ret, err);
}

/* @text must fail, with @want in the message. */
static void fails(const char *text, const char *want)
{
	struct latd_config c;
	char err[256] = "";
	int ret = latd_config_parse(text, "t.conf", &c, err, sizeof(err));

	printf("\"%.30s...\": %s\n", text, err);
	CHECK_EQ(ret, -EINVAL);
	CHECK_CONTAINS(err, want);
	CHECK_EQ(c.nr_sections, 0);
	CHECK(c.sections == NULL);
}

static void test_good(void)
{
	struct latd_config c;
	struct latd_settings s;

	parses("# nvq-latd\n"
	       "; also a comment\n"
	       "\n"
	       "[defaults]\n"
	       "  cpu_lat_limit_us = auto   # from the idle states\n"
	       "cpu_lat_timeout_ms=5\n"
	       "\n"
	       "[nvme0n1]\r\n"
	       "cpu_lat_limit_us = 0\n"
	       "[ /dev/disk/by-id/nvme-X* ]  ; trailing comment\n"
	       "activity = poll\n"
	       "cpu_lat_timeout_ms = 60000\n"
	       "[nvme[01]n1]\n"
	       "cpu_lat_limit_us = n/a\n"
	       "[sd*]\n"
	       "cpu_lat_limit_us = off\n"
	       "activity = bpf\n"
	       "hysteresis = off\n",
	       &c);
	CHECK_EQ(c.defaults.set, LATD_SET_LIMIT | LATD_SET_TIMEOUT);
	CHECK_EQ(c.defaults.limit_us, NVQ_QOS_AUTO);
	CHECK_EQ(c.defaults.timeout_ms, 5u);
	CHECK_EQ(c.nr_sections, 4);
	CHECK_STREQ(c.sections[0].spec, "nvme0n1");
	CHECK_EQ(c.sections[0].line, 8);
	CHECK_EQ(c.sections[0].s.set, LATD_SET_LIMIT);
	CHECK_EQ(c.sections[0].s.limit_us, 0);
	CHECK_STREQ(c.sections[1].spec, "/dev/disk/by-id/nvme-X*");
	CHECK_EQ(c.sections[1].s.activity, LATD_ACT_POLL);
	CHECK_EQ(c.sections[1].s.timeout_ms, 60000u);
	CHECK_STREQ(c.sections[2].spec, "nvme[01]n1");
	CHECK_EQ(c.sections[2].s.limit_us, 0);
	CHECK_EQ(c.sections[3].s.limit_us, NVQ_QOS_OFF);
	CHECK_EQ(c.sections[3].s.activity, LATD_ACT_BPF);
	CHECK_EQ(c.sections[3].s.set,
		 LATD_SET_LIMIT | LATD_SET_ACTIVITY | LATD_SET_HYSTERESIS);
	CHECK(!c.sections[3].s.hysteresis);

	/* built-in <- [defaults] <- a section, key by key */
	latd_settings_init(&s);
	CHECK_EQ(s.limit_us, NVQ_QOS_OFF);
	CHECK_EQ(s.timeout_ms, 3u);
	CHECK_EQ(s.activity, LATD_ACT_AUTO);
	CHECK(s.hysteresis);
	latd_settings_merge(&s, &c.defaults);
	latd_settings_merge(&s, &c.sections[0].s);
	CHECK_EQ(s.limit_us, 0);
	CHECK_EQ(s.timeout_ms, 5u);
	CHECK_EQ(s.activity, LATD_ACT_AUTO);
	CHECK(s.hysteresis);
	latd_settings_merge(&s, &c.sections[3].s);
	CHECK(!s.hysteresis);
	latd_config_free(&c);

	/* empty file, numbers */
	parses("", &c);
	CHECK_EQ(c.nr_sections, 0);
	CHECK_EQ(c.defaults.set, 0u);
	parses("[a]\ncpu_lat_limit_us = 1000000\n[b]\ncpu_lat_limit_us = -1\n",
	       &c);
	CHECK_EQ(c.sections[0].s.limit_us, 1000000);
	CHECK_EQ(c.sections[1].s.limit_us, NVQ_QOS_OFF);
	latd_config_free(&c);
}

static void test_errors(void)
{
	fails("cpu_lat_limit_us = 0\n", "t.conf:1: cpu_lat_limit_us outside "
					"a section");
	fails("[nvme0n1]\n\ncpu_lat_limt_us = 0\n",
	      "t.conf:3: unknown key \"cpu_lat_limt_us\"");
	fails("[nvme0n1]\ncpu_lat_limit_us = 5x\n",
	      "t.conf:2: bad cpu_lat_limit_us \"5x\"");
	fails("[nvme0n1]\ncpu_lat_limit_us = 1000001\n",
	      "t.conf:2: bad cpu_lat_limit_us");
	fails("[nvme0n1]\ncpu_lat_timeout_ms = 0\n",
	      "t.conf:2: bad cpu_lat_timeout_ms \"0\": use 1..60000 ms");
	fails("[nvme0n1]\ncpu_lat_timeout_ms = 60001\n",
	      "bad cpu_lat_timeout_ms");
	fails("[nvme0n1]\ncpu_lat_timeout_ms = 3ms\n",
	      "bad cpu_lat_timeout_ms");
	fails("[x]\nactivity = ebpf\n",
	      "t.conf:2: bad activity \"ebpf\": use bpf, poll or auto");
	fails("[x]\nactivity =\n", "t.conf:2: activity without a value");
	fails("[x]\nhysteresis = maybe\n",
	      "t.conf:2: bad hysteresis \"maybe\": use on or off");
	fails("[x]\nhysteresis = on\nhysteresis = 0\n",
	      "t.conf:3: hysteresis set twice in [x] (first at line 2)");
	fails("[x]\nactivity poll\n", "t.conf:2: expected \"key = value\"");
	fails("[x\n", "t.conf:1: section header without a closing ']'");
	fails("[]\n", "t.conf:1: empty section name");
	fails("[x] y\n", "t.conf:1: text after the section header: \" y\"");
	fails("[x]\n[y]\n[x]\n", "t.conf:3: section [x] again (first at "
				 "line 1)");
	fails("[defaults]\n[defaults]\n", "t.conf:2: a second [defaults]");
	fails("[x]\nactivity = poll\nactivity = bpf\n",
	      "t.conf:3: activity set twice in [x] (first at line 2)");
}

static void test_long_line(void)
{
	size_t n = 5000;
	char *t = malloc(n + 8);

	CHECK(t != NULL);
	memcpy(t, "[x]\n", 4);
	memset(t + 4, 'a', n);
	t[4 + n] = '\0';
	fails(t, "t.conf:2: line longer than 4096");
	free(t);
}

static void test_load(void)
{
	char path[] = "/tmp/nvq-latd-conf.XXXXXX", err[256];
	struct latd_config c;
	int fd = mkstemp(path);
	static const char text[] = "[nvme0n1]\nactivity = poll\n";

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	CHECK_EQ(latd_config_load(path, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.nr_sections, 1);
	CHECK_EQ(c.sections[0].s.activity, LATD_ACT_POLL);
	latd_config_free(&c);

	/* a NUL byte: not a text file */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "\0", 1), 1);
	close(fd);
	CHECK_EQ(latd_config_load(path, &c, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "NUL byte");
	unlink(path);

	CHECK_EQ(latd_config_load(path, &c, err, sizeof(err)), -ENOENT);
	CHECK_CONTAINS(err, "No such file");
	CHECK_EQ(latd_config_load("/tmp", &c, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "not a regular file");
}

int main(void)
{
	test_good();
	test_errors();
	test_long_line();
	test_load();
	printf("ok\n");
	return T_EXIT_PASS;
}
