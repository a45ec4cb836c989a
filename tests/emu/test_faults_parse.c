// SPDX-License-Identifier: MIT
/*
 * The fault syntax (docs/faults.md): every kind and option parses into
 * the fields it names; malformed specs are refused with a message that
 * says what is wrong, and never crash (random mutations of valid specs
 * included); the fault= and fault_seed= parameters reach the params.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "emu.h"
#include "harness.h"

#define CHECK_MSG_EMU(needle) CHECK_CONTAINS(nvq_emu_errmsg(), needle)

static struct nvq_emu_fault ok(const char *spec)
{
	struct nvq_emu_fault f;
	int ret = nvq_emu_fault_parse(spec, &f);

	if (ret)
		fprintf(stderr, "'%s': %s\n", spec, nvq_emu_errmsg());
	CHECK_EQ(ret, 0);
	return f;
}

/* @spec is refused, and the message contains @why. */
static void bad(const char *spec, const char *why)
{
	struct nvq_emu_fault f;
	int ret = nvq_emu_fault_parse(spec, &f);

	if (ret != -EINVAL || !strstr(nvq_emu_errmsg(), why)) {
		fprintf(stderr, "'%s' gave %d, message '%s', wanted '%s'\n",
			spec, ret, nvq_emu_errmsg(), why);
		CHECK(0);
	}
}

static void kinds(void)
{
	struct nvq_emu_fault f;
	unsigned int k;

	for (k = 0; k < NVQ_EMU_FAULT_NR; k++)
		CHECK(nvq_emu_fault_name(k));
	CHECK(!nvq_emu_fault_name(NVQ_EMU_FAULT_NR));

	f = ok("drop-cqe");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_DROP_CQE);
	CHECK_EQ(f.on, NVQ_EMU_ON_ANY);
	CHECK(!f.has_qid);
	CHECK_EQ(f.nth, 0);
	CHECK(f.prob == 0);
	CHECK_EQ(f.count, 0);

	f = ok("delay:2s");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_DELAY);
	CHECK_EQ(f.delay_ns, 2000000000ull);
	CHECK_EQ(ok("delay:150us").delay_ns, 150000);
	CHECK_EQ(ok("dup-cqe").kind, NVQ_EMU_FAULT_DUP_CQE);

	f = ok("bad-cid");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_BAD_CID);
	CHECK_EQ(f.id, -1);
	CHECK_EQ(ok("bad-cid:77").id, 77);
	CHECK_EQ(ok("bad-sqid:0x10").id, 16);
	CHECK_EQ(ok("bad-sqid").kind, NVQ_EMU_FAULT_BAD_SQID);

	f = ok("status:2/0x81");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_STATUS);
	CHECK_EQ(f.status, NVQ_STATUS_MAKE(NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR));
	f = ok("status:2/0x81@dnr=1");
	CHECK_EQ(f.status, NVQ_STATUS_MAKE(2, 0x81) | NVQ_STATUS_DNR_BIT);
	CHECK_EQ(ok("status:0/6@dnr=0").status, NVQ_STATUS_MAKE(0, 6));

	CHECK_EQ(ok("cfs").kind, NVQ_EMU_FAULT_CFS);
	CHECK(ok("cfs@now").now);
	CHECK(ok("vanish@now").now);
	f = ok("no-ready@count=3");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_NO_READY);
	CHECK_EQ(f.count, 3);
	CHECK_EQ(ok("no-ready@count=inf").count, NVQ_EMU_FAULT_FOREVER);

	f = ok("corrupt");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_CORRUPT);
	CHECK_EQ(f.on, NVQ_EMU_ON_READ); /* what corrupt means */
	CHECK_EQ(f.bytes, 0);
	CHECK_EQ(ok("corrupt:16").bytes, 16);
	CHECK_EQ(ok("corrupt@on=io").on, NVQ_EMU_ON_IO);

	f = ok("no-irq@count=inf");
	CHECK_EQ(f.kind, NVQ_EMU_FAULT_NO_IRQ);
	CHECK_EQ(f.count, NVQ_EMU_FAULT_FOREVER);
	CHECK_EQ(ok("vanish@nth=9").nth, 9);
}

