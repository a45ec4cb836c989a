// SPDX-License-Identifier: MIT
/*
 * list: every namespace in nvme-cli's `nvme list` columns (Node, Generic,
 * SN, Model, Namespace, Usage, Format, FW Rev): those of the controllers
 * given (the emulated one by default), of the PCI functions bound to
 * vfio-pci (opened, when this user may), and the block devices the
 * kernel's nvme driver made of the others; then the PCI NVMe controllers
 * of the machine with their driver and the URI that opens them. Node is
 * the URI that opens the namespace (URI/NSID) for nvq's, /dev/nvmeXnY for
 * the kernel's; -o json's DevicePath the same. An active namespace that
 * nvq refuses (zoned, 64-bit guard PI, ...) has a row with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define ROW_FMT "%-21s %-21s %-20s %-40s %-9s %-26s %-16s %s\n"

/* One namespace row of the list. */
struct row {
	const char *node, *generic; /* Node and Generic */
	const char *sn, *mn, *fr;
	uint32_t nsid;
	int64_t used; /* bytes; -1: not known */
	uint64_t nlba;
	uint32_t lba_size;
	int ms; /* metadata bytes per block; -1: not known */
	/* JSON only */
	const char *uri; /* the controller's URI; NULL for the kernel's */
	const char *transport;
	const char *address; /* PCI address; NULL for emu: */
	const char *product;
	int index; /* the kernel's controller instance; -1 for nvq's */
};

static bool pci_usable(const struct pci_nvme *p)
{
	return !strcmp(p->driver, "vfio-pci");
}

static void si_size(double v, char *buf, size_t len)
{
	static const char *const unit[] = { "", "k", "M", "G", "T", "P", "E" };
	unsigned int i = 0;

	while (v >= 1000 && i + 1 < ARRAY_SIZE(unit)) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%6.2f %2sB", v, unit[i]);
}

static void lba_format(uint32_t lbs, int ms, char *buf, size_t len)
{
	char meta[16] = "";

	if (ms >= 0)
		snprintf(meta, sizeof(meta), " + %2d B", ms);
	if (lbs >= 1024 && !(lbs % 1024))
		snprintf(buf, len, "%3u KiB%s", lbs / 1024, meta);
	else
		snprintf(buf, len, "%3u   B%s", lbs, meta);
}

static unsigned int ns_ms(const struct nvq_id_ns *id)
{
	unsigned int f = nvq_flbas_index(id->flbas);

	return f < 64 ? id->lbaf[f].ms : 0;
}

/* nvme-cli's ProductName: the PCI class and pci.ids' names. */
static void product_name(unsigned int vendor, unsigned int device, char *buf,
			 size_t len)
{
	char names[512];

	if (!pci_ids_name(vendor, device, names, sizeof(names)))
		snprintf(names, sizeof(names), "Vendor %04x Device %04x",
			 vendor, device);
	snprintf(buf, len, "Non-Volatile memory controller: %s", names);
}

static void print_row(const struct row *r, struct json_writer *w)
{
	char used[32], max[32], usage[80], fmt[32], ns[16];

	if (w) {
		json_begin_object(w, NULL);
		if (r->uri)
			json_string(w, "URI", r->uri);
		else
			json_null(w, "URI");
		json_string(w, "Transport", r->transport);
		if (r->address)
			json_string(w, "Address", r->address);
		json_uint(w, "NameSpace", r->nsid);
		json_string(w, "DevicePath", r->node);
		if (r->generic)
			json_string(w, "GenericPath", r->generic);
		json_string(w, "Firmware", r->fr);
		json_int(w, "Index", r->index);
		json_string(w, "ModelNumber", r->mn);
		json_string(w, "ProductName", r->product);
		json_string(w, "SerialNumber", r->sn);
		if (r->used >= 0)
			json_uint(w, "UsedBytes", (uint64_t)r->used);
		else
			json_null(w, "UsedBytes");
		json_uint(w, "MaximumLBA", r->nlba);
		json_uint(w, "PhysicalSize", r->nlba * r->lba_size);
		json_uint(w, "SectorSize", r->lba_size);
		json_end_object(w);
		return;
	}
	if (r->used >= 0)
		si_size((double)r->used, used, sizeof(used));
	else
		snprintf(used, sizeof(used), "%10s", "-");
	si_size((double)r->nlba * r->lba_size, max, sizeof(max));
	snprintf(usage, sizeof(usage), "%s / %s", used, max);
	lba_format(r->lba_size, r->ms, fmt, sizeof(fmt));
	snprintf(ns, sizeof(ns), "%u", r->nsid);
	printf(ROW_FMT, r->node, r->generic ? r->generic : "-", r->sn, r->mn,
	       ns, usage, fmt, r->fr);
}

