/* SPDX-License-Identifier: MIT */
/*
 * nvq-latd's settings: the config file (INI-style, docs/nvq-latd.md
 * "CONFIGURATION") and the command line's values.
 *
 *   [defaults]                    every disk's settings
 *   cpu_lat_limit_us = auto
 *   [nvme0n1]                     a disk name, a /dev path or a glob
 *   cpu_lat_limit_us = 0
 *   [/dev/disk/by-id/nvme-*]
 *   cpu_lat_timeout_ms = 10
 *
 * A disk takes the built-in defaults, then [defaults], then every section
 * that names it in the order of the file (later ones win, key by key),
 * then the command line's options.
 */
#ifndef NVQ_LATD_CONFIG_H
#define NVQ_LATD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* How the daemon learns that a disk is busy. */
enum latd_activity {
	LATD_ACT_AUTO = 0, /* BPF where it loads, else polling */
	LATD_ACT_BPF = 1,
	LATD_ACT_POLL = 2,
};

/* Which keys a struct latd_settings sets (the others are inherited). */
#define LATD_SET_LIMIT 1u
#define LATD_SET_TIMEOUT 2u
#define LATD_SET_ACTIVITY 4u
#define LATD_SET_HYSTERESIS 8u

struct latd_settings {
	unsigned int set; /* LATD_SET_* */
	int limit_us; /* NVQ_QOS_OFF, NVQ_QOS_AUTO or >= 0 */
	unsigned int timeout_ms;
	enum latd_activity activity;
	/* on: nvq_qos_set_hysteresis() (docs/nvq-latd.md, the default) */
	bool hysteresis;
};

#define LATD_SPEC_MAX 256

struct latd_section {
	char spec[LATD_SPEC_MAX]; /* as written between the brackets */
	int line;
	struct latd_settings s;
};

struct latd_config {
	struct latd_settings defaults; /* [defaults] */
	int nr_sections;
	struct latd_section *sections; /* disk sections, in file order */
};

/* The built-in defaults: limit off, timeout 3 ms, activity auto,
 * hysteresis on. */
void latd_settings_init(struct latd_settings *s);

/* Copy the keys @src sets over @dst. */
void latd_settings_merge(struct latd_settings *dst,
			 const struct latd_settings *src);

/*
 * Parse one value; 0, or -EINVAL with the reason in @err ("bad ..."),
 * without the key's name or a line number.
 */
int latd_parse_limit(const char *s, int *limit_us, char *err, size_t len);
int latd_parse_timeout(const char *s, unsigned int *ms, char *err, size_t len);
int latd_parse_activity(const char *s, enum latd_activity *a, char *err,
			size_t len);
int latd_parse_hysteresis(const char *s, bool *on, char *err, size_t len);

const char *latd_activity_name(enum latd_activity a);

/*
 * Parse the file @path (read whole) into @c. Returns 0, or a negative
 * errno with "FILE:LINE: what is wrong" (or "FILE: why it cannot be read")
 * in @err; @c is then empty. Free with latd_config_free().
 */
int latd_config_load(const char *path, struct latd_config *c, char *err,
		     size_t len);

/* The same for a text in memory; @name stands for the file in messages. */
int latd_config_parse(const char *text, const char *name, struct latd_config *c,
		      char *err, size_t len);

void latd_config_free(struct latd_config *c);

#endif