static void options(void)
{
	struct nvq_emu_fault f;

	CHECK_EQ(ok("drop-cqe@on=admin").on, NVQ_EMU_ON_ADMIN);
	CHECK_EQ(ok("drop-cqe@on=io").on, NVQ_EMU_ON_IO);
	CHECK_EQ(ok("drop-cqe@on=read").on, NVQ_EMU_ON_READ);
	CHECK_EQ(ok("drop-cqe@on=write").on, NVQ_EMU_ON_WRITE);
	f = ok("drop-cqe@on=admin:0x06");
	CHECK_EQ(f.on, NVQ_EMU_ON_ADMIN_OPC);
	CHECK_EQ(f.opcode, 6);
	f = ok("drop-cqe@on=io:9");
	CHECK_EQ(f.on, NVQ_EMU_ON_IO_OPC);
	CHECK_EQ(f.opcode, 9);

	f = ok("drop-cqe@on=write@qid=3@nth=5@count=2@seed=42");
	CHECK(f.has_qid);
	CHECK_EQ(f.qid, 3);
	CHECK_EQ(f.nth, 5);
	CHECK_EQ(f.count, 2);
	CHECK(f.seeded);
	CHECK_EQ(f.seed, 42);
	CHECK(ok("drop-cqe@qid=0").has_qid);

	CHECK(ok("cfs@prob=0.01").prob == 0.01);
	CHECK(ok("cfs@prob=1").prob == 1);
	CHECK(ok("cfs@prob=2.5%").prob == 0.025);
	CHECK(ok("cfs@prob=1e-3").prob == 0.001);
	CHECK(ok("cfs@prob=.5").prob == 0.5);
}

static void malformed(void)
{
	bad("", "empty");
	bad("nonsense", "unknown fault 'nonsense'");
	bad("drop", "unknown fault");
	bad("DROP-CQE", "unknown fault");
	bad("drop-cqe:1", "takes no ':' argument");
	bad("drop-cqe@", "empty option");
	bad("drop-cqe@@nth=1", "empty option");
	bad("drop-cqe@nth", "needs a value");
	bad("drop-cqe@nth=", "needs a value");
	bad("drop-cqe@nth=0", "nth='0'");
	bad("drop-cqe@nth=-1", "nth='-1'");
	bad("drop-cqe@nth=5x", "nth='5x'");
	bad("drop-cqe@nth= 5", "nth=' 5'");
	bad("drop-cqe@nth=99999999999999999999999", "nth=");
	bad("drop-cqe@nth=1@nth=2", "given twice");
	bad("drop-cqe@bogus=1", "unknown option 'bogus'");
	bad("drop-cqe@now", "'now' applies to cfs and vanish");
	bad("cfs@now=1", "takes no value");
	bad("cfs@now@nth=2", "do not apply");
	bad("drop-cqe@on=", "needs a value");
	bad("drop-cqe@on=flush", "on='flush'");
	bad("drop-cqe@on=admin:256", "on='admin:256'");
	bad("drop-cqe@on=io:", "on='io:'");
	bad("drop-cqe@qid=65536", "qid='65536'");
	bad("drop-cqe@prob=0", "prob='0'");
	bad("drop-cqe@prob=1.5", "prob='1.5'");
	bad("drop-cqe@prob=-0.1", "prob='-0.1'");
	bad("drop-cqe@prob=nan", "prob='nan'");
	bad("drop-cqe@prob=inf", "prob='inf'");
	bad("drop-cqe@prob=0.1%%", "prob=");
	bad("drop-cqe@prob=0.5@nth=3", "exclude each other");
	bad("drop-cqe@count=0", "count='0'");
	bad("drop-cqe@count=forever", "count='forever'");
	bad("drop-cqe@seed=x", "seed='x'");
	bad("drop-cqe@dnr=1", "status only");
	bad("delay", "delay needs a time");
	bad("delay:", "empty argument");
	bad("delay:0", "a delay of 0");
	bad("delay:2h", "bad duration");
	bad("delay:7200s", "above 1 hour");
	bad("status", "SCT/SC");
	bad("status:2", "SCT/SC");
	bad("status:8/1", "SCT is 0..7");
	bad("status:2/256", "SC 0..255");
	bad("status:0/0", "success");
	bad("status:2/0x81@dnr=2", "dnr='2'");
	bad("bad-cid:65536", "not an id");
	bad("bad-sqid:-1", "not an id");
	bad("corrupt:0", "bytes");
	bad("corrupt:2000000", "bytes");
	bad("corrupt@on=write", "on=read");
	bad("corrupt@on=admin", "on=read");
	bad("no-ready@nth=2", "does not count commands");
	bad("no-ready@on=io", "does not count commands");
	bad("vanish@count=2", "vanishes once");
}

