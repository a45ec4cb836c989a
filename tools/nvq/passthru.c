// SPDX-License-Identifier: MIT
/*
 * admin-passthru and io-passthru: a command built from the command line
 * (nvme-cli 2.3's options and letters: -o opcode, -4 .. -9 CDW10..15,
 * -l data length, -r/-w direction, -i file, -b raw, -s show, -d dry
 * run) sent through nvq_admin() or nvq_io_raw_sync(). The data direction
 * is the opcode's (bits 1:0), as the specification defines it and as the
 * library sends it; a -r or -w that contradicts it is refused rather than
 * sending a command other than the one asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PASSTHRU_LEN_MAX (64u << 20) /* -l, -m: beyond any MDTS */

/* nvme-cli's d(): offset, 16 bytes in hex, and the printable ones. */
void hex_dump(const void *data, size_t len)
{
	const unsigned char *buf = data;
	char ascii[17];
	size_t i;

	printf("     ");
	for (i = 0; i < 16; i++)
		printf("%3zx", i);
	for (i = 0; i < len; i++) {
		if (i % 16 == 0)
			printf("\n%04zx:", i);
		printf(" %02x", buf[i]);
		ascii[i % 16] = buf[i] >= '!' && buf[i] <= '~' ? (char)buf[i] :
								 '.';
		if (i % 16 == 15) {
			ascii[16] = '\0';
			printf(" \"%s\"", ascii);
		}
	}
	if (i % 16) {
		unsigned int b = 16 - (unsigned int)(i % 16);

		ascii[i % 16] = '\0';
		printf(" %*s \"%s\"", (int)(3 * b), "", ascii);
	}
	printf("\n");
}

/* nvme-cli's status line: "NVMe status: <text>(0x4002)". */
void show_nvme_status(uint16_t status)
{
	fprintf(stderr, "NVMe status: %s(%#x)\n", nvq_status_str(status),
		status);
}

/* nvme-cli's names of the commands (its nvme_cmd_to_string()) */
static const char *cmd_name(bool admin, uint8_t opc)
{
	static const struct {
		uint8_t opc;
		const char *name;
	} adm[] = {
		{ 0x00, "Delete I/O Submission Queue" },
		{ 0x01, "Create I/O Submission Queue" },
		{ 0x02, "Get Log Page" },
		{ 0x04, "Delete I/O Completion Queue" },
		{ 0x05, "Create I/O Completion Queue" },
		{ 0x06, "Identify" },
		{ 0x08, "Abort" },
		{ 0x09, "Set Features" },
		{ 0x0a, "Get Features" },
		{ 0x0c, "Asynchronous Event Request" },
		{ 0x0d, "Namespace Management" },
		{ 0x10, "Firmware Commit" },
		{ 0x11, "Firmware Image Download" },
		{ 0x14, "Device Self-test" },
		{ 0x15, "Namespace Attachment" },
		{ 0x18, "Keep Alive" },
		{ 0x19, "Directive Send" },
		{ 0x1a, "Directive Receive" },
		{ 0x1c, "Virtualization Management" },
		{ 0x1d, "NVMe-MI Send" },
		{ 0x1e, "NVMe-MI Receive" },
		{ 0x7c, "Doorbell Buffer Config" },
		{ 0x80, "Format NVM" },
		{ 0x81, "Security Send" },
		{ 0x82, "Security Receive" },
		{ 0x84, "Sanitize" },
		{ 0x86, "Get LBA Status" },
	},
	  io[] = {
		  { 0x00, "Flush" },
		  { 0x01, "Write" },
		  { 0x02, "Read" },
		  { 0x04, "Write Uncorrectable" },
		  { 0x05, "Compare" },
		  { 0x08, "Write Zeroes" },
		  { 0x09, "Dataset Management" },
		  { 0x0c, "Verify" },
		  { 0x0d, "Reservation Register" },
		  { 0x0e, "Reservation Report" },
		  { 0x11, "Reservation Acquire" },
		  { 0x15, "Reservation Release" },
		  { 0x19, "Copy" },
		  { 0x79, "Zone Management Send" },
		  { 0x7a, "Zone Management Receive" },
		  { 0x7d, "Zone Append" },
	  };

	if (admin) {
		for (size_t i = 0; i < ARRAY_SIZE(adm); i++)
			if (adm[i].opc == opc)
				return adm[i].name;
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(io); i++)
			if (io[i].opc == opc)
				return io[i].name;
	}
	return NULL;
}