/* A row that is no namespace: @what in the Namespace..Format columns. */
static void print_note(const char *node, const char *sn, const char *mn,
		       const char *what, const char *fr)
{
	printf("%-21s %-21s %-20s %-40s %-53s %s\n", node, "-", sn, mn, what,
	       fr);
}

/*
 * The URI that opens namespace @nsid of the controller @uri (which names
 * none): the vfio grammar puts /NSID after the address, emu's at the end.
 */
static void ns_uri(const char *uri, uint32_t nsid, char *buf, size_t len)
{
	size_t at = strlen(uri);

	if (!strncmp(uri, "vfio:", 5))
		at = strcspn(uri, ",");
	snprintf(buf, len, "%.*s/%u%s", (int)at, uri, nsid, uri + at);
}

/*
 * The active namespaces of @ctrl that nvq does not drive (a format or
 * command set it refused), in ascending order, from Identify's Active
 * Namespace List: *@out (malloc'ed) and their count. None when the
 * controller has no such list (before NVMe 1.1) or it cannot be read:
 * the list then shows what nvq drives, as before.
 */
static size_t refused_ns(struct nvq_ctrl *ctrl, uint32_t only, uint32_t **out)
{
	uint32_t *page = malloc(4096), *ids = NULL, start = 0;
	size_t n = 0, cap = 0;

	*out = NULL;
	while (page) {
		struct nvq_sqe cmd = { 0 };
		struct nvq_ns_format f;
		unsigned int i;

		cmd.opcode = nvq_admin_identify;
		cmd.nsid = start;
		cmd.cdw10 = NVQ_ID_CNS_NS_ACTIVE_LIST;
		if (nvq_admin(ctrl, &cmd, page, 4096, NULL, NULL))
			break;
		for (i = 0; i < 1024 && page[i] > start; i++) {
			if ((only && page[i] != only) ||
			    nvq_ns_format(ctrl, page[i], &f) || f.usable)
				continue;
			if (n == cap) {
				uint32_t *m =
					realloc(ids, (cap + 16) * sizeof(*ids));

				if (!m)
					goto out;
				ids = m;
				cap += 16;
			}
			ids[n++] = page[i];
		}
		/* a full page: the list goes on after its last entry */
		if (i < 1024 || page[1023] >= 0xfffffffeu)
			break;
		start = page[1023];
	}
out:
	free(page);
	*out = ids;
	return n;
}

/* A refused namespace's row: the library's reason where its size goes. */
static void print_refused(struct nvq_ctrl *ctrl, const char *uri, uint32_t only,
			  uint32_t nsid, const char *sn, const char *mn,
			  const char *fr)
{
	struct nvq_ns_format f;
	char node[512], what[200];

	if (only)
		snprintf(node, sizeof(node), "%s", uri);
	else
		ns_uri(uri, nsid, node, sizeof(node));
	if (nvq_ns_format(ctrl, nsid, &f))
		snprintf(f.why, sizeof(f.why), "%s", nvq_errmsg());
	snprintf(what, sizeof(what), "%u (not driven by nvq: %s)", nsid, f.why);
	print_note(node, sn, mn, what, fr);
}

/*
 * The namespaces of the open controller @ctrl (@uri) as rows; only the
 * one its URI names, if it names one. Active namespaces nvq refused show
 * why in text (JSON's Devices are the namespaces that can be opened).
 */
static int list_open(const char *uri, struct nvq_ctrl *ctrl, const char *addr,
		     const char *product, struct json_writer *w)
{
	const struct nvq_id_ctrl *id = nvq_ctrl_id(ctrl);
	uint32_t small[64], *ids = small, only = nvq_ctrl_uri_nsid(ctrl);
	uint32_t *bad = NULL;
	size_t nbad = 0, b = 0;
	char sn[21], mn[41], fr[9];
	int n, rc = EXIT_OK;

	if (!id)
		return fail("%s: no Identify Controller data", uri);
	dev_string(id->sn, sizeof(id->sn), sn);
	dev_string(id->mn, sizeof(id->mn), mn);
	dev_string(id->fr, sizeof(id->fr), fr);
	rtrim(sn);
	rtrim(mn);
	rtrim(fr);

	n = nvq_ns_list(ctrl, small, ARRAY_SIZE(small));
	if (n > (int)ARRAY_SIZE(small)) {
		ids = calloc((size_t)n, sizeof(*ids));
		if (!ids)
			return fail("out of memory");
		n = nvq_ns_list(ctrl, ids, (unsigned int)n);
	}
	if (n < 0) {
		rc = fail("%s: cannot list namespaces: %s", uri, lib_msg(n));
		n = 0;
	}
	if (!w)
		nbad = refused_ns(ctrl, only, &bad);
	if (!n && !nbad && !w)
		print_note(uri, sn, mn, "(no active namespaces)", fr);
	for (int i = 0; i < n; i++) {
		struct nvq_ns_info ns;
		char node[512];
		struct row r = {
			.node = node,
			.sn = sn,
			.mn = mn,
			.fr = fr,
			.uri = uri,
			.transport = strncmp(uri, "vfio:", 5) ? "emu" : "pcie",
			.address = addr,
			.product = product,
			.index = -1,
		};

		for (; b < nbad && bad[b] < ids[i]; b++)
			print_refused(ctrl, uri, only, bad[b], sn, mn, fr);
		if ((only && ids[i] != only) ||
		    nvq_ns_info(ctrl, ids[i], &ns) || !ns.id)
			continue;
		if (only)
			snprintf(node, sizeof(node), "%s", uri);
		else
			ns_uri(uri, ns.nsid, node, sizeof(node));
		r.nsid = ns.nsid;
		r.used = (int64_t)(ns.id->nuse * ns.lba_size);
		r.nlba = ns.nlba;
		r.lba_size = ns.lba_size;
		r.ms = (int)ns_ms(ns.id);
		print_row(&r, w);
	}
	for (; b < nbad; b++)
		print_refused(ctrl, uri, only, bad[b], sn, mn, fr);
	free(bad);
	if (ids != small)
		free(ids);
	return rc;
}

/* A controller named on the command line: a failure is the command's. */
static int list_uri(const char *uri, struct json_writer *w)
{
	struct nvq_ctrl *ctrl;
	int rc;

	rc = open_ctrl(uri, &ctrl);
	if (rc)
		return rc;
	rc = list_open(uri, ctrl, NULL, "nvq emulated NVMe controller", w);
	nvq_close(ctrl);
	return rc;
}

/*
 * A PCI function bound to vfio-pci: its namespaces when it opens; when
 * not (busy in another process, no permission on its group, ...) the
 * reason goes into its row (and *@why for JSON), and the list goes on.
 */
static void list_vfio(const struct pci_nvme *p, struct json_writer *w,
		      char *why, size_t wlen)
{
	char uri[80], product[600], what[600];
	struct nvq_ctrl *ctrl;
	int rc;

	why[0] = '\0';
	snprintf(uri, sizeof(uri), "vfio:%s", p->bdf);
	product_name(p->vendor, p->device, product, sizeof(product));
	rc = try_open_ctrl(uri, &ctrl);
	if (rc) {
		snprintf(why, wlen, "%s", lib_msg(rc));
		if (!w) {
			snprintf(what, sizeof(what), "(cannot open: %s)", why);
			print_note(uri, "-", p->model[0] ? p->model : "-", what,
				   "-");
		}
		return;
	}
	list_open(uri, ctrl, p->bdf, product, w);
	nvq_close(ctrl);
}

/* A PCI function the kernel's nvme driver owns: its block devices. */
static void list_kernel(const struct pci_nvme *p, struct json_writer *w,
			char *ctrls, size_t clen)
{
	char product[600], node[64], generic[64];
	struct kernel_ns *ns;
	size_t n;

	product_name(p->vendor, p->device, product, sizeof(product));
	if (pci_kernel_ns(p, ctrls, clen, &ns, &n))
		return;
	if (!n && ctrls[0] && !w) {
		snprintf(node, sizeof(node), "/dev/%.32s", ctrls);
		print_note(node, p->serial, p->model, "(no namespaces)",
			   p->firmware);
	}
	for (size_t i = 0; i < n; i++) {
		struct row r = {
			.node = node,
			.generic = generic,
			.sn = p->serial,
			.mn = p->model,
			.fr = p->firmware,
			.nsid = ns[i].nsid,
			.used = -1, /* NUSE: nvq sends the kernel no command */
			.lba_size = ns[i].lba_size ? ns[i].lba_size : 512,
			.ms = ns[i].ms,
			.transport = "pcie",
			.address = p->bdf,
			.product = product,
			.index = ns[i].index,
		};

		snprintf(node, sizeof(node), "/dev/%s", ns[i].block);
		snprintf(generic, sizeof(generic), "/dev/%s", ns[i].generic);
		r.nlba = ns[i].bytes / r.lba_size;
		print_row(&r, w);
	}
	free(ns);
}

static void list_pci_normal(const struct pci_nvme *p, char (*ctrls)[64],
			    size_t n)
{
	if (!n) {
		printf("\nNo PCI NVMe controllers found.\n");
		return;
	}
	printf("\nPCI NVMe controllers:\n%-14s %-9s %-10s %-30s %s\n",
	       "Address", "ID", "Driver", "URI", "Model");
	printf("%-14s %-9s %-10s %-30s %s\n", "--------------", "---------",
	       "----------", "------------------------------",
	       "----------------------------------------");
	for (size_t i = 0; i < n; i++) {
		char uri[96];

		if (pci_usable(&p[i]))
			snprintf(uri, sizeof(uri), "vfio:%s", p[i].bdf);
		else if (ctrls[i][0])
			snprintf(uri, sizeof(uri), "- (/dev/%s)", ctrls[i]);
		else
			snprintf(uri, sizeof(uri), "- (bind to vfio-pci)");
		printf("%-14s %04x:%04x %-10s %-30s %s\n", p[i].bdf,
		       p[i].vendor, p[i].device, p[i].driver, uri,
		       p[i].model[0] ? p[i].model : "-");
	}
}

static void list_pci_json(struct json_writer *w, const struct pci_nvme *p,
			  char (*ctrls)[64], char (*why)[512], size_t n)
{
	json_begin_array(w, "PCIControllers");
	for (size_t i = 0; i < n; i++) {
		json_begin_object(w, NULL);
		json_string(w, "Address", p[i].bdf);
		json_uint(w, "VendorId", p[i].vendor);
		json_uint(w, "DeviceId", p[i].device);
		json_string(w, "Driver", p[i].driver);
		if (pci_usable(&p[i])) {
			char uri[80];

			snprintf(uri, sizeof(uri), "vfio:%s", p[i].bdf);
			json_string(w, "URI", uri);
		} else {
			json_null(w, "URI");
		}
		if (why[i][0])
			json_string(w, "Error", why[i]);
		if (ctrls[i][0]) {
			char dev[80], *save = NULL, *c;

			json_begin_array(w, "Controllers");
			for (c = strtok_r(ctrls[i], ",", &save); c;
			     c = strtok_r(NULL, ",", &save)) {
				snprintf(dev, sizeof(dev), "/dev/%s", c);
				json_string(w, NULL, dev);
			}
			json_end_array(w);
		}
		if (p[i].model[0]) {
			json_string(w, "ModelNumber", p[i].model);
			json_string(w, "SerialNumber", p[i].serial);
			json_string(w, "Firmware", p[i].firmware);
		}
		json_end_object(w);
	}
	json_end_array(w);
}

int run_list(struct args *a)
{
	char *def_uri[] = { "emu:" };
	char **uris = a->npos ? a->pos : def_uri;
	int nuris = a->npos ? a->npos : 1;
	struct json_writer w, *wp = NULL;
	char(*ctrls)[64] = NULL, (*why)[512] = NULL;
	struct pci_nvme *pci;
	size_t npci;
	int rc = EXIT_OK, ret;

	ret = pci_scan(&pci, &npci);
	if (ret)
		rc = fail("cannot scan PCI devices: %s", strerror(-ret));
	if (npci) {
		ctrls = calloc(npci, sizeof(*ctrls));
		why = calloc(npci, sizeof(*why));
		if (!ctrls || !why) {
			free(ctrls);
			free(why);
			free(pci);
			return fail("out of memory");
		}
	}
	if (a->fmt == FMT_JSON) {
		wp = &w;
		json_init(wp, stdout, true);
		json_begin_object(wp, NULL);
		json_begin_array(wp, "Devices");
	} else {
		printf(ROW_FMT, "Node", "Generic", "SN", "Model", "Namespace",
		       "Usage", "Format", "FW Rev");
		printf(ROW_FMT, "---------------------",
		       "---------------------", "--------------------",
		       "----------------------------------------", "---------",
		       "--------------------------", "----------------",
		       "--------");
	}
	for (int i = 0; i < nuris; i++)
		if (list_uri(uris[i], wp))
			rc = EXIT_FAIL;
	for (size_t i = 0; i < npci; i++) {
		if (pci_usable(&pci[i]))
			list_vfio(&pci[i], wp, why[i], sizeof(why[i]));
		else if (!strcmp(pci[i].driver, "nvme"))
			list_kernel(&pci[i], wp, ctrls[i], sizeof(ctrls[i]));
	}

	if (wp) {
		json_end_array(wp);
		list_pci_json(wp, pci, ctrls, why, npci);
		json_end_object(wp);
		if (finish_json(wp))
			rc = EXIT_FAIL;
	} else {
		list_pci_normal(pci, ctrls, npci);
		if (fflush(stdout))
			rc = fail("cannot write to standard output: %s",
				  strerror(errno));
	}
	free(ctrls);
	free(why);
	free(pci);
	return rc;
}