/* The struct form is checked as strictly as the string form. */
static void structs(void)
{
	struct nvq_emu_params p;
	struct nvq_emu_fault f;
	struct nvq_emu *e;
	unsigned int i;

	CHECK_OK(nvq_emu_params_parse("size=4M", &p));
	CHECK_OK(nvq_emu_create(&p, &e));
	memset(&f, 0, sizeof(f));
	CHECK_OK(nvq_emu_fault_add(e, &f)); /* zeroed: drop-cqe, next cmd */
	f.kind = NVQ_EMU_FAULT_NR;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	CHECK_MSG_EMU("no fault kind");
	f.kind = NVQ_EMU_FAULT_DELAY; /* no delay_ns */
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	CHECK_MSG_EMU("delay");
	f.kind = NVQ_EMU_FAULT_STATUS; /* status 0 */
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	CHECK_MSG_EMU("status");
	f.status = NVQ_STATUS_MAKE(2, 0x81) | NVQ_STATUS_MORE_BIT;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	f.status = NVQ_STATUS_MAKE(2, 0x81) | NVQ_STATUS_DNR_BIT;
	CHECK_OK(nvq_emu_fault_add(e, &f));
	f.kind = NVQ_EMU_FAULT_CFS;
	f.prob = 0.5;
	f.nth = 2;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	CHECK_MSG_EMU("exclude");
	f.nth = 0;
	f.prob = 1.5;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	f.prob = NAN;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	memset(&f, 0, sizeof(f));
	f.kind = NVQ_EMU_FAULT_BAD_CID;
	f.id = 70000;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	f.id = -1;
	f.on = (enum nvq_emu_fault_on)99;
	CHECK_EQ(nvq_emu_fault_add(e, &f), -EINVAL);
	CHECK_OK(nvq_emu_fault_inject(e, "cfs@prob=0.5"));
	CHECK_EQ(nvq_emu_fault_inject(e, "cfs@prob=5"), -EINVAL);
	CHECK_MSG_EMU("prob='5'");
	/* The table is bounded; clearing empties it. */
	for (i = 3; i < NVQ_EMU_MAX_FAULTS; i++)
		CHECK_OK(nvq_emu_fault_inject(e, "dup-cqe@on=write"));
	CHECK_EQ(nvq_emu_fault_inject(e, "dup-cqe"), -ENOSPC);
	CHECK_MSG_EMU("armed already");
	nvq_emu_fault_clear(e);
	CHECK_OK(nvq_emu_fault_inject(e, "dup-cqe"));
	for (i = 0; i < NVQ_EMU_FAULT_NR; i++)
		CHECK_EQ(nvq_emu_fault_count(e, i), 0);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NR), 0);
	nvq_emu_destroy(e);

	/* Hand-built parameters are checked at creation. */
	CHECK_OK(nvq_emu_params_parse("size=4M", &p));
	p.nr_faults = 1;
	memset(&p.faults[0], 0, sizeof(p.faults[0]));
	p.faults[0].kind = NVQ_EMU_FAULT_NO_READY;
	p.faults[0].nth = 3;
	CHECK_EQ(nvq_emu_create(&p, &e), -EINVAL);
	CHECK_MSG_EMU("does not count commands");
	p.nr_faults = NVQ_EMU_MAX_PARAM_FAULTS + 1;
	CHECK_EQ(nvq_emu_create(&p, &e), -EINVAL);
}