/*
 * Admin commands the driver owns: the I/O queues it created, the
 * Asynchronous Event Requests it keeps outstanding, its doorbells.
 * Sending one of them behind its back would break the open controller.
 */
static bool driver_owned(uint8_t opc)
{
	switch (opc) {
	case 0x00: /* Delete I/O Submission Queue */
	case 0x01: /* Create I/O Submission Queue */
	case 0x04: /* Delete I/O Completion Queue */
	case 0x05: /* Create I/O Completion Queue */
	case 0x0c: /* Asynchronous Event Request */
	case 0x7c: /* Doorbell Buffer Config */
		return true;
	}
	return false;
}

enum {
	P_OPCODE,
	P_FLAGS,
	P_PREFILL,
	P_RSVD,
	P_NSID,
	P_LEN,
	P_MDLEN,
	P_TIMEOUT,
	P_CDW2,
	P_CDW3,
	P_CDW10,
	P_CDW11,
	P_CDW12,
	P_CDW13,
	P_CDW14,
	P_CDW15,
	P_INPUT,
	P_MD,
	P_RAW,
	P_SHOW,
	P_DRY,
	P_READ,
	P_WRITE,
	P_LATENCY,
};

static const struct xopt passthru_xopts[] = {
	[P_OPCODE] = { 'o', "opcode", XOPT_NUM, 0xff, true },
	[P_FLAGS] = { 'f', "flags", XOPT_NUM, 0xff, false },
	[P_PREFILL] = { 'p', "prefill", XOPT_NUM, 0xff, false },
	[P_RSVD] = { 'R', "rsvd", XOPT_NUM, 0xffff, false },
	[P_NSID] = { 'n', "namespace-id", XOPT_NUM, UINT32_MAX, false },
	[P_LEN] = { 'l', "data-len", XOPT_NUM, PASSTHRU_LEN_MAX, false },
	[P_MDLEN] = { 'm', "metadata-len", XOPT_NUM, PASSTHRU_LEN_MAX, false },
	[P_TIMEOUT] = { 't', "timeout", XOPT_NUM, NVQ_TIMEOUT_MS_MAX, false },
	[P_CDW2] = { '2', "cdw2", XOPT_NUM, UINT32_MAX, false },
	[P_CDW3] = { '3', "cdw3", XOPT_NUM, UINT32_MAX, false },
	[P_CDW10] = { '4', "cdw10", XOPT_NUM, UINT32_MAX, false },
	[P_CDW11] = { '5', "cdw11", XOPT_NUM, UINT32_MAX, false },
	[P_CDW12] = { '6', "cdw12", XOPT_NUM, UINT32_MAX, false },
	[P_CDW13] = { '7', "cdw13", XOPT_NUM, UINT32_MAX, false },
	[P_CDW14] = { '8', "cdw14", XOPT_NUM, UINT32_MAX, false },
	[P_CDW15] = { '9', "cdw15", XOPT_NUM, UINT32_MAX, false },
	[P_INPUT] = { 'i', "input-file", XOPT_STR, 0, false },
	[P_MD] = { 'M', "metadata", XOPT_STR, 0, false },
	[P_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
	[P_SHOW] = { 's', "show-command", XOPT_FLAG, 0, false },
	[P_DRY] = { 'd', "dry-run", XOPT_FLAG, 0, false },
	[P_READ] = { 'r', "read", XOPT_FLAG, 0, false },
	[P_WRITE] = { 'w', "write", XOPT_FLAG, 0, false },
	[P_LATENCY] = { 'T', "latency", XOPT_FLAG, 0, false },
};

/* All of @len bytes from @fd, or a message; @what names it. */
static int read_all(int fd, void *buf, size_t len, const char *what)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("cannot read %s: %s", what,
				    strerror(errno));
		if (!n)
			return fail("%s ends after %zu bytes, %zu are to be "
				    "sent",
				    what, got, len);
		got += (size_t)n;
	}
	return 0;
}

