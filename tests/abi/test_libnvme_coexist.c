// SPDX-License-Identifier: MIT
/*
 * An application that uses libnvme (nvme-cli's library) and nvq together
 * includes both headers in one file. This compiles only if no name of
 * nvq's public headers collides with libnvme's (nvq's specification
 * definitions are nvq_ / NVQ_ prefixed), and checks that the two
 * libraries' views of the specification's structures agree, so data read
 * through one may be handed to the other.
 */
#include <libnvme.h>

#include <nvq/nvq.h>

#include <stddef.h>
#include <stdio.h>

static int bad;

#define SAME(ours, theirs, field)                                         \
	do {                                                              \
		if (offsetof(struct ours, field) !=                       \
		    offsetof(struct theirs, field)) {                     \
			printf("%s.%s at %zu, libnvme's at %zu\n", #ours, \
			       #field, offsetof(struct ours, field),      \
			       offsetof(struct theirs, field));           \
			bad = 1;                                          \
		}                                                         \
	} while (0)

#define SAME_SIZE(ours, theirs)                                             \
	do {                                                                \
		if (sizeof(struct ours) != sizeof(struct theirs)) {         \
			printf("sizeof %s %zu, libnvme's %zu\n", #ours,     \
			       sizeof(struct ours), sizeof(struct theirs)); \
			bad = 1;                                            \
		}                                                           \
	} while (0)

int main(void)
{
	SAME_SIZE(nvq_id_ctrl, nvme_id_ctrl);
	SAME(nvq_id_ctrl, nvme_id_ctrl, vid);
	SAME(nvq_id_ctrl, nvme_id_ctrl, mdts);
	SAME(nvq_id_ctrl, nvme_id_ctrl, oacs);
	SAME(nvq_id_ctrl, nvme_id_ctrl, sqes);
	SAME(nvq_id_ctrl, nvme_id_ctrl, nn);
	SAME(nvq_id_ctrl, nvme_id_ctrl, oncs);
	SAME(nvq_id_ctrl, nvme_id_ctrl, vwc);
	SAME(nvq_id_ctrl, nvme_id_ctrl, sgls);
	SAME(nvq_id_ctrl, nvme_id_ctrl, subnqn);
	SAME_SIZE(nvq_id_ns, nvme_id_ns);
	SAME(nvq_id_ns, nvme_id_ns, nsze);
	SAME(nvq_id_ns, nvme_id_ns, nlbaf);
	SAME(nvq_id_ns, nvme_id_ns, flbas);
	SAME(nvq_id_ns, nvme_id_ns, dlfeat);
	SAME(nvq_id_ns, nvme_id_ns, lbaf);
	SAME_SIZE(nvq_id_ctrl_nvm, nvme_id_ctrl_nvm);
	SAME(nvq_id_ctrl_nvm, nvme_id_ctrl_nvm, wzsl);
	SAME(nvq_id_ctrl_nvm, nvme_id_ctrl_nvm, dmrl);
	SAME(nvq_id_ctrl_nvm, nvme_id_ctrl_nvm, dmrsl);
	SAME(nvq_id_ctrl_nvm, nvme_id_ctrl_nvm, dmsl);
	SAME_SIZE(nvq_smart_log, nvme_smart_log);
	SAME(nvq_smart_log, nvme_smart_log, data_units_read);
	SAME(nvq_smart_log, nvme_smart_log, power_on_hours);
	SAME_SIZE(nvq_error_log, nvme_error_log_page);
	SAME_SIZE(nvq_dsm_range, nvme_dsm_range);
	/* A libnvme constant and an nvq one for the same thing. */
	if (NVQ_IDENTIFY_DATA_SIZE != NVME_IDENTIFY_DATA_SIZE) {
		printf("identify data size differs\n");
		bad = 1;
	}
	if ((int)nvme_admin_identify != (int)nvq_admin_identify) {
		printf("Identify opcode differs\n");
		bad = 1;
	}
	printf("libnvme-coexist: %s (libnvq %s)\n", bad ? "FAIL" : "ok",
	       nvq_version());
	return bad;
}
