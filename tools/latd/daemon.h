/* SPDX-License-Identifier: MIT */
/*
 * nvq-latd's daemon state, shared by its files:
 *
 *   main.c     command line, `nvq-latd status` (the client)
 *   daemon.c   disks, the QoS core per disk, both activity sources,
 *              signals, reload, the main loop, sd_notify
 *   status.c   the status report (text and JSON) the socket sends
 */
#ifndef NVQ_LATD_DAEMON_H
#define NVQ_LATD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "latd.h"

struct nvq_qos_ctrl;
struct nvq_qos_queue;

/* What the command line asked for. */
struct latd_opts {
	const char *config; /* NULL: no config file */
	struct latd_settings cli; /* overrides every disk's settings */
	char **devices; /* DEVICE... */
	int nr_devices;
	struct latd_roots roots;
	const char *sysfs_root_opt; /* --sysfs-root, NULL if not given */
	const char *socket; /* NULL: the default */
	unsigned int rescan_ms; /* re-discovery period */
};

/* A QoS queue of a disk: per submitting CPU (BPF) or per disk (poll). */
struct ldisk_queue {
	int slot; /* BPF slot, -1 for the poll queue */
	int cpu; /* submitting CPU, -1 for the poll queue */
	struct nvq_qos_queue *qq;
	cpu_set_t cpus;
};

#define LDISK_MAX_SLOTS 8

struct ldisk {
	struct latd_disk d;
	struct latd_settings s; /* merged: defaults, sections, command line */
	char from[160]; /* the specs that named it: "nvme0n1, [nvme*]" */
	enum latd_activity mode; /* LATD_ACT_BPF or LATD_ACT_POLL, running */
	char mode_why[160];
	struct nvq_qos_ctrl *qc;
	bool mark; /* still wanted in this reconciliation */

	/* poll source */
	uint64_t counter; /* bumped when the stat file changes */
	uint8_t idle; /* the QoS core's flag */
	uint64_t last_sum;
	bool have_sum;
	uint64_t next_ns;
	uint64_t interval_ns;
	char stat_err[160]; /* last failure to read the stat file, "" */

	/* BPF source: the slots of the disk's dev_t's (paths of a head) */
	int nr_slots;
	int slots[LDISK_MAX_SLOTS];
	unsigned int slot_major[LDISK_MAX_SLOTS], slot_minor[LDISK_MAX_SLOTS];

	int nr_queues;
	struct ldisk_queue *queues;
};

struct latd {
	struct latd_opts o;
	char socket_path[108];
	struct latd_config cfg;
	bool have_cfg;

	struct ldisk *disks[LATD_MAX_DISKS];
	int nr_disks;

	struct latd_bpf *bpf;
	int bpf_err; /* 0 loaded, else why not (bpf_why) */
	bool bpf_tried;
	char bpf_why[256];
	struct ldisk *slot_owner[LATD_MAX_DISKS];

	/* what the last start or resolution said per spec, to log changes */
	char spec_msgs[LATD_MAX_DISKS][600];

	uint64_t started_ns;
	uint64_t next_rescan_ns;
	unsigned int reloads, reload_failures;
	char last_reload[256];
};

/* Run the daemon; returns the exit status. */
int latd_daemon_run(const struct latd_opts *o);

/* The status report, @json or text, to @f. */
void latd_status_write(struct latd *L, FILE *f, bool json);

/* Format @set as a kernel CPU list ("0-3,8"); "" when empty. */
void latd_cpulist(const cpu_set_t *set, char *buf, size_t len);

/* The default socket path: /run/nvq-latd.sock, or under $XDG_RUNTIME_DIR
 * where /run is not writable (@for_server) or has no socket (client). */
void latd_default_socket(char *buf, size_t len, bool for_server);

#endif
