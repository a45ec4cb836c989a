/* SPDX-License-Identifier: MIT */
/* nvq-perf option parsing: accepted spellings and every rejection path. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "options.h"

static char err[512];

/* Parse a NULL-terminated list of words after the program name. */
static int parse(struct perf_opts *o, const char **words)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)"nvq-perf";
	while (*words)
		argv[argc++] = (char *)*words++;
	argv[argc] = NULL;
	return perf_opts_parse(o, argc, argv, err, sizeof(err));
}

#define ARGS(...) ((const char *[]){ __VA_ARGS__, NULL })

/* @words must fail with -EINVAL and a message containing @needle. */
static void reject(const char **words, const char *needle, int line)
{
	struct perf_opts o;
	int rc = parse(&o, words);

	if (rc != -EINVAL) {
		fprintf(stderr, "%s:%d: expected -EINVAL, got %d\n", __FILE__,
			line, rc);
		check_exit_fail();
	} else if (!strstr(err, needle)) {
		fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__,
			line, err, needle);
		check_exit_fail();
	}
	perf_opts_free(&o);
}

#define REJECT(needle, ...) reject(ARGS(__VA_ARGS__), needle, __LINE__)

static void test_numbers(void)
{
	uint64_t v;

	CHECK(!perf_parse_size("4k", &v) && v == 4096);
	CHECK(!perf_parse_size("4K", &v) && v == 4096);
	CHECK(!perf_parse_size("128KiB", &v) && v == 131072);
	CHECK(!perf_parse_size("1m", &v) && v == 1048576);
	CHECK(!perf_parse_size("2g", &v) && v == 2ull << 30);
	CHECK(!perf_parse_size("1tb", &v) && v == 1ull << 40);
	CHECK(!perf_parse_size("512", &v) && v == 512);
	CHECK(!perf_parse_size("512b", &v) && v == 512);
	CHECK(!perf_parse_size("0x1000", &v) && v == 4096);
	CHECK(perf_parse_size("", &v) == -EINVAL);
	CHECK(perf_parse_size("-4k", &v) == -EINVAL);
	CHECK(perf_parse_size("4x", &v) == -EINVAL);
	CHECK(perf_parse_size("4kk", &v) == -EINVAL);
	CHECK(perf_parse_size("k", &v) == -EINVAL);
	CHECK(perf_parse_size(" 4k", &v) == -EINVAL);
	CHECK(perf_parse_size("99999999999999999999", &v) == -EINVAL);
	CHECK(perf_parse_size("16777216t", &v) == -EINVAL); /* 2^64 */

	CHECK(!perf_parse_time("10s", &v) && v == 10000000000ull);
	CHECK(!perf_parse_time("10", &v) && v == 10000000000ull);
	CHECK(!perf_parse_time("500ms", &v) && v == 500000000ull);
	CHECK(!perf_parse_time("2m", &v) && v == 120000000000ull);
	CHECK(!perf_parse_time("2min", &v) && v == 120000000000ull);
	CHECK(!perf_parse_time("1h", &v) && v == 3600000000000ull);
	CHECK(!perf_parse_time("100us", &v) && v == 100000ull);
	CHECK(!perf_parse_time("7ns", &v) && v == 7);
	CHECK(!perf_parse_time("1.5s", &v) && v == 1500000000ull);
	CHECK(!perf_parse_time("0.25ms", &v) && v == 250000ull);
	CHECK(perf_parse_time("", &v) == -EINVAL);
	CHECK(perf_parse_time("s", &v) == -EINVAL);
	CHECK(perf_parse_time("-1s", &v) == -EINVAL);
	CHECK(perf_parse_time("1.s", &v) == -EINVAL);
	CHECK(perf_parse_time("10x", &v) == -EINVAL);
	CHECK(perf_parse_time("10 s", &v) == -EINVAL);
	CHECK(perf_parse_time("99999999999h", &v) == -EINVAL);

	CHECK(!perf_parse_uint("42", 1, 100, &v) && v == 42);
	CHECK(!perf_parse_uint("0x2a", 1, 100, &v) && v == 42);
	CHECK(perf_parse_uint("0", 1, 100, &v) == -ERANGE);
	CHECK(perf_parse_uint("101", 1, 100, &v) == -ERANGE);
	CHECK(perf_parse_uint("4k", 1, 10000, &v) == -EINVAL);
	CHECK(perf_parse_uint("+4", 1, 10, &v) == -EINVAL);
	CHECK(perf_parse_uint("0x", 0, 10, &v) == -EINVAL);
	CHECK(!perf_parse_uint("18446744073709551615", 0, UINT64_MAX, &v) &&
	      v == UINT64_MAX);
	CHECK(perf_parse_uint("18446744073709551616", 0, UINT64_MAX, &v) ==
	      -EINVAL);
}