/* Random edits of valid specs: refused or accepted, never a crash. */
static void mutations(void)
{
	static const char *const seeds[] = {
		"drop-cqe@on=read@nth=5",
		"delay:2s@on=io:0x01@qid=1@count=3",
		"status:2/0x81@dnr=1@prob=0.25@seed=9",
		"corrupt:8@on=read@prob=1%",
		"no-ready@count=inf",
		"vanish@now",
		"bad-sqid:3@on=admin:6",
	};
	static const char alphabet[] = "@=:/%.,x0123456789-abcdefinorsw";
	uint64_t rng = test_seed("fault mutations", 1);
	char buf[128];
	unsigned int i, j;

	for (i = 0; i < 20000; i++) {
		struct nvq_emu_fault f;
		const char *s = seeds[test_rand(&rng) % 7];
		size_t n = strlen(s);
		unsigned int edits = 1 + (unsigned int)(test_rand(&rng) % 4);

		memcpy(buf, s, n + 1);
		for (j = 0; j < edits; j++) {
			size_t pos = (size_t)(test_rand(&rng) % (n + 1));
			char ch = alphabet[test_rand(&rng) %
					   (sizeof(alphabet) - 1)];

			switch (test_rand(&rng) % 3) {
			case 0: /* replace */
				if (pos < n)
					buf[pos] = ch;
				break;
			case 1: /* delete */
				if (pos < n) {
					memmove(buf + pos, buf + pos + 1,
						n - pos);
					n--;
				}
				break;
			default: /* insert */
				if (n + 2 < sizeof(buf)) {
					memmove(buf + pos + 1, buf + pos,
						n - pos + 1);
					buf[pos] = ch;
					n++;
				}
				break;
			}
		}
		if (nvq_emu_fault_parse(buf, &f))
			CHECK(strstr(nvq_emu_errmsg(), "emu "));
	}
}

/* fault= and fault_seed= in the parameter string. */
static void params(void)
{
	struct nvq_emu_params p;
	char s[2048];
	unsigned int i;
	int n;

	CHECK_OK(nvq_emu_params_parse("", &p));
	CHECK_EQ(p.nr_faults, 0);
	CHECK_OK(nvq_emu_params_parse(
		"size=4M,fault=drop-cqe@nth=5,fault=cfs@prob=0.01,fault_seed=42",
		&p));
	CHECK_EQ(p.nr_faults, 2);
	CHECK_EQ(p.faults[0].kind, NVQ_EMU_FAULT_DROP_CQE);
	CHECK_EQ(p.faults[0].nth, 5);
	CHECK_EQ(p.faults[1].kind, NVQ_EMU_FAULT_CFS);
	CHECK_EQ(p.fault_seed, 42);
	CHECK_EQ(p.ns_size, 4u << 20);

	CHECK_EQ(nvq_emu_params_parse("fault=bogus", &p), -EINVAL);
	CHECK_MSG_EMU("unknown fault 'bogus'");
	CHECK_EQ(nvq_emu_params_parse("fault=", &p), -EINVAL);
	CHECK_MSG_EMU("empty");
	CHECK_EQ(nvq_emu_params_parse("fault_seed=x", &p), -EINVAL);
	CHECK_MSG_EMU("fault_seed");
	CHECK_EQ(nvq_emu_params_parse("fault_seed=1,fault_seed=2", &p),
		 -EINVAL);
	CHECK_MSG_EMU("given twice");
	/* A ',' ends the fault: what follows is the next parameter. */
	CHECK_EQ(nvq_emu_params_parse("fault=delay:1s,2s", &p), -EINVAL);
	CHECK_MSG_EMU("expected key=value");

	n = 0;
	for (i = 0; i <= NVQ_EMU_MAX_PARAM_FAULTS; i++)
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%sfault=dup-cqe",
			      i ? "," : "");
	CHECK_EQ(nvq_emu_params_parse(s, &p), -EINVAL);
	CHECK_MSG_EMU("more than");
}

int main(void)
{
	kinds();
	options();
	malformed();
	structs();
	mutations();
	params();
	return 0;
}
