// SPDX-License-Identifier: MIT
/*
 * sanitize: the Sanitize command (NVMe Base 2.0, 5.24 and 8.21) with
 * nvme-cli 2.3's options, what SANICAP does not offer refused before
 * anything is sent. nvme-cli returns once the controller accepted it;
 * -w/--wait (nvq's) follows the Sanitize Status log (81h) to the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ADMIN_SANITIZE 0x84 /* opcode */
#define LOG_SANITIZE 0x81 /* Sanitize Status log page */
#define SANITIZE_LOG_SIZE 512

enum { SANACT_EXIT = 1, SANACT_BLOCK, SANACT_OVERWRITE, SANACT_CRYPTO };

/* SSTAT bits 2:0 */
enum {
	SSTAT_NEVER = 0,
	SSTAT_DONE = 1,
	SSTAT_RUNNING = 2,
	SSTAT_FAILED = 3,
	SSTAT_DONE_ND = 4, /* done, no-deallocate asked for */
};

/* How often -w reads the log */
#define POLL_MS 50

enum {
	X_SANACT,
	X_NODEALLOC,
	X_OIPBP,
	X_OWPASS,
	X_AUSE,
	X_OVRPAT,
	X_FORCE,
	X_WAIT,
	X_NR
};

static const struct xopt sanitize_xopts[X_NR] = {
	[X_SANACT] = { 'a', "sanact", XOPT_STR, 0, true },
	[X_NODEALLOC] = { 'd', "no-dealloc", XOPT_FLAG, 0, false },
	[X_OIPBP] = { 'i', "oipbp", XOPT_FLAG, 0, false },
	[X_OWPASS] = { 'n', "owpass", XOPT_NUM, 16, false },
	[X_AUSE] = { 'u', "ause", XOPT_FLAG, 0, false },
	[X_OVRPAT] = { 'p', "ovrpat", XOPT_NUM, UINT32_MAX, false },
	[X_FORCE] = { 'f', "force", XOPT_FLAG, 0, false },
	[X_WAIT] = { 'w', "wait", XOPT_FLAG, 0, false },
};

static const char *const sanact_names[] = {
	[SANACT_EXIT] = "exit failure mode",
	[SANACT_BLOCK] = "block erase",
	[SANACT_OVERWRITE] = "overwrite",
	[SANACT_CRYPTO] = "crypto erase",
};

/* SANICAP bit of each action (exit failure mode needs none) */
static const uint32_t sanact_cap[] = {
	[SANACT_BLOCK] = 1u << 1,
	[SANACT_OVERWRITE] = 1u << 2,
	[SANACT_CRYPTO] = 1u << 0,
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * nvme-cli's -a: 1..4 (decimal or 0x hex), or a name: exit-failure,
 * start-block-erase, start-overwrite, start-crypto-erase (a prefix of at
 * least 7 letters; "e" is enough for exit-failure). 0 if none.
 */
static unsigned int parse_sanact(const char *s)
{
	static const struct {
		const char *name;
		size_t min;
	} names[] = {
		[SANACT_EXIT] = { "exit-failure", 1 },
		[SANACT_BLOCK] = { "start-block-erase", 7 },
		[SANACT_OVERWRITE] = { "start-overwrite", 7 },
		[SANACT_CRYPTO] = { "start-crypto-erase", 7 },
	};
	size_t len = strlen(s);

	if (!strcmp(s, "1") || !strcmp(s, "2") || !strcmp(s, "3") ||
	    !strcmp(s, "4"))
		return (unsigned int)(s[0] - '0');
	if (!strncasecmp(s, "0x", 2) && s[2] >= '1' && s[2] <= '4' && !s[3])
		return (unsigned int)(s[2] - '0');
	for (unsigned int i = SANACT_EXIT; i <= SANACT_CRYPTO; i++)
		if (len >= names[i].min && len <= strlen(names[i].name) &&
		    !strncasecmp(s, names[i].name, len))
			return i;
	return 0;
}

/* nvme-cli's checks of the option combinations (usage errors) */
static int check_options(const struct args *a, unsigned int sanact)
{
	if (!sanact)
		return usage_error(a->cmd,
				   "invalid sanitize action '%s' for "
				   "-a/--sanact: 1 exit failure mode, 2 block "
				   "erase, 3 overwrite, 4 crypto erase",
				   a->xs[X_SANACT]);
	if (sanact == SANACT_EXIT && (a->x[X_AUSE] || a->x[X_NODEALLOC]))
		return usage_error(a->cmd, "-u/--ause and -d/--no-dealloc do "
					   "not apply to -a 1 (exit failure "
					   "mode)");
	if (sanact != SANACT_OVERWRITE &&
	    (a->x[X_OWPASS] || a->x[X_OIPBP] || a->x[X_OVRPAT]))
		return usage_error(a->cmd, "-n/--owpass, -i/--oipbp and "
					   "-p/--ovrpat apply to -a 3 "
					   "(overwrite) only");
	return 0;
}

/* What the sanitize erases: every namespace of the NVM subsystem. */
static void show_loss(const struct args *a, struct nvq_ctrl *ctrl,
		      unsigned int sanact)
{
	uint32_t ids[64];
	int n = nvq_ns_list(ctrl, ids, ARRAY_SIZE(ids));

	fprintf(stderr,
		"You are about to sanitize %s: %s of all user data in the NVM "
		"subsystem, every namespace, caches included.\n",
		a->pos[0], sanact_names[sanact]);
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(ids); i++) {
		struct nvq_ns_info ns;

		if (nvq_ns_info(ctrl, ids[i], &ns) || !ns.lba_size)
			fprintf(stderr, "  namespace %u\n", ids[i]);
		else
			fprintf(stderr,
				"  namespace %u: %" PRIu64 " blocks of %u "
				"bytes (%" PRIu64 " bytes)\n",
				ids[i], ns.nlba, ns.lba_size,
				ns.nlba * ns.lba_size);
	}
	if (n > (int)ARRAY_SIZE(ids))
		fprintf(stderr, "  and %d more namespaces\n",
			n - (int)ARRAY_SIZE(ids));
	fprintf(stderr, "WARNING: Sanitize irrevocably deletes this device's "
			"data; it cannot be stopped once started.\n");
}