static void test_defaults(void)
{
	struct perf_opts o;
	const struct perf_config *c = &o.configs[0];

	CHECK(parse(&o, ARGS(NULL)) == 0);
	CHECK(o.nr_configs == 1 && !o.compare && o.rounds == 1);
	CHECK(!strcmp(c->uri, "emu:"));
	CHECK(c->rw == PERF_RW_RANDREAD && c->bs == 4096 && c->qd == 32);
	CHECK(c->threads == 1 && c->mode == NVQ_MODE_POLL);
	CHECK(c->time_ns == PERF_DEFAULT_TIME_NS && !c->ios);
	CHECK(!o.json && !o.plot && !c->verify);
	perf_opts_free(&o);

	/* --verify without a length makes one pass: no default time. */
	CHECK(parse(&o, ARGS("--verify", "--rw", "write")) == 0);
	CHECK(!o.configs[0].time_ns && !o.configs[0].ios);
	perf_opts_free(&o);

	CHECK(parse(&o, ARGS("--ios", "10")) == 0);
	CHECK(!o.configs[0].time_ns && o.configs[0].ios == 10);
	perf_opts_free(&o);
}

static void test_all_options(void)
{
	struct perf_opts o;
	const struct perf_config *c = &o.configs[0];

	CHECK(parse(&o,
		    ARGS("--rw", "randwrite", "--bs=128k", "--qd", "8",
			 "--threads", "2", "--time", "1.5s", "--ios", "1000",
			 "--ramp", "250ms", "--offset", "1m", "--size", "16m",
			 "--seed", "0x10", "--nsid", "2", "--mode", "wait",
			 "-d", "emu:size=64M,lat=10us", "--json", "--plot",
			 "out.svg", "--verify", "--exclusive")) == 0);
	CHECK(c->rw == PERF_RW_RANDWRITE && c->bs == 131072 && c->qd == 8);
	CHECK(c->threads == 2 && c->time_ns == 1500000000ull);
	CHECK(c->ios == 1000 && c->ramp_ns == 250000000ull);
	CHECK(c->offset == 1048576 && c->size == 16777216 && c->seed == 16);
	CHECK(c->nsid == 2 && c->mode == NVQ_MODE_WAIT);
	CHECK(!strcmp(c->uri, "emu:size=64M,lat=10us"));
	CHECK(o.json && !strcmp(o.plot, "out.svg") && c->verify);
	CHECK(c->exclusive);
	perf_opts_free(&o);

	CHECK(parse(&o, ARGS("-demu:lat=1us", "--rw=randrw", "--rwmix=70",
			     "--mode=thread")) == 0);
	CHECK(!strcmp(c->uri, "emu:lat=1us") && c->rw == PERF_RW_RANDRW);
	CHECK(c->rwmix == 70 && perf_read_pct(c) == 70);
	CHECK(c->mode == NVQ_MODE_THREAD);
	perf_opts_free(&o);

	CHECK(parse(&o, ARGS("--rw", "read")) == 0 && perf_read_pct(c) == 100);
	perf_opts_free(&o);
	CHECK(parse(&o, ARGS("--rw", "write")) == 0 && !perf_read_pct(c));
	perf_opts_free(&o);
	CHECK(parse(&o, ARGS("--rw", "rw")) == 0 && perf_read_pct(c) == 50);
	perf_opts_free(&o);

	CHECK(parse(&o, ARGS("--help")) == PERF_OPTS_HELP);
	perf_opts_free(&o);
	CHECK(parse(&o, ARGS("--qd", "4", "-h")) == PERF_OPTS_HELP);
	perf_opts_free(&o);
}