/* Open @path for the command's data: to send (@out false) or received. */
static int open_file(const char *path, bool out, int *fd)
{
	*fd = out ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) :
		    open(path, O_RDONLY);
	if (*fd < 0)
		return fail("cannot open '%s': %s", path, strerror(errno));
	return 0;
}

static int write_out(int fd, const void *buf, size_t len, const char *what)
{
	int ret = write_full(fd, buf, len);

	if (ret)
		return fail("cannot write %s: %s", what, strerror(-ret));
	return 0;
}

struct passthru {
	struct nvq_sqe cmd;
	uint32_t len, md_len, timeout;
	uint16_t rsvd;
	bool admin, rd, wr;
	uint8_t *data, *md;
};

static void show_command(const struct passthru *p)
{
	printf("opcode       : %02x\n", p->cmd.opcode);
	printf("flags        : %02x\n", p->cmd.flags);
	printf("rsvd1        : %04x\n", p->rsvd);
	printf("nsid         : %08x\n", p->cmd.nsid);
	printf("cdw2         : %08x\n", p->cmd.cdw2);
	printf("cdw3         : %08x\n", p->cmd.cdw3);
	printf("data_len     : %08x\n", p->len);
	printf("metadata_len : %08x\n", p->md_len);
	printf("addr         : %" PRIx64 "\n", (uint64_t)(uintptr_t)p->data);
	printf("metadata     : %" PRIx64 "\n", (uint64_t)(uintptr_t)p->md);
	printf("cdw10        : %08x\n", p->cmd.cdw10);
	printf("cdw11        : %08x\n", p->cmd.cdw11);
	printf("cdw12        : %08x\n", p->cmd.cdw12);
	printf("cdw13        : %08x\n", p->cmd.cdw13);
	printf("cdw14        : %08x\n", p->cmd.cdw14);
	printf("cdw15        : %08x\n", p->cmd.cdw15);
	printf("timeout_ms   : %08x\n", p->timeout);
}

