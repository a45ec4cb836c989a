// SPDX-License-Identifier: MIT
/*
 * list: the namespaces of the controllers given (the emulated one by
 * default) in nvme-cli's columns, then the PCI NVMe controllers of the
 * machine with their driver and the URI that opens them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

static void lba_format(uint32_t lbs, unsigned int ms, char *buf, size_t len)
{
	if (lbs >= 1024 && !(lbs % 1024))
		snprintf(buf, len, "%3u KiB + %2u B", lbs / 1024, ms);
	else
		snprintf(buf, len, "%3u   B + %2u B", lbs, ms);
}

static unsigned int ns_ms(const struct nvq_id_ns *id)
{
	unsigned int f = nvq_flbas_index(id->flbas);

	return f < 64 ? id->lbaf[f].ms : 0;
}

/* The namespaces of one controller, as rows of `nvq list`. */
static int list_ctrl(const char *uri, struct json_writer *w)
{
	const struct nvq_id_ctrl *id;
	struct nvq_ctrl *ctrl;
	uint32_t small[64], *ids = small;
	char sn[21], mn[41], fr[9];
	int n, rc;

	rc = open_ctrl(uri, &ctrl);
	if (rc)
		return rc;
	id = nvq_ctrl_id(ctrl);
	if (!id) {
		nvq_close(ctrl);
		return fail("%s: no Identify Controller data", uri);
	}
	dev_string(id->sn, sizeof(id->sn), sn);
	dev_string(id->mn, sizeof(id->mn), mn);
	dev_string(id->fr, sizeof(id->fr), fr);
	rtrim(sn);
	rtrim(mn);
	rtrim(fr);

	n = nvq_ns_list(ctrl, small, ARRAY_SIZE(small));
	if (n > (int)ARRAY_SIZE(small)) {
		ids = calloc((size_t)n, sizeof(*ids));
		if (!ids) {
			nvq_close(ctrl);
			return fail("out of memory");
		}
		n = nvq_ns_list(ctrl, ids, (unsigned int)n);
	}
	if (n < 0) {
		rc = fail("%s: cannot list namespaces: %s", uri, lib_msg(n));
		n = 0;
	}
	if (!n && !w)
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n", uri, "-", sn,
		       mn, "(no active namespaces)", "", fr);
	for (int i = 0; i < n; i++) {
		struct nvq_ns_info ns;
		char used[32], max[32], fmt[32];

		if (nvq_ns_info(ctrl, ids[i], &ns) || !ns.id)
			continue;
		if (w) {
			json_begin_object(w, NULL);
			json_string(w, "URI", uri);
			json_string(w, "Transport",
				    strncmp(uri, "vfio:", 5) ? "emu" : "pcie");
			json_uint(w, "NameSpace", ns.nsid);
			json_string(w, "Firmware", fr);
			json_string(w, "ModelNumber", mn);
			json_string(w, "SerialNumber", sn);
			json_uint(w, "UsedBytes", ns.id->nuse * ns.lba_size);
			json_uint(w, "MaximumLBA", ns.nlba);
			json_uint(w, "PhysicalSize", ns.nlba * ns.lba_size);
			json_uint(w, "SectorSize", ns.lba_size);
			json_end_object(w);
			continue;
		}
		si_size((double)ns.id->nuse * ns.lba_size, used, sizeof(used));
		si_size((double)ns.nlba * ns.lba_size, max, sizeof(max));
		lba_format(ns.lba_size, ns_ms(ns.id), fmt, sizeof(fmt));
		printf("%-21s %-9u %-20s %-40s %s / %s %-16s %s\n", uri,
		       ns.nsid, sn, mn, used, max, fmt, fr);
	}
	if (ids != small)
		free(ids);
	nvq_close(ctrl);
	return rc;
}

static void list_pci_normal(const struct pci_nvme *p, size_t n)
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
		char uri[80];

		if (pci_usable(&p[i]))
			snprintf(uri, sizeof(uri), "vfio:%s", p[i].bdf);
		else
			snprintf(uri, sizeof(uri), "- (bind to vfio-pci)");
		printf("%-14s %04x:%04x %-10s %-30s %s\n", p[i].bdf,
		       p[i].vendor, p[i].device, p[i].driver, uri,
		       p[i].model[0] ? p[i].model : "-");
	}
}

static void list_pci_json(struct json_writer *w, const struct pci_nvme *p,
			  size_t n)
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
	struct pci_nvme *pci;
	size_t npci;
	int rc = EXIT_OK, ret;

	if (a->fmt == FMT_JSON) {
		wp = &w;
		json_init(wp, stdout, true);
		json_begin_object(wp, NULL);
		json_begin_array(wp, "Devices");
	} else {
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n", "URI",
		       "Namespace", "SN", "Model", "Usage", "Format", "FW Rev");
		printf("%-21s %-9s %-20s %-40s %-26s %-16s %s\n",
		       "---------------------", "---------",
		       "--------------------",
		       "----------------------------------------",
		       "--------------------------", "----------------",
		       "--------");
	}
	for (int i = 0; i < nuris; i++)
		if (list_ctrl(uris[i], wp))
			rc = EXIT_FAIL;

	ret = pci_scan(&pci, &npci);
	if (ret)
		rc = fail("cannot scan PCI devices: %s", strerror(-ret));
	if (wp) {
		json_end_array(wp);
		list_pci_json(wp, pci, npci);
		json_end_object(wp);
		if (finish_json(wp))
			rc = EXIT_FAIL;
	} else {
		list_pci_normal(pci, npci);
		if (fflush(stdout))
			rc = fail("cannot write to standard output: %s",
				  strerror(errno));
	}
	free(pci);
	return rc;
}