static void test_compare(void)
{
	struct perf_opts o;

	CHECK(parse(&o, ARGS("--bs", "8k", "--compare",
			     " --qd 1 ; --qd 2 --mode 'wait' ;--mode=thread",
			     "--time", "1s")) == 0);
	CHECK(o.compare && o.nr_configs == 3);
	CHECK(o.rounds == PERF_DEFAULT_ROUNDS);
	/* Base options apply to every set, wherever they appear. */
	CHECK(o.configs[0].bs == 8192 && o.configs[2].bs == 8192);
	CHECK(o.configs[0].time_ns == 1000000000ull);
	CHECK(o.configs[2].time_ns == 1000000000ull);
	CHECK(o.configs[0].qd == 1 && o.configs[1].qd == 2);
	CHECK(o.configs[2].qd == PERF_DEFAULT_QD);
	CHECK(o.configs[1].mode == NVQ_MODE_WAIT);
	CHECK(o.configs[2].mode == NVQ_MODE_THREAD);
	CHECK(!strcmp(o.configs[0].label, "--qd 1"));
	CHECK(!strcmp(o.configs[1].label, "--qd 2 --mode 'wait'"));
	CHECK(!strcmp(o.configs[2].label, "--mode=thread"));
	perf_opts_free(&o);

	CHECK(parse(&o, ARGS("--compare", "--qd 1", "--rounds", "5")) == 0);
	CHECK(o.nr_configs == 1 && o.rounds == 5);
	perf_opts_free(&o);

	/* --rounds alone repeats the single configuration. */
	CHECK(parse(&o, ARGS("--rounds", "4")) == 0);
	CHECK(o.nr_configs == 1 && o.rounds == 4 && !o.compare);
	perf_opts_free(&o);
}

static void test_rejects(void)
{
	REJECT("--bs", "--bs", "abc");
	REJECT("--bs", "--bs", "0");
	REJECT("--bs", "--bs", "-4k");
	REJECT("--bs", "--bs", "4x");
	REJECT("--bs", "--bs", "");
	REJECT("--bs", "--bs", "2g");
	REJECT("--bs", "--bs");
	REJECT("--qd", "--qd", "0");
	REJECT("--qd", "--qd", "70000");
	REJECT("--qd", "--qd", "1.5");
	REJECT("--threads", "--threads", "0");
	REJECT("--threads", "--threads", "many");
	REJECT("--time", "--time", "10x");
	REJECT("--time", "--time", "0");
	REJECT("--time", "--time", "-1s");
	REJECT("--time", "--time", "");
	REJECT("--ios", "--ios", "0");
	REJECT("--ios", "--ios", "1k");
	REJECT("--ramp", "--ramp", "soon");
	REJECT("--offset", "--offset", "xyz");
	REJECT("--size", "--size", "0");
	REJECT("--seed", "--seed", "nope");
	REJECT("--nsid", "--nsid", "0");
	REJECT("--nsid", "--nsid", "0xffffffff");
	REJECT("--mode", "--mode", "spin");
	REJECT("--rw", "--rw", "rand");
	REJECT("--rwmix", "--rwmix", "101");
	REJECT("--rwmix", "--rwmix", "50");
	REJECT("--rwmix", "--rw", "read", "--rwmix", "50");
	REJECT("--verify", "--rw", "randrw", "--verify");
	REJECT("--exclusive", "--mode", "thread", "--exclusive");
	REJECT("--rounds", "--rounds", "0");
	REJECT("--plot", "--plot", "");
	REJECT("--device", "-d", "");
	REJECT("--foo", "--foo");
	REJECT("--foo", "--foo=1");
	REJECT("-x", "-x");
	REJECT("stray", "stray");
	REJECT("--verify", "--verify=1");
	REJECT("--json", "--json=yes");
	REJECT("--compare", "--compare", "");
	REJECT("--compare", "--compare", "--qd 1;;--qd 2");
	REJECT("--compare", "--compare", "--qd 1;");
	REJECT("--json", "--compare", "--qd 1;--json");
	REJECT("--rounds", "--compare", "--rounds 2");
	REJECT("--qd", "--compare", "--qd 1;--qd x");
	REJECT("configuration 2", "--compare", "--qd 1;--qd x");
	REJECT("quote", "--compare", "--mode 'poll");
	REJECT("--rwmix", "--compare", "--rwmix 10");
	REJECT("--bogus", "--compare", "--bogus");
}

