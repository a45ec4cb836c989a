/* SPDX-License-Identifier: MIT */
/*
 * nvq-perf command line: one struct perf_config per compared configuration
 * and the options that apply to the whole invocation.
 */
#ifndef NVQ_PERF_OPTIONS_H
#define NVQ_PERF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <nvq/nvq.h>

/* Most configurations one --compare may name. */
#define PERF_MAX_CONFIGS 16

/* Defaults the help text promises. */
#define PERF_DEFAULT_URI "emu:"
#define PERF_DEFAULT_BS 4096u
#define PERF_DEFAULT_QD 32u
#define PERF_DEFAULT_TIME_NS (5ull * 1000000000ull)
#define PERF_DEFAULT_SEED 0x6e7671706572665full
#define PERF_DEFAULT_ROUNDS 3u
/* fio's io_uring_cmd defaults */
#define PERF_DEFAULT_APPTAG 0x1234u
#define PERF_DEFAULT_APPTAG_MASK 0xffffu

enum perf_rw {
	PERF_RW_READ, /* sequential read */
	PERF_RW_WRITE, /* sequential write */
	PERF_RW_RANDREAD,
	PERF_RW_RANDWRITE,
	PERF_RW_RANDRW, /* random mix, --rwmix percent reads */
	PERF_RW_RW, /* sequential mix, --rwmix percent reads */
};

/*
 * One workload on one device. Every option with the "config" scope lands
 * here, so that --compare can vary any of them; later knobs (QoS, media
 * profiles) are new fields plus one row in the option table.
 */
struct perf_config {
	const char *label; /* the --compare text, or NULL for a single run */
	const char *uri; /* -d */
	enum perf_rw rw;
	unsigned int rwmix; /* percent reads for the mixed workloads */
	bool rwmix_set;
	uint64_t bs; /* bytes per I/O */
	unsigned int qd; /* requests in flight per thread */
	unsigned int threads; /* job threads, one I/O queue each */
	uint64_t time_ns; /* measured run time, 0 = not given */
	uint64_t ios; /* measured I/Os per thread, 0 = not given */
	uint64_t ramp_ns; /* warm-up before measuring */
	uint64_t offset; /* first byte of the region */
	uint64_t size; /* region length in bytes, 0 = to the namespace end */
	uint64_t seed;
	uint32_t nsid; /* 0 = the first active namespace */
	enum nvq_mode mode;
	bool exclusive; /* nvq_opts.exclusive: lock-free owner queues */
	bool verify;
	/* --lock single: nvq_opts.bench_single_lock (split-lock baseline) */
	bool single_lock;
	bool lock_set;
	bool shared_queue; /* every thread on I/O queue 0 */
	/* CPU latency QoS (nvq/qos.h): NVQ_QOS_OFF, NVQ_QOS_AUTO or us */
	int cpu_lat_limit_us;
	unsigned int cpu_lat_timeout_ms; /* 0 = the library's default */
	/* how the limit is honoured: nvq_opts.cpu_lat_method */
	enum nvq_qos_method cpu_lat_method;
	bool cpu_lat_method_set;
	/* Pacing: a lane submits its next I/O think_ns after its last one
	 * completed; a job submits at most rate_iops I/Os per second.
	 * 0 = off. */
	uint64_t think_ns;
	uint64_t rate_iops;
	/* Command timeouts (nvq_opts), 0 = the library's default */
	unsigned int io_timeout_ms;
	unsigned int admin_timeout_ms;
	/*
	 * Protection information (docs/perf.md), fio's io_uring_cmd
	 * options: PRACT (the controller inserts and strips the PI) or the
	 * host generating it; the PRCHK bits (NVQ_IO_PRCHK_*, default
	 * guard and, types 1 and 2, reference tag when not @pi_chk_set);
	 * the application tag and mask; host checks of what reads return.
	 */
	bool pi_act;
	bool pi_chk_set;
	unsigned int pi_chk;
	uint16_t apptag;
	uint16_t apptag_mask;
	bool pi_verify;
};

/* The whole invocation. */
struct perf_opts {
	struct perf_config base; /* options outside --compare */
	/* configurations to run: the base alone, or one per --compare set */
	struct perf_config configs[PERF_MAX_CONFIGS];
	unsigned int nr_configs;
	bool compare; /* --compare given */
	const char *compare_text;
	unsigned int rounds; /* runs per configuration */
	bool rounds_set;
	bool json;
	const char *plot; /* --plot FILE.svg or NULL */
	char *strbuf; /* owns the split --compare text */
};

/* perf_opts_parse() results for --help and --version. */
#define PERF_OPTS_HELP 1
#define PERF_OPTS_VERSION 2

/*
 * Parse @argc/@argv (argv[0] is the program name) into @o. Returns 0,
 * PERF_OPTS_HELP when --help was given, PERF_OPTS_VERSION for --version,
 * or -EINVAL with a message naming
 * the offending option and value in @err. @argv must outlive @o.
 */
int perf_opts_parse(struct perf_opts *o, int argc, char **argv, char *err,
		    size_t errlen);

/* Free what perf_opts_parse() allocated. */
void perf_opts_free(struct perf_opts *o);

/* Print the --help text. */
void perf_usage(FILE *f);

/* The --rw spelling of @rw ("randread" ...). */
const char *perf_rw_name(enum perf_rw rw);

/* The --mode spelling of @mode ("poll" ...). */
const char *perf_mode_name(enum nvq_mode mode);

/* True for workloads that pick offsets at random. */
bool perf_rw_random(enum perf_rw rw);

/* Percentage of reads @c issues (100 for read-only, 0 for write-only). */
unsigned int perf_read_pct(const struct perf_config *c);

/*
 * Number parsers behind the options, exposed for the tests. Each returns 0
 * or -EINVAL (garbage, sign, overflow) / -ERANGE (outside the limits).
 */
/* Bytes: decimal or 0x hex with an optional k/m/g/t suffix (powers of
 * 1024, optionally followed by "b" or "ib"). */
int perf_parse_size(const char *s, uint64_t *out);
/* Durations: a decimal number with unit ns, us, ms, s, m (minutes) or h;
 * a bare number is seconds. */
int perf_parse_time(const char *s, uint64_t *ns);
/* Unsigned integer in [@min, @max], decimal or 0x hex, no suffix. */
int perf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* --cpu-lat-limit-us: off (or -1), auto, 0 (or n/a) or N microseconds
 * (up to NVQ_QOS_LIMIT_MAX); NVQ_QOS_OFF / NVQ_QOS_AUTO / N in *@us. */
int perf_parse_cpu_lat(const char *s, int *us);
/* The --cpu-lat-limit-us spelling of @us ("off", "auto", "0", "50"). */
const char *perf_cpu_lat_name(int us, char *buf, size_t len);
/* --cpu-lat-method: auto, cpuidle, poll or hybrid (the library's parser);
 * 0 or -EINVAL. */
int perf_parse_cpu_lat_method(const char *s, enum nvq_qos_method *m);

/*
 * --pi-chk: a comma-separated list of GUARD, REFTAG, APPTAG (any case),
 * or "none", into NVQ_IO_PRCHK_* bits; 0 or -EINVAL.
 */
int perf_parse_pi_chk(const char *s, unsigned int *flags);
/* The --pi-chk spelling of @flags ("GUARD,REFTAG", "none"). */
const char *perf_pi_chk_name(unsigned int flags, char *buf, size_t len);

/* Most --rate-iops takes: one I/O per nanosecond. */
#define PERF_RATE_IOPS_MAX 1000000000ull

#endif /* NVQ_PERF_OPTIONS_H */