/* The checks that need no controller; EXIT_USAGE with a message if bad. */
static int check_passthru(struct args *a, struct passthru *p)
{
	uint8_t opc = p->cmd.opcode;
	unsigned int dir = opc & 3;

	if (p->admin && driver_owned(opc))
		return usage_error(a->cmd,
				   "opcode %#04x (%s) is the driver's own: "
				   "nvq manages the queues, event requests "
				   "and doorbells of the controller it "
				   "opened, so it does not pass it through",
				   opc, cmd_name(true, opc));
	if (!p->admin && !xhas(a, P_NSID))
		return usage_error(a->cmd, "missing -n/--namespace-id (an I/O "
					   "command names its namespace)");
	if (p->cmd.flags)
		return usage_error(a->cmd,
				   "-f/--flags %#x: nvq sends commands "
				   "unfused with PRPs (FUSE and PSDT 0); "
				   "the other bits are reserved",
				   p->cmd.flags);
	if (!p->admin && dir == 3)
		return usage_error(a->cmd,
				   "opcode %#04x: bits 1:0 are 11b "
				   "(bidirectional), which nvq's I/O path "
				   "does not send",
				   opc);
	if (p->rd && !(dir & 2))
		return usage_error(a->cmd,
				   "-r/--read, but opcode %#04x transfers "
				   "%s (bits 1:0 are %u%ub): the direction is "
				   "the opcode's",
				   opc, dir ? "host to controller" : "no data",
				   dir >> 1, dir & 1);
	if (p->wr && !(dir & 1))
		return usage_error(a->cmd,
				   "-w/--write, but opcode %#04x transfers "
				   "%s (bits 1:0 are %u%ub): the direction is "
				   "the opcode's",
				   opc, dir ? "controller to host" : "no data",
				   dir >> 1, dir & 1);
	if ((p->len || p->md_len) && !dir)
		return usage_error(a->cmd,
				   "opcode %#04x transfers no data (bits 1:0 "
				   "are 00b): -l/--data-len and "
				   "-m/--metadata-len must be 0",
				   opc);
	if (p->admin && (p->md_len || xhas(a, P_MD)))
		return usage_error(a->cmd,
				   "admin commands carry no metadata "
				   "(-m/--metadata-len, -M/--metadata)");
	if (xhas(a, P_MD) && !p->md_len)
		return usage_error(a->cmd, "-M/--metadata needs "
					   "-m/--metadata-len");
	if (xhas(a, P_INPUT) && !p->len)
		return usage_error(a->cmd, "-i/--input-file needs "
					   "-l/--data-len");
	if (dir == 3 && p->len && !p->rd && !p->wr)
		return usage_error(a->cmd,
				   "opcode %#04x moves data both ways: "
				   "give -w (the buffer is sent and "
				   "received) or -r",
				   opc);
	return 0;
}

/* The data (and metadata) to send, from -i/-M or standard input. */
static int load_input(struct args *a, struct passthru *p)
{
	const char *in = a->xs[P_INPUT], *mdin = a->xs[P_MD];
	int fd = STDIN_FILENO, rc;

	if (p->len && (p->cmd.opcode & 1)) {
		if (in && (rc = open_file(in, false, &fd)))
			return rc;
		rc = read_all(fd, p->data, p->len, in ? in : "standard input");
		if (in)
			close(fd);
		if (rc)
			return rc;
	}
	if (p->md_len && (p->cmd.opcode & 1)) {
		fd = STDIN_FILENO;
		if (mdin && (rc = open_file(mdin, false, &fd)))
			return rc;
		rc = read_all(fd, p->md, p->md_len,
			      mdin ? mdin : "standard input");
		if (mdin)
			close(fd);
		if (rc)
			return rc;
	}
	return 0;
}

/* What was read: into -i / -M, else dumped (or raw with -b) on stdout. */
static int store_output(struct args *a, struct passthru *p)
{
	const char *out = a->xs[P_INPUT], *mdout = a->xs[P_MD];
	int fd, rc = 0;

	if (!(p->cmd.opcode & 2) || (!p->len && !p->md_len))
		return 0;
	if (p->len && out) {
		rc = open_file(out, true, &fd);
		if (rc)
			return rc;
		rc = write_out(fd, p->data, p->len, out);
		close(fd);
	} else if (p->len && a->x[P_RAW]) {
		rc = write_out(STDOUT_FILENO, p->data, p->len,
			       "standard output");
	} else if (p->len) {
		hex_dump(p->data, p->len);
	}
	if (rc || !p->md_len)
		return rc;
	if (mdout) {
		rc = open_file(mdout, true, &fd);
		if (rc)
			return rc;
		rc = write_out(fd, p->md, p->md_len, mdout);
		close(fd);
	} else if (out || a->x[P_RAW]) {
		/* as nvme-cli: without -M the metadata follows on stdout */
		fflush(stdout);
		rc = write_out(STDOUT_FILENO, p->md, p->md_len,
			       "standard output");
	} else {
		hex_dump(p->md, p->md_len);
	}
	return rc;
}

