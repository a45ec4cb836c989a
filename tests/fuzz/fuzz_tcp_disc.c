// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what NVMe/TCP discovery takes from outside the
 * process.
 *
 * The first byte picks what the rest is:
 *   even: a discovery log page for nvq_disc_log_decode_size() (as a
 *         controller would send it), with the caller's entry size this
 *         release's or a later, larger one's (bit 1);
 *   odd:  the text of a tcp: URI, for nvq_tcp_opts_parse() (bit 1: as a
 *         discovery controller's) and nvq_uri_split_nsid().
 * Properties: no crash, undefined behaviour, leak or read outside the
 * input (ASan: the input is an exact-size copy); a decoded log has at
 * most NVQ_DISC_MAX_RECORDS records, each string NUL-terminated inside
 * its field and without trailing spaces, and the page was long enough
 * for them; a URI that parses has a host, a port, an NQN starting with
 * "nqn." and options within their bounds; a split URI is no longer than
 * the one given.
 *
 * The host identity files are looked for in a directory that does not
 * exist (NVQ_TCP_ETC), so the run does not depend on this machine.
 * Seeds: tests/fuzz/corpus/tcp-disc/ (pages of Linux's target, a
 * referral, an empty log; URIs with every option, IPv6, /NSID).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "tcp.h"
#include "transport.h"

#define BUG(...)                                                \
	do {                                                    \
		fprintf(stderr, "fuzz-tcp-disc: " __VA_ARGS__); \
		fputc('\n', stderr);                            \
		abort();                                        \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("NVQ_TCP_ETC", "/nonexistent/nvq-fuzz-etc", 1);
	return 0;
}

static void check_str(const char *s, size_t field, const char *name)
{
	const char *nul = memchr(s, '\0', field);
	size_t n;

	if (!nul)
		BUG("%s not NUL-terminated inside its field", name);
	n = (size_t)(nul - s);
	if (n && s[n - 1] == ' ')
		BUG("%s ends in a space", name);
}

static void page(const uint8_t *d, size_t n, bool bigger)
{
	uint32_t esz =
		(uint32_t)sizeof(struct nvq_disc_entry) + (bigger ? 24 : 0);
	struct nvq_disc_log *log;
	uint8_t *copy = malloc(n ? n : 1);
	uint32_t i;

	if (!copy)
		return;
	memcpy(copy, d, n);
	if (nvq_disc_log_decode_size(copy, n, &log, esz)) {
		if (log)
			BUG("a failed decode left a log");
		free(copy);
		return;
	}
	if (log->nr_entries > NVQ_DISC_MAX_RECORDS)
		BUG("%u records", log->nr_entries);
	if (n < 1024 + (size_t)log->nr_entries * 1024)
		BUG("%u records from %zu bytes", log->nr_entries, n);
	if (log->entry_size != esz || (log->nr_entries && !log->entries))
		BUG("bad entry size or no entries");
	for (i = 0; i < log->nr_entries; i++) {
		const struct nvq_disc_entry *e =
			(const void *)((const char *)log->entries +
				       (size_t)i * esz);

		check_str(e->trsvcid, sizeof(e->trsvcid), "trsvcid");
		check_str(e->traddr, sizeof(e->traddr), "traddr");
		check_str(e->subnqn, sizeof(e->subnqn), "subnqn");
		if (bigger) {
			const uint8_t *tail = (const uint8_t *)e + sizeof(*e);

			for (size_t k = 0; k < 24; k++)
				if (tail[k])
					BUG("the caller's part of an entry "
					    "written");
		}
	}
	nvq_disc_log_free(log);
	free(copy);
}

static void uri(const uint8_t *d, size_t n, bool disc)
{
	char *s = malloc(n + 5), dev[512];
	struct nvq_tcp_opts o;
	uint32_t nsid;

	if (!s)
		return;
	memcpy(s, "tcp:", 4);
	memcpy(s + 4, d, n);
	s[n + 4] = '\0';
	if (!nvq_tcp_opts_parse(s + 4, disc, &o)) {
		if (!o.host[0] || !o.port[0] || strncmp(o.subnqn, "nqn.", 4) ||
		    strncmp(o.hostnqn, "nqn.", 4))
			BUG("parsed without host, port or NQN: '%s'", s);
		if (strlen(o.subnqn) > NVQ_NQN_MAX ||
		    strlen(o.hostnqn) > NVQ_NQN_MAX)
			BUG("an NQN too long: '%s'", s);
		if (o.queue_size < 16 || o.queue_size > 1024 ||
		    o.ctrl_loss_tmo_s < -1 || o.reconnect_delay_s < 1 ||
		    !o.connect_timeout_ms || o.nsid)
			BUG("an option out of bounds: '%s'", s);
	}
	if (!nvq_uri_split_nsid(s, dev, sizeof(dev), &nsid)) {
		if (strlen(dev) > strlen(s) || strncmp(dev, "tcp:", 4))
			BUG("split '%s' into '%s'", s, dev);
		if (nsid > NVQ_URI_NSID_MAX)
			BUG("nsid %u from '%s'", nsid, s);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1) {
		/* text: no NUL inside (the URI is a C string) */
		if (memchr(data + 1, '\0', size - 1))
			return 0;
		uri(data + 1, size - 1, data[0] & 2);
	} else {
		page(data + 1, size - 1, data[0] & 2);
	}
	return 0;
}
