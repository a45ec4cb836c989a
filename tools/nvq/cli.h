/* SPDX-License-Identifier: MIT */
/*
 * What the files of the nvq tool share: exit statuses, messages, opening
 * a controller, and the commands the table in main.c runs.
 */
#ifndef NVQ_TOOL_CLI_H
#define NVQ_TOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvq/nvq.h>

#include "args.h"
#include "json.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* A command ended by signal @sig exits as a shell reports a process killed
 * by it: 130 for SIGINT, 143 for SIGTERM. */
static inline int exit_for_signal(int sig)
{
	return 128 + sig;
}

#define URI_FORMS                                                           \
	"emu:[key=value,...] (the emulated controller), vfio:DDDD:BB:DD.F " \
	"(a PCI function bound to vfio-pci) or tcp:HOST[:PORT],nqn=NQN "    \
	"(NVMe/TCP)"

/* output.c */

/* Report a failed operation as "nvq: <what>" and return EXIT_FAIL. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Exit status for a command whose output is complete on stdout. */
int flush_stdout(void);
/* The same for JSON output: json_finish() and its failure. */
int finish_json(struct json_writer *w);
/* Why a library call failed: its own message, else the errno text. */
const char *lib_msg(int err);
/* Why a command failed, with the NVMe status when the device gave one. */
const char *io_msg(int err, uint16_t status, char *buf, size_t len);
/* A device string of @len bytes as printable ASCII in @dst (len + 1). */
void dev_string(const void *src, size_t len, char *dst);
/* @s without its trailing spaces. */
char *rtrim(char *s);
/*
 * Before destroying data: CONTINUE with --force (@force) or when the user
 * answers y on the terminal; else the exit status (EXIT_USAGE when
 * standard input is not a terminal, EXIT_FAIL when the answer is no).
 */
int confirm(const struct cmd *c, bool force, const char *what);

/* ctrl.c */

/*
 * The arguments of the command that runs (main.c sets them): opening its
 * URI (a->pos[0]) reconciles -n with the URI's /NSID.
 */
void set_cmd_args(struct args *a);
/*
 * Open @uri for one command at a time; EXIT_FAIL with a message if not.
 * When @uri is the command's URI and the command takes -n, a /NSID on it
 * fills a missing -n; EXIT_USAGE (the controller closed) when -n names
 * another namespace, or when a required -n is missing from both.
 */
int open_ctrl(const char *uri, struct nvq_ctrl **ctrl);
/* open_ctrl() without messages or -n: 0 or the library's -errno. */
int try_open_ctrl(const char *uri, struct nvq_ctrl **ctrl);
/*
 * Open the controller of an I/O command (a->pos[0]): one queue whose
 * completions are waited for on its interrupt (NVQ_MODE_WAIT), so that
 * waiting can be cut into slices that notice a signal.
 */
int open_ctrl_io(const struct args *a, struct nvq_ctrl **ctrl);
/* The active namespace @nsid; EXIT_FAIL naming the active ones if not. */
int get_ns(struct nvq_ctrl *ctrl, uint32_t nsid, struct nvq_ns_info *ns);

/* human.c: the bit fields of Identify field @name (value @v; @dec128
 * the decimal text of a 128-bit one), as nvme-cli -H; nothing for a
 * field without any */
void human_field(const char *name, uint64_t v, const char *dec128);

/* identify.c: -H/--human-readable of id-ctrl and id-ns */
extern const struct xopt id_human_xopts[1];
/* identify.c */

/* The 128-bit little-endian integer @src in decimal (at most 39 digits). */
void u128_str(const uint8_t *src, char out[40]);

/* io.c */

/* Write all of @buf to @fd; -EINTR once SIGINT/SIGTERM arrived. */
int write_full(int fd, const void *buf, size_t len);

/* passthru.c */

/* nvme-cli's hex dump (its d()): offset, 16 bytes, their ASCII. */
void hex_dump(const void *buf, size_t len);
/* nvme-cli's "NVMe status: <text>(0x...)" line, on standard error. */
void show_nvme_status(uint16_t status);

/* pci.c */

/* An NVMe controller that sysfs lists. */
struct pci_nvme {
	char bdf[64];
	char driver[64];
	unsigned int vendor, device;
	char model[41], serial[21], firmware[9];
};

/* The NVMe controllers in sysfs, sorted by address; 0 or -errno. */
int pci_scan(struct pci_nvme **out, size_t *nr);

/* A namespace the kernel's nvme driver made a block device of. */
struct kernel_ns {
	char ctrl[32]; /* "nvme0": /dev/nvme0, the controller's char device */
	char block[48]; /* "nvme0n1": /dev/nvme0n1 */
	char generic[48]; /* "ng0n1": /dev/ng0n1, the generic char device */
	int index; /* the controller's instance, 0 of nvme0 */
	uint32_t nsid; /* 0 if sysfs does not say */
	uint64_t bytes; /* the block device's size */
	uint32_t lba_size; /* logical block size */
	int ms; /* metadata bytes per block, -1 if sysfs does not say */
};

/*
 * The controllers (nvmeX) and namespaces of @p, bound to the kernel's
 * nvme driver, from sysfs: BDF/nvme/nvmeX/nvmeXnY, or with native
 * multipath the path nvmeXcYnZ whose block device nvmeXnZ is in
 * /sys/class/nvme-subsystem/nvme-subsysX/. *@ctrls gets the controller
 * names ("nvme0"; "" if none). Sorted by name; 0 or -errno.
 */
int pci_kernel_ns(const struct pci_nvme *p, char *ctrls, size_t len,
		  struct kernel_ns **out, size_t *nr);

/* pci.ids' "VENDOR DEVICE" names of @vendor:@device into @buf; false if
 * the file or the IDs are not there. */
bool pci_ids_name(unsigned int vendor, unsigned int device, char *buf,
		  size_t len);

/* The commands (main.c's table) */
int run_list(struct args *a);
int run_id_ctrl(struct args *a);
int run_id_ns(struct args *a);
int run_read(struct args *a);
int run_write(struct args *a);
int run_flush(struct args *a);
int run_write_zeroes(struct args *a);
int run_trim(struct args *a);
int run_stats(struct args *a);
int run_setup(struct args *a);
int run_release(struct args *a);
int run_reset(struct args *a);

/* The commands declared beside their code (main.c's more_commands[]) */
extern const struct cmd format_cmd;
extern const struct cmd sanitize_cmd;
/* Commands with their own options (main.c's more_commands[]) */
extern const struct cmd smart_log_cmd; /* log.c */
extern const struct cmd error_log_cmd; /* log.c */
extern const struct cmd fw_log_cmd; /* log.c */
extern const struct cmd sanitize_log_cmd; /* log.c */
extern const struct cmd get_log_cmd; /* log.c */
/* Commands with their own options (main.c's more_commands[]) */
extern const struct cmd get_feature_cmd;
extern const struct cmd set_feature_cmd;
extern const struct cmd admin_passthru_cmd;
extern const struct cmd io_passthru_cmd;

#endif /* NVQ_TOOL_CLI_H */