/* The split-lock comparison's switches. */
static void test_lock(void)
{
	struct perf_opts o;

	CHECK(!parse(&o, ARGS("--threads", "4")));
	CHECK(!o.configs[0].single_lock && !o.configs[0].shared_queue);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--shared-queue", "--threads", "4", "--lock",
			      "single")));
	CHECK(o.configs[0].single_lock && o.configs[0].shared_queue);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--shared-queue", "--threads", "3", "--compare",
			      "--lock split;--lock single")));
	CHECK_EQ(o.nr_configs, 2);
	CHECK(!o.configs[0].single_lock && o.configs[1].single_lock);
	CHECK(o.configs[0].shared_queue && o.configs[1].shared_queue);
	CHECK_EQ(o.configs[1].threads, 3);
	perf_opts_free(&o);

	REJECT("--lock", "--lock", "double");
	REJECT("--lock", "--lock");
	REJECT("--lock", "--lock", "");
	REJECT("--lock", "--exclusive", "--lock", "split");
	REJECT("--shared-queue", "--exclusive", "--threads", "2",
	       "--shared-queue");
	REJECT("--shared-queue", "--shared-queue=1");
	REJECT("--lock", "--compare", "--lock single;--lock none");
}

/* --cpu-lat-method, --think-time, --rate-iops. */
static void test_pacing_method(void)
{
	static const struct {
		const char *name;
		enum nvq_qos_method m;
	} methods[] = {
		{ "auto", NVQ_QOS_METHOD_AUTO },
		{ "cpuidle", NVQ_QOS_METHOD_CPUIDLE },
		{ "poll", NVQ_QOS_METHOD_POLL },
		{ "hybrid", NVQ_QOS_METHOD_HYBRID },
	};
	const struct perf_config *c;
	enum nvq_qos_method m;
	struct perf_opts o;
	unsigned int i;

	CHECK(!parse(&o, ARGS("--qd", "1")));
	c = &o.configs[0];
	CHECK(c->cpu_lat_method == NVQ_QOS_METHOD_AUTO);
	CHECK(!c->cpu_lat_method_set && !c->think_ns && !c->rate_iops);
	perf_opts_free(&o);

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		CHECK(!parse(&o, ARGS("--cpu-lat-method", methods[i].name)));
		CHECK_EQ(o.configs[0].cpu_lat_method, methods[i].m);
		CHECK(o.configs[0].cpu_lat_method_set);
		perf_opts_free(&o);
		CHECK(!perf_parse_cpu_lat_method(methods[i].name, &m));
		CHECK_EQ(m, methods[i].m);
	}
	m = NVQ_QOS_METHOD_POLL;
	CHECK(perf_parse_cpu_lat_method("none", &m) == -EINVAL);
	CHECK(perf_parse_cpu_lat_method("", &m) == -EINVAL);
	CHECK(perf_parse_cpu_lat_method(NULL, &m) == -EINVAL);
	CHECK_EQ(m, NVQ_QOS_METHOD_POLL); /* untouched on failure */

	CHECK(!parse(&o, ARGS("--think-time", "2ms", "--rate-iops", "500")));
	CHECK_EQ(o.configs[0].think_ns, 2000000ull);
	CHECK_EQ(o.configs[0].rate_iops, 500ull);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--think-time=100us", "--rate-iops=0x10")));
	CHECK_EQ(o.configs[0].think_ns, 100000ull);
	CHECK_EQ(o.configs[0].rate_iops, 16ull);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--think-time", "1.5s")));
	CHECK_EQ(o.configs[0].think_ns, 1500000000ull);
	perf_opts_free(&o);
	/* 0 turns pacing off; a bare number is seconds, as for --time */
	CHECK(!parse(&o, ARGS("--think-time", "0", "--rate-iops", "0")));
	CHECK(!o.configs[0].think_ns && !o.configs[0].rate_iops);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--think-time", "2")));
	CHECK_EQ(o.configs[0].think_ns, 2000000000ull);
	perf_opts_free(&o);
	CHECK(!parse(&o, ARGS("--rate-iops", "1000000000")));
	CHECK_EQ(o.configs[0].rate_iops, PERF_RATE_IOPS_MAX);
	perf_opts_free(&o);

	/* All three are per configuration: --compare varies them. */
	CHECK(!parse(&o, ARGS("--cpu-lat-limit-us", "0", "--think-time", "1ms",
			      "--compare",
			      "--cpu-lat-method poll;--cpu-lat-method hybrid "
			      "--think-time 0;--rate-iops 100 --mode wait")));
	CHECK_EQ(o.nr_configs, 3);
	CHECK_EQ(o.configs[0].cpu_lat_method, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(o.configs[1].cpu_lat_method, NVQ_QOS_METHOD_HYBRID);
	CHECK_EQ(o.configs[2].cpu_lat_method, NVQ_QOS_METHOD_AUTO);
	CHECK(!o.configs[2].cpu_lat_method_set);
	CHECK_EQ(o.configs[0].think_ns, 1000000ull);
	CHECK_EQ(o.configs[1].think_ns, 0ull);
	CHECK_EQ(o.configs[2].think_ns, 1000000ull);
	CHECK_EQ(o.configs[2].rate_iops, 100ull);
	CHECK(!o.configs[0].rate_iops && !o.configs[1].rate_iops);
	CHECK_EQ(o.configs[1].cpu_lat_limit_us, 0);
	perf_opts_free(&o);

	REJECT("--cpu-lat-method", "--cpu-lat-method", "spin");
	REJECT("--cpu-lat-method", "--cpu-lat-method", "none");
	REJECT("--cpu-lat-method", "--cpu-lat-method", "");
	REJECT("--cpu-lat-method", "--cpu-lat-method", "POLL");
	REJECT("--cpu-lat-method", "--cpu-lat-method");
	REJECT("expected auto, cpuidle, poll or hybrid", "--cpu-lat-method",
	       "x");
	REJECT("--think-time", "--think-time", "-1ms");
	REJECT("--think-time", "--think-time", "2x");
	REJECT("--think-time", "--think-time", "");
	REJECT("--think-time", "--think-time", "ms");
	REJECT("--think-time", "--think-time", "2 ms");
	REJECT("--think-time", "--think-time", "400d");
	REJECT("--think-time", "--think-time");
	REJECT("--rate-iops", "--rate-iops", "-1");
	REJECT("--rate-iops", "--rate-iops", "1k");
	REJECT("--rate-iops", "--rate-iops", "1.5");
	REJECT("--rate-iops", "--rate-iops", "1000000001");
	REJECT("--rate-iops", "--rate-iops", "");
	REJECT("--rate-iops", "--rate-iops");
	REJECT("configuration 2", "--compare",
	       "--cpu-lat-method poll;--cpu-lat-method fast");
	REJECT("--cpu-lat-method", "--compare", "--cpu-lat-method");
	REJECT("--think-time", "--compare", "--think-time 1ms;--think-time x");
	REJECT("--rate-iops", "--compare", "--qd 1;--rate-iops -5");
}

int main(void)
{
	test_numbers();
	test_pacing_method();
	test_lock();
	test_defaults();
	test_all_options();
	test_compare();
	test_rejects();
	return T_EXIT_PASS;
}
