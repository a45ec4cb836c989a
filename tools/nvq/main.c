// SPDX-License-Identifier: MIT
/*
 * nvq: command-line access to NVMe controllers through libnvq.
 *
 * Follows nvme-cli's conventions where it has them (option names, the
 * "key : value" identify output, the JSON field names), so scripts and
 * habits carry over. Exit status: 0 success, 1 the operation failed,
 * 2 wrong usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef NVQ_VERSION
#define NVQ_VERSION "unknown"
#endif

/* qos.c (its one command; cli.h would be the place for the line) */
int run_qos_restore(struct args *a);
/* discover.c (cli.h would be the place for the line) */
extern const struct cmd discover_cmd;

/* id-ctrl and id-ns */
/* clang-format off */
#define HELP_HUMAN \
	"  -H, --human-readable     decode each field's bits under it, as\n" \
	"                           nvme-cli -H (normal output only)\n"

static const struct cmd commands[] = {
	{
		.name = "list",
		.run = run_list,
		.opts = OPT_FMT,
		.min_pos = 0,
		.max_pos = -1,
		.synopsis = "[URI...] [-o normal|json]",
		.summary =
			"List the emulated controller (or the controllers given as URIs)\n"
			"with its namespaces, and the PCI NVMe controllers of this machine\n"
			"with their driver and the URI that opens them.\n",
		.help =
			"  URI...                   controllers to list (default: emu:)\n"
			"  -o, --output-format=FMT  normal (default) or json\n"
			HELP_HELP,
	},
	{
		.name = "id-ctrl",
		.run = run_id_ctrl,
		.opts = OPT_FMT | OPT_FMT_BIN,
		.min_pos = 1,
		.max_pos = 1,
		.xopts = id_human_xopts,
		.nxopts = 1,
		.synopsis = "URI [-H] [-o normal|json|binary]",
		.summary =
			"Show the Identify Controller data (nvme-cli's field names).\n",
		.help = HELP_URI HELP_HUMAN HELP_FMT_BIN HELP_HELP,
	},
	{
		.name = "id-ns",
		.run = run_id_ns,
		.opts = OPT_NSID | OPT_FMT | OPT_FMT_BIN,
		.required = OPT_NSID,
		.min_pos = 1,
		.max_pos = 1,
		.xopts = id_human_xopts,
		.nxopts = 1,
		.synopsis = "URI[/NSID] [-n NSID] [-H] [-o normal|json|binary]",
		.summary =
			"Show the Identify Namespace data (nvme-cli's field names); the\n"
			"normal output marks the LBA format in use.\n",
		.help = HELP_URI HELP_NSID HELP_HUMAN HELP_FMT_BIN HELP_HELP
			HELP_NUMBERS,
	},
	{
		.name = "read",
		.run = run_read,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_DATA | OPT_TIMEOUTS |
			OPT_RW | OPT_RW_MD,
		.required = OPT_NSID | OPT_DATA,
		.required_any = OPT_COUNT | OPT_DSIZE,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI[/NSID] [-n NSID] [-s SLBA] -c COUNT|-z BYTES -d FILE [-f]",
		.summary =
			"Read COUNT blocks starting at SLBA into FILE (created or\n"
			"truncated).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks to read\n"
			HELP_COUNT_NOTE
			"  -d, --data=FILE          output file, - for standard output;\n"
			"                           not the emulator's own image (file=)\n"
			HELP_RW HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "write",
		.run = run_write,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_DATA | OPT_TIMEOUTS |
			OPT_RW | OPT_RW_MD,
		.required = OPT_NSID | OPT_DATA,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI[/NSID] [-n NSID] [-s SLBA] [-c COUNT|-z BYTES] -d FILE [-f]",
		.summary = "Write FILE to the namespace starting at SLBA.\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks to write; the file must\n"
			"                           hold at least that many (default: the\n"
			"                           file's length, which must then be a\n"
			"                           multiple of the LBA size)\n"
			HELP_COUNT_NOTE
			"  -d, --data=FILE          input file, - for standard input;\n"
			"                           not the emulator's own image (file=)\n"
			HELP_RW HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "flush",
		.run = run_flush,
		.opts = OPT_NSID | OPT_NSID_ALL | OPT_TIMEOUTS,
		.required = OPT_NSID,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI[/NSID] [-n NSID]",
		.summary =
			"Flush the volatile write cache of a namespace (NSID 0xffffffff:\n"
			"all namespaces).\n",
		.help = HELP_URI HELP_NSID HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "write-zeroes",
		.run = run_write_zeroes,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_TIMEOUTS,
		.required = OPT_NSID | OPT_COUNT,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI[/NSID] [-n NSID] [-s SLBA] -c COUNT",
		.summary =
			"Set COUNT blocks starting at SLBA to zeroes (Write Zeroes: no\n"
			"data transfer).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks\n"
			HELP_COUNT_NOTE HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "trim",
		.run = run_trim,
		.opts = OPT_NSID | OPT_SLBA | OPT_COUNT | OPT_TIMEOUTS,
		.required = OPT_NSID | OPT_COUNT,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI[/NSID] [-n NSID] [-s SLBA] -c COUNT",
		.summary =
			"Deallocate COUNT blocks starting at SLBA (Dataset Management\n"
			"with the Deallocate attribute).\n",
		.help = HELP_URI HELP_NSID HELP_SLBA
			"  -c, --block-count=COUNT  number of blocks\n"
			HELP_COUNT_NOTE HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "stats",
		.run = run_stats,
		.opts = OPT_FMT | OPT_TIMEOUTS,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI [-o normal|json]",
		.summary =
			"Open the controller and show what its failure path did\n"
			"(timeouts, lost interrupts, aborts, resets, retries, commands\n"
			"failed by recovery, bad CQEs, whether it is gone) and the\n"
			"command timeouts in force. The counters are those of this\n"
			"open: they show what bring-up needed.\n",
		.help = HELP_URI
			"  -o, --output-format=FMT  normal (default) or json\n"
			HELP_TIMEOUTS HELP_HELP HELP_NUMBERS,
	},
	{
		.name = "setup",
		.run = run_setup,
		.min_pos = 1,
		.max_pos = 1,
		.pos_name = "PCI address (DDDD:BB:DD.F)",
		.synopsis = "BDF",
		.summary =
			"Hand the PCI NVMe controller BDF to vfio-pci (driver_override,\n"
			"unbind, drivers_probe) so that nvq can open it as vfio:BDF. Its\n"
			"namespaces disappear from the kernel; refused while one is\n"
			"mounted. Needs root. 'nvq release BDF' gives it back.\n",
		.help =
			"  BDF                      the controller's PCI address, e.g.\n"
			"                           0000:01:00.0 (see 'nvq list')\n"
			HELP_HELP,
	},
	{
		.name = "release",
		.run = run_release,
		.min_pos = 1,
		.max_pos = 1,
		.pos_name = "PCI address (DDDD:BB:DD.F)",
		.synopsis = "BDF",
		.summary =
			"Return the PCI NVMe controller BDF from vfio-pci to the kernel's\n"
			"nvme driver (refused while a process has it open). Needs root.\n"
			"The reverse of 'nvq setup BDF'.\n",
		.help =
			"  BDF                      the controller's PCI address\n"
			HELP_HELP,
	},
	{
		.name = "reset",
		.run = run_reset,
		.min_pos = 1,
		.max_pos = 1,
		.synopsis = "URI",
		.summary =
			"Reset the controller URI (Controller Level Reset: disable,\n"
			"enable, queues created again), as nvme-cli's reset does. To give\n"
			"a PCI function back to the kernel use 'nvq release BDF'.\n",
		.help = HELP_URI HELP_HELP,
	},
	{
		.name = "qos-restore",
		.run = run_qos_restore,
		.opts = OPT_FMT,
		.min_pos = 0,
		.max_pos = 0,
		.synopsis = "[-o normal|json]",
		.summary =
			"Undo the CPU latency limits (PM QoS) that nvq processes left\n"
			"when they were killed (SIGKILL, a crash): each such CPU goes back\n"
			"to its original value, or to the strictest limit that a running\n"
			"nvq process still holds there. Limits of running processes stay.\n"
			"Reads the state file under /run/nvq ($XDG_RUNTIME_DIR/nvq where\n"
			"/run is not writable). Needs root for the real files.\n",
		.help =
			"  -o, --output-format=FMT  normal (default) or json\n"
			HELP_HELP,
	},
};
/* clang-format on */