static int run_passthru(struct args *a, bool admin)
{
	struct passthru p = { 0 };
	struct timespec t0, t1;
	struct nvq_ctrl *ctrl;
	uint32_t result = 0;
	uint16_t status = 0;
	const char *name;
	char msg[160];
	int ret, rc;

	p.admin = admin;
	p.cmd.opcode = (uint8_t)a->x[P_OPCODE];
	p.cmd.flags = (uint8_t)a->x[P_FLAGS];
	p.cmd.nsid = (uint32_t)a->x[P_NSID];
	p.cmd.cdw2 = (uint32_t)a->x[P_CDW2];
	p.cmd.cdw3 = (uint32_t)a->x[P_CDW3];
	p.cmd.cdw10 = (uint32_t)a->x[P_CDW10];
	p.cmd.cdw11 = (uint32_t)a->x[P_CDW11];
	p.cmd.cdw12 = (uint32_t)a->x[P_CDW12];
	p.cmd.cdw13 = (uint32_t)a->x[P_CDW13];
	p.cmd.cdw14 = (uint32_t)a->x[P_CDW14];
	p.cmd.cdw15 = (uint32_t)a->x[P_CDW15];
	p.rsvd = (uint16_t)a->x[P_RSVD];
	p.len = (uint32_t)a->x[P_LEN];
	p.md_len = (uint32_t)a->x[P_MDLEN];
	p.timeout = (uint32_t)a->x[P_TIMEOUT];
	p.rd = a->x[P_READ];
	p.wr = a->x[P_WRITE];
	rc = check_passthru(a, &p);
	if (rc)
		return rc;
	name = cmd_name(admin, p.cmd.opcode);
	if (!name)
		name = "Vendor Specific";

	if (p.len) {
		p.data = malloc(p.len);
		if (!p.data)
			return fail("no memory for %u bytes of data", p.len);
		memset(p.data, (int)a->x[P_PREFILL], p.len);
	}
	if (p.md_len) {
		p.md = malloc(p.md_len);
		if (!p.md) {
			free(p.data);
			return fail("no memory for %u bytes of metadata",
				    p.md_len);
		}
		memset(p.md, (int)a->x[P_PREFILL], p.md_len);
	}
	rc = load_input(a, &p);
	if (rc)
		goto out;
	if (a->x[P_SHOW] || a->x[P_DRY])
		show_command(&p);
	/* a dry run sends nothing and opens nothing (vfio: would reset) */
	if (a->x[P_DRY]) {
		rc = flush_stdout();
		goto out;
	}

	if (admin)
		a->admin_timeout_ms = p.timeout;
	else
		a->io_timeout_ms = p.timeout;
	rc = open_ctrl_io(a, &ctrl);
	if (rc)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (admin)
		ret = nvq_admin(ctrl, &p.cmd, p.data, p.len, &result, &status);
	else
		ret = nvq_io_raw_sync(ctrl, &p.cmd, p.data, p.len, p.md,
				      p.md_len, &result, &status);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	nvq_close(ctrl);
	if (a->x[P_LATENCY])
		printf("%s Command %s latency: %llu us\n",
		       admin ? "Admin" : "IO", name,
		       (unsigned long long)((t1.tv_sec - t0.tv_sec) *
						    1000000LL +
					    (t1.tv_nsec - t0.tv_nsec) / 1000));
	if (ret) {
		if (ret == -EIO)
			show_nvme_status(status);
		rc = fail("%s command %#04x (%s): %s", admin ? "admin" : "I/O",
			  p.cmd.opcode, name,
			  io_msg(ret, status, msg, sizeof(msg)));
		goto out;
	}
	fflush(stdout);
	fprintf(stderr, "%s Command %s is Success and result: 0x%08x\n",
		admin ? "Admin" : "IO", name, result);
	rc = store_output(a, &p);
	if (!rc)
		rc = flush_stdout();
out:
	free(p.data);
	free(p.md);
	return rc;
}

static int run_admin_passthru(struct args *a)
{
	return run_passthru(a, true);
}

static int run_io_passthru(struct args *a)
{
	return run_passthru(a, false);
}

/* clang-format off */
#define PASSTHRU_HELP \
	"  -o, --opcode=N           opcode (required); its bits 1:0 give the\n" \
	"                           direction: 01b to the controller, 10b\n" \
	"                           from it, 00b no data\n" \
	"  -n, --namespace-id=NSID  NSID (default 0)\n" \
	"  -2, --cdw2=N  -3, --cdw3=N\n" \
	"  -4, --cdw10=N -5, --cdw11=N -6, --cdw12=N\n" \
	"  -7, --cdw13=N -8, --cdw14=N -9, --cdw15=N\n" \
	"                           command dwords 2, 3 and 10..15\n" \
	"  -l, --data-len=BYTES     data to transfer (default 0)\n" \
	"  -r, --read               data from the controller: must agree\n" \
	"                           with the opcode (bit 1)\n" \
	"  -w, --write              data to the controller: must agree with\n" \
	"                           the opcode (bit 0)\n" \
	"  -i, --input-file=FILE    data to send (default: standard input);\n" \
	"                           for a read, the file the data goes to\n" \
	"  -b, --raw-binary         data read as raw bytes, not a hex dump\n" \
	"  -p, --prefill=N          byte the buffers start with (default 0)\n" \
	"  -s, --show-command       print the command before sending it\n" \
	"  -d, --dry-run            print the command, send nothing\n" \
	"  -t, --timeout=MS         command timeout (default: the library's)\n" \
	"  -T, --latency            print how long the command took\n" \
	"  -f, --flags=N            CDW0 flags: must be 0 (nvq sends commands\n" \
	"                           unfused, with PRPs)\n" \
	"  -R, --rsvd=N             accepted as nvme-cli's, not sent (nvq\n" \
	"                           fills the command identifier)\n"

const struct cmd admin_passthru_cmd = {
	.name = "admin-passthru",
	.run = run_admin_passthru,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = passthru_xopts,
	.nxopts = ARRAY_SIZE(passthru_xopts),
	.synopsis = "URI -o OPCODE [-n NSID] [-4..-9 CDW10..15] [-l LEN] "
		    "[-r|-w] [-i FILE] [-b] [-s] [-d]",
	.summary =
		"Send an admin command (nvme-cli's admin-passthru) through\n"
		"nvq_admin() and show CDW0 of its completion and the data read.\n"
		"The queue, event request and doorbell commands are the\n"
		"driver's and are refused.\n",
	.help = HELP_URI PASSTHRU_HELP
		"  -m, --metadata-len, -M, --metadata: I/O commands only\n"
		HELP_HELP HELP_NUMBERS,
};

const struct cmd io_passthru_cmd = {
	.name = "io-passthru",
	.run = run_io_passthru,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = passthru_xopts,
	.nxopts = ARRAY_SIZE(passthru_xopts),
	.synopsis = "URI -o OPCODE -n NSID [-4..-9 CDW10..15] [-l LEN] "
		    "[-m MDLEN] [-r|-w] [-i FILE] [-M FILE] [-b] [-s] [-d]",
	.summary =
		"Send an I/O command (nvme-cli's io-passthru) through\n"
		"nvq_io_raw_sync(), with separate metadata (MPTR), and show\n"
		"CDW0 of its completion and the data read. nvq does not check\n"
		"the namespace or the LBAs: the controller does.\n",
	.help = HELP_URI PASSTHRU_HELP
		"  -m, --metadata-len=BYTES separate metadata to transfer (MPTR)\n"
		"  -M, --metadata=FILE      metadata to send (default: standard\n"
		"                           input, after the data), or the file\n"
		"                           the metadata read goes to (default:\n"
		"                           a second hex dump; with -i or -b, raw\n"
		"                           on standard output after the data)\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */
