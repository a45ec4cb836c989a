// SPDX-License-Identifier: MIT
/*
 * Admin command timeouts: an Asynchronous Event Request is held by the
 * device until an event, so with a short admin timeout nvq_admin() gives
 * up on it with -ETIMEDOUT. Its slot stays reserved (the device still
 * owns the command) while other admin commands go on working; when the
 * event finally completes it, the slot is freed; one still pending at
 * close is cancelled without leaks.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

static int busy_slots(struct nvq_ctrl *c)
{
	int i, n = 0;

	pthread_mutex_lock(&c->admin_lock);
	for (i = 0; i < NVQ_ADMIN_DEPTH; i++)
		n += c->actx[i].busy;
	pthread_mutex_unlock(&c->admin_lock);
	return n;
}

int main(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_sqe aer, sqe;
	char id[4096];
	uint32_t result = 0;
	uint16_t st;

	nvq_opts_init(&o);
	o.admin_timeout_ms = 500;
	c = open_or_die("emu:size=4M", &o);
	memset(&aer, 0, sizeof(aer));
	aer.opcode = nvq_admin_async_event;

	CHECK_EQ(nvq_admin(c, &aer, NULL, 0, NULL, &st), -ETIMEDOUT);
	CHECK_MSG("timed out");
	CHECK_EQ(busy_slots(c), 1);

	/* Other admin commands are not held up by it. */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = nvq_admin_identify;
	sqe.cdw10 = NVQ_ID_CNS_CTRL;
	CHECK_OK(nvq_admin(c, &sqe, id, sizeof(id), NULL, NULL));
	CHECK(!memcmp(id + 24, nvq_ctrl_id(c)->mn, 40));
	CHECK_EQ(busy_slots(c), 1);

	/* An over-temperature threshold below the current temperature
	 * raises a SMART event: the device completes the held AER. */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = nvq_admin_set_features;
	sqe.cdw10 = NVQ_FEAT_TEMP_THRESH;
	sqe.cdw11 = 200; /* kelvin */
	CHECK_OK(nvq_admin(c, &sqe, NULL, 0, NULL, NULL));
	/* The next admin command reaps the late completion. */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = nvq_admin_get_features;
	sqe.cdw10 = NVQ_FEAT_TEMP_THRESH;
	CHECK_OK(nvq_admin(c, &sqe, NULL, 0, &result, NULL));
	CHECK_EQ(result & 0xffff, 200);
	CHECK_EQ(busy_slots(c), 0);

	/* I/O is unaffected. */
	CHECK_OK(nvq_write_sync(c, 1, id, 0, 1, NULL));

	/* One more held AER, still pending at close. */
	CHECK_EQ(nvq_admin(c, &aer, NULL, 0, NULL, NULL), -ETIMEDOUT);
	CHECK_EQ(busy_slots(c), 1);
	nvq_close(c);
	printf("admin-timeout: ok\n");
	return 0;
}