static int read_status_log(struct nvq_ctrl *ctrl, uint8_t *log)
{
	struct nvq_sqe cmd;
	uint16_t status = 0;
	char buf[160];
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = nvq_admin_get_log_page;
	cmd.nsid = NVQ_NSID_ALL;
	/* LID, NUMDL (0's based dwords) */
	cmd.cdw10 = LOG_SANITIZE | (SANITIZE_LOG_SIZE / 4 - 1) << 16;
	rc = nvq_admin(ctrl, &cmd, log, SANITIZE_LOG_SIZE, NULL, &status);
	if (rc)
		return fail("cannot read the Sanitize Status log (81h): %s",
			    io_msg(rc, status, buf, sizeof(buf)));
	return 0;
}

/*
 * -w: read log 81h until SSTAT leaves "in progress", with a progress
 * line (SPROG, of 65536) on a terminal. SIGINT/SIGTERM stop the waiting,
 * not the sanitize.
 */
static int wait_sanitize(const struct args *a, struct nvq_ctrl *ctrl,
			 unsigned int sanact)
{
	const struct timespec pause = { 0, POLL_MS * 1000000L };
	bool tty = isatty(STDOUT_FILENO), shown = false;
	uint8_t log[SANITIZE_LOG_SIZE];
	uint16_t sprog, sstat;
	struct sigaction sa;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (;;) {
		rc = read_status_log(ctrl, log);
		if (rc)
			return rc;
		memcpy(&sprog, log, 2);
		memcpy(&sstat, log + 2, 2);
		if ((sstat & 0x7) != SSTAT_RUNNING)
			break;
		if (tty) {
			printf("\rsanitize (%s): %5.1f%%", sanact_names[sanact],
			       sprog * 100.0 / 65536);
			fflush(stdout);
			shown = true;
		}
		if (stop_signal)
			break;
		nanosleep(&pause, NULL);
	}
	if (shown)
		printf("\n");
	if (stop_signal) {
		fail("stopped waiting (signal %d); the sanitize goes on in "
		     "the controller",
		     (int)stop_signal);
		return exit_for_signal(stop_signal);
	}
	switch (sstat & 0x7) {
	case SSTAT_DONE:
	case SSTAT_DONE_ND:
		printf("Sanitize (%s) completed successfully%s\n",
		       sanact_names[sanact],
		       (sstat & 0x7) == SSTAT_DONE_ND ? ", no deallocation" :
							"");
		return flush_stdout();
	case SSTAT_FAILED:
		return fail("the sanitize (%s) failed (Sanitize Status log: "
			    "SSTAT %#x): the controller is in sanitize "
			    "failure mode, where I/O fails with Sanitize "
			    "Failed, until a sanitize succeeds%s",
			    sanact_names[sanact], sstat,
			    a->x[X_AUSE] ? " or 'nvq sanitize URI -a 1' "
					   "exits the failure mode" :
					   "");
	case SSTAT_NEVER:
		return fail("the Sanitize Status log says no sanitize "
			    "operation ran (SSTAT %#x)",
			    sstat);
	default:
		return fail("the Sanitize Status log reports SSTAT %#x, a "
			    "reserved status",
			    sstat);
	}
}

