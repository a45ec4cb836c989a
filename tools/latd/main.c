// SPDX-License-Identifier: MIT
/*
 * nvq-latd: the block layer's CPU latency QoS (per-disk cpu_lat_limit_us
 * and cpu_lat_timeout_ms, the RFC's knobs) for the kernel's own disks.
 * This file: the command line, and `nvq-latd status`, which asks the
 * running daemon over its socket. docs/nvq-latd.md is the manual.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nvq/qos.h>

#include "daemon.h"

#ifndef NVQ_VERSION
#define NVQ_VERSION "unknown"
#endif

#define DEFAULT_RESCAN_MS 5000

static const char usage_line[] =
	"usage: nvq-latd [--config FILE] [--cpu-lat-limit-us L] "
	"[--cpu-lat-timeout-ms T]\n"
	"                [--activity bpf|poll|auto] [--hysteresis on|off] "
	"[DEVICE...]\n"
	"       nvq-latd status [--json] [--socket PATH]\n";

static void help(void)
{
	printf("%s", usage_line);
	printf("\n"
	       "Keep the CPUs that serve a disk's I/O out of deep idle states "
	       "while the disk\n"
	       "is busy, and let them sleep again cpu_lat_timeout_ms after "
	       "its I/O stops: the\n"
	       "block layer's per-disk cpu_lat_limit_us / cpu_lat_timeout_ms "
	       "for stock kernels.\n"
	       "Runs in the foreground (systemd supervises it); limits are "
	       "written to\n"
	       "/sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us "
	       "and restored on\n"
	       "exit, SIGTERM and SIGINT; after a crash (SIGKILL) the next "
	       "start restores them.\n"
	       "\n"
	       "DEVICE: a disk name (nvme0n1), a path under /dev "
	       "(/dev/disk/by-id/nvme-...;\n"
	       "a partition means its disk) or a glob over disk names "
	       "('nvme*n1').\n"
	       "\n"
	       "Options:\n"
	       "  -c, --config FILE          settings per disk (INI: "
	       "[defaults], [DEVICE]);\n"
	       "                             SIGHUP reads it again\n"
	       "  -l, --cpu-lat-limit-us L   -1 or off, 0 (no idle at all, "
	       "written \"n/a\"),\n"
	       "                             N us, or auto (from the cpuidle "
	       "states);\n"
	       "                             overrides the config (default "
	       "off)\n"
	       "  -t, --cpu-lat-timeout-ms T release after T ms without I/O "
	       "(1..%d,\n"
	       "                             default %d)\n"
	       "  -a, --activity MODE        bpf (block:block_rq_issue), poll "
	       "(/sys/block/DEV/\n"
	       "                             stat every T/3 ms, 1..10 ms) or "
	       "auto (bpf, else\n"
	       "                             poll; the default)\n"
	       "      --hysteresis on|off    on (the default): a disk back "
	       "soon after a release\n"
	       "                             waits 1, 2, then 4 more quiet "
	       "periods before its\n"
	       "                             next one (fewer writes at "
	       "QD1); off: the RFC's\n"
	       "                             release after T ms\n"
	       "      --rescan-ms MS         re-discover disks, queues and "
	       "interrupts every MS\n"
	       "                             (default %d; also on SIGHUP)\n"
	       "      --socket PATH          status socket (default "
	       "/run/nvq-latd.sock, or\n"
	       "                             $XDG_RUNTIME_DIR/nvq-latd.sock "
	       "where /run is not\n"
	       "                             writable; $NVQ_LATD_SOCKET)\n"
	       "  -h, --help                 this text\n"
	       "  -V, --version              the version\n"
	       "\n"
	       "For tests (fixture trees instead of the system's):\n"
	       "      --sysfs-root DIR       instead of /sys (also "
	       "$NVQ_SYSFS_ROOT); the QoS\n"
	       "                             state file then lives in "
	       "DIR/.nvq-state\n"
	       "      --procfs-root DIR      instead of /proc (interrupts, "
	       "irq affinity)\n"
	       "      --dev-root DIR         instead of /dev (DEVICE paths)\n"
	       "\n"
	       "status: ask the running daemon what it watches: per disk its "
	       "queues, CPUs,\n"
	       "active or idle, the limit applied (value and CPUs), applies, "
	       "releases and time\n"
	       "held. --json for JSON. Exit 1 when no daemon answers.\n"
	       "\n"
	       "Exit status: 0 after SIGTERM/SIGINT (limits restored), 1 on "
	       "errors, 2 on usage\n"
	       "errors. Manual: docs/nvq-latd.md.\n",
	       NVQ_QOS_TIMEOUT_MS_MAX, NVQ_QOS_TIMEOUT_MS_DEFAULT,
	       DEFAULT_RESCAN_MS);
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "nvq-latd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_line);
	return 2;
}

static const char *socket_default(char *buf, size_t len, bool server)
{
	const char *env = getenv("NVQ_LATD_SOCKET");

	if (env && *env)
		return env;
	latd_default_socket(buf, len, server);
	return buf;
}

static int run_status(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = NULL, *req;
	char def[108], buf[4096];
	bool json = false, first = true, bad = false;
	ssize_t n;
	int c, fd;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			path = optarg;
			break;
		case 'h':
			printf("usage: nvq-latd status [--json] [--socket "
			       "PATH]\n\n"
			       "Ask the running nvq-latd what it watches: per "
			       "disk the activity mode,\n"
			       "queues, CPUs, active or idle, the limit applied "
			       "(value and CPUs), applies,\n"
			       "releases, time held, and whether the platform "
			       "honours the limits.\n"
			       "  --json         as JSON\n"
			       "  --socket PATH  the daemon's socket (default "
			       "/run/nvq-latd.sock, else\n"
			       "                 $XDG_RUNTIME_DIR/"
			       "nvq-latd.sock; $NVQ_LATD_SOCKET)\n"
			       "Exit status 1 when no daemon answers.\n");
			return 0;
		case ':':
			return usage("option '%s' needs a value",
				     argv[optind - 1]);
		default:
			return usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage("status: unexpected argument '%s'", argv[optind]);
	if (!path)
		path = socket_default(def, sizeof(def), false);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "nvq-latd status: socket path too long: %s\n",
			path);
		return 1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr,
			"nvq-latd status: no nvq-latd answers at %s: %s (is "
			"it running? --socket names another socket)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	req = json ? "status json\n" : "status\n";
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		fprintf(stderr, "nvq-latd status: %s: %s\n", path,
			strerror(errno));
		close(fd);
		return 1;
	}
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (first && !strncmp(buf, "error:", 6))
			bad = true;
		first = false;
		fwrite(buf, 1, (size_t)n, bad ? stderr : stdout);
	}
	close(fd);
	if (first) {
		fprintf(stderr,
			"nvq-latd status: the daemon at %s sent nothing\n",
			path);
		return 1;
	}
	if (fflush(stdout)) {
		perror("nvq-latd status: stdout");
		return 1;
	}
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_RESCAN = 256,
		OPT_SOCKET,
		OPT_SYS,
		OPT_PROC,
		OPT_DEV,
		OPT_HYST,
	};
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "cpu-lat-limit-us", required_argument, NULL, 'l' },
		{ "cpu-lat-timeout-ms", required_argument, NULL, 't' },
		{ "activity", required_argument, NULL, 'a' },
		{ "hysteresis", required_argument, NULL, OPT_HYST },
		{ "rescan-ms", required_argument, NULL, OPT_RESCAN },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "sysfs-root", required_argument, NULL, OPT_SYS },
		{ "procfs-root", required_argument, NULL, OPT_PROC },
		{ "dev-root", required_argument, NULL, OPT_DEV },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct latd_opts o;
	char why[200], def[108], *end;
	const char *env;
	long v;
	int c;

	if (argc > 1 && !strcmp(argv[1], "status"))
		return run_status(argc - 1, argv + 1);

	memset(&o, 0, sizeof(o));
	o.rescan_ms = DEFAULT_RESCAN_MS;
	env = getenv("NVQ_SYSFS_ROOT");
	o.roots.sys = env && *env ? env : "/sys";
	o.roots.proc = "/proc";
	o.roots.dev = "/dev";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:l:t:a:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config = optarg;
			break;
		case 'l':
			if (latd_parse_limit(optarg, &o.cli.limit_us, why,
					     sizeof(why)))
				return usage("%s", why);
			o.cli.set |= LATD_SET_LIMIT;
			break;
		case 't':
			if (latd_parse_timeout(optarg, &o.cli.timeout_ms, why,
					       sizeof(why)))
				return usage("%s", why);
			o.cli.set |= LATD_SET_TIMEOUT;
			break;
		case 'a':
			if (latd_parse_activity(optarg, &o.cli.activity, why,
						sizeof(why)))
				return usage("%s", why);
			o.cli.set |= LATD_SET_ACTIVITY;
			break;
		case OPT_HYST:
			if (latd_parse_hysteresis(optarg, &o.cli.hysteresis,
						  why, sizeof(why)))
				return usage("%s", why);
			o.cli.set |= LATD_SET_HYSTERESIS;
			break;
		case OPT_RESCAN:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || errno || *end ||
			    v < 10 || v > 3600000)
				return usage("bad --rescan-ms \"%s\": use "
					     "10..3600000",
					     optarg);
			o.rescan_ms = (unsigned int)v;
			break;
		case OPT_SOCKET:
			o.socket = optarg;
			break;
		case OPT_SYS:
			o.roots.sys = optarg;
			o.sysfs_root_opt = optarg;
			break;
		case OPT_PROC:
			o.roots.proc = optarg;
			break;
		case OPT_DEV:
			o.roots.dev = optarg;
			break;
		case 'h':
			help();
			return fflush(stdout) ? 1 : 0;
		case 'V':
			printf("nvq-latd %s\n", NVQ_VERSION);
			return fflush(stdout) ? 1 : 0;
		case ':':
			return usage("option '%s' needs a value",
				     argv[optind - 1]);
		default:
			return usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	o.devices = argv + optind;
	o.nr_devices = argc - optind;
	if (!o.socket)
		o.socket = socket_default(def, sizeof(def), true);
	return latd_daemon_run(&o);
}