/*
 * Commands declared beside their code, with their own options (struct
 * xopt): cli.h names them. --help lists them after the table above.
 */
static const struct cmd *const more_commands[] = {
	&format_cmd,	   &sanitize_cmd,    &smart_log_cmd, /* log.c */
	&error_log_cmd, /* log.c */
	&fw_log_cmd, /* log.c */
	&sanitize_log_cmd, /* log.c */
	&get_log_cmd, /* log.c */
	&get_feature_cmd,  &set_feature_cmd, &admin_passthru_cmd,
	&io_passthru_cmd,  &discover_cmd, /* discover.c */
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	for (size_t i = 0; i < ARRAY_SIZE(more_commands); i++)
		if (more_commands[i] && !strcmp(more_commands[i]->name, name))
			return more_commands[i];
	return NULL;
}

/*
 * One command's line of the overview: names padded to the widest, long
 * synopses wrapped at a space onto lines indented under the first.
 */
static void help_line(FILE *f, const char *name, const char *syn, int w)
{
	int room = 79 - 3 - w;

	if (room < 20)
		room = 20;
	fprintf(f, "  %-*s ", w, name);
	while ((int)strlen(syn) > room) {
		int cut = 0, depth = 0;

		/* at a space outside brackets: "[-s SES]" stays whole */
		for (int i = 0; i <= room; i++) {
			if (syn[i] == '[')
				depth++;
			else if (syn[i] == ']')
				depth--;
			else if (syn[i] == ' ' && depth == 0)
				cut = i;
		}
		if (cut == 0)
			break;
		fprintf(f, "%.*s\n  %-*s   ", cut, syn, w, "");
		syn += cut + 1;
	}
	fprintf(f, "%s\n", syn);
}

static void main_help(FILE *f)
{
	int w = (int)strlen("help [CMD]");

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if ((int)strlen(commands[i].name) > w)
			w = (int)strlen(commands[i].name);
	for (size_t i = 0; i < ARRAY_SIZE(more_commands); i++)
		if (more_commands[i] && (int)strlen(more_commands[i]->name) > w)
			w = (int)strlen(more_commands[i]->name);
	fprintf(f, "usage: nvq <command> [options]\n\n"
		   "Userspace NVMe access through libnvq.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		help_line(f, commands[i].name, commands[i].synopsis, w);
	for (size_t i = 0; i < ARRAY_SIZE(more_commands); i++)
		if (more_commands[i])
			help_line(f, more_commands[i]->name,
				  more_commands[i]->synopsis, w);
	help_line(f, "help [CMD]", "show help for a command", w);
	help_line(f, "version", "show the version", w);
	fprintf(f,
		"\nURIs: emu:[key=value,...]  the emulated controller, e.g.\n"
		"                           emu:file=disk.img,size=64M,lbads=9\n"
		"      vfio:DDDD:BB:DD.F    a PCI function bound to vfio-pci\n"
		"      URI/NSID             namespace NSID (or -n NSID)\n"
		"'nvq <command> --help' describes a command's options.\n"
		"Exit status: 0 success, 1 the operation failed, 2 wrong "
		"usage.\n");
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	struct args a;
	int rc;

	if (argc < 2)
		return usage_error(NULL, "missing command");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		main_help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("nvq %s\n", NVQ_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2) {
			main_help(stdout);
			return EXIT_OK;
		}
		c = find_cmd(argv[2]);
		if (!c)
			return usage_error(NULL, "no such command '%s'",
					   argv[2]);
		if (argc > 3)
			return usage_error(NULL, "unexpected argument '%s'",
					   argv[3]);
		cmd_help(c);
		return EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);

	memset(&a, 0, sizeof(a));
	rc = parse_args(c, argc - 1, argv + 1, &a);
	if (rc != CONTINUE)
		return rc;
	set_cmd_args(&a);
	return c->run(&a);
}