static int sanitize_run(struct args *a)
{
	unsigned int sanact = parse_sanact(a->xs[X_SANACT]);
	const struct nvq_id_ctrl *idc;
	struct nvq_ctrl *ctrl;
	struct nvq_sqe cmd;
	uint16_t status = 0;
	char buf[160];
	int rc;

	rc = check_options(a, sanact);
	if (rc)
		return rc;
	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	idc = nvq_ctrl_id(ctrl);
	if (!idc || !(idc->sanicap & 0x7)) {
		rc = fail("%s does not support Sanitize (SANICAP bits 2:0 "
			  "are 0)",
			  a->pos[0]);
		goto out;
	}
	if (sanact != SANACT_EXIT && !(idc->sanicap & sanact_cap[sanact])) {
		rc = fail("%s does not support the %s sanitize operation "
			  "(SANICAP %#x); it offers:%s%s%s",
			  a->pos[0], sanact_names[sanact], idc->sanicap,
			  idc->sanicap & sanact_cap[SANACT_BLOCK] ?
				  " -a 2 block erase" :
				  "",
			  idc->sanicap & sanact_cap[SANACT_OVERWRITE] ?
				  " -a 3 overwrite" :
				  "",
			  idc->sanicap & sanact_cap[SANACT_CRYPTO] ?
				  " -a 4 crypto erase" :
				  "");
		goto out;
	}
	/* Exit Failure Mode erases nothing: nothing to confirm */
	if (sanact != SANACT_EXIT) {
		if (!a->x[X_FORCE])
			show_loss(a, ctrl, sanact);
		rc = confirm(a->cmd, a->x[X_FORCE], "sanitize");
		if (rc != CONTINUE)
			goto out;
	}

	/* CDW10: SANACT 2:0, AUSE 3, OWPASS 7:4 (0: 16), OIPBP 8, NDAS 9 */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = ADMIN_SANITIZE;
	cmd.cdw10 = sanact | (uint32_t)a->x[X_AUSE] << 3 |
		    ((uint32_t)a->x[X_OWPASS] & 0xf) << 4 |
		    (uint32_t)a->x[X_OIPBP] << 8 |
		    (uint32_t)a->x[X_NODEALLOC] << 9;
	cmd.cdw11 = (uint32_t)a->x[X_OVRPAT];
	rc = nvq_admin(ctrl, &cmd, NULL, 0, NULL, &status);
	if (rc) {
		rc = fail("sanitize (%s): %s", sanact_names[sanact],
			  io_msg(rc, status, buf, sizeof(buf)));
		goto out;
	}
	if (sanact == SANACT_EXIT) {
		printf("Sanitize: exit failure mode done\n");
		rc = flush_stdout();
	} else if (xhas(a, X_WAIT)) {
		rc = wait_sanitize(a, ctrl, sanact);
	} else {
		printf("Sanitize (%s) started: it runs in the background "
		       "(the Sanitize Status log, 81h, shows its progress; "
		       "-w waits for it)\n",
		       sanact_names[sanact]);
		rc = flush_stdout();
	}
out:
	nvq_close(ctrl);
	return rc;
}

/* clang-format off */
const struct cmd sanitize_cmd = {
	.name = "sanitize",
	.run = sanitize_run,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = sanitize_xopts,
	.nxopts = X_NR,
	.synopsis = "URI -a SANACT [-d] [-u] [-n OWPASS] [-i] [-p OVRPAT] [-f] [-w]",
	.summary =
		"Sanitize: erase all user data of the NVM subsystem (every\n"
		"namespace, caches) by block erase, overwrite or crypto erase, as\n"
		"SANICAP offers. Says what will be lost and asks for y on the\n"
		"terminal unless --force; without a terminal --force is needed.\n"
		"As nvme-cli it returns once the controller started the operation;\n"
		"-w waits for the end. On emu: the controller lives in the nvq\n"
		"process, so there only -w lets a long sanitize finish.\n",
	.help = HELP_URI
		"  -a, --sanact=ACTION      1 exit failure mode, 2 block erase,\n"
		"                           3 overwrite, 4 crypto erase (or\n"
		"                           exit-failure, start-block-erase,\n"
		"                           start-overwrite, start-crypto-erase)\n"
		"  -d, --no-dealloc         no deallocation after the sanitize\n"
		"  -u, --ause               allow unrestricted sanitize exit: after\n"
		"                           a failure -a 1 may leave failure mode\n"
		"  -n, --owpass=N           overwrite passes, 1..16 (0: 16)\n"
		"  -i, --oipbp              overwrite: invert the pattern between\n"
		"                           passes\n"
		"  -p, --ovrpat=N           overwrite pattern, 32 bits\n"
		"  -f, --force              do not ask for confirmation\n"
		"  -w, --wait               wait for the end (the Sanitize Status\n"
		"                           log) and report how it ended; not in\n"
		"                           nvme-cli\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */
