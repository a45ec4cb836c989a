/* SPDX-License-Identifier: MIT */
/*
 * Fault injection inside the emulated controller (fault.c): the hooks the
 * rest of the device calls. Each hook is reached only behind one
 * emu_unlikely() test of a word that is zero unless a fault is armed (or
 * a completion is held back), so a controller without faults runs the
 * code it ran before. Included by emu_internal.h.
 */
#ifndef NVQ_EMU_FAULT_H
#define NVQ_EMU_FAULT_H

#include <stdbool.h>
#include <stdint.h>

struct nvq_emu;
struct emu_sq;
struct emu_cq;
struct nvq_sqe;
struct nvq_cqe;
struct nvq_emu_params;

/* Creation: the fault state, and the faults of @p armed. 0 or -errno. */
int emu_fault_init(struct nvq_emu *c, const struct nvq_emu_params *p);
/* Destruction, after the device thread is gone (any state). */
void emu_fault_fini(struct nvq_emu *c);

/*
 * Device thread, from emu_exec() while c->fault_armed: match @sqe against
 * the armed faults and, if any fires, execute and complete it the faulty
 * way. Returns false when none fired (the caller executes normally).
 */
bool emu_fault_exec(struct nvq_emu *c, struct emu_sq *sq,
		    const struct nvq_sqe *sqe);

/* Device thread, when c->fault_kick was set: fire the "now" faults. */
void emu_fault_now(struct nvq_emu *c);

/* Device thread, at CC.EN 0 -> 1 while armed: true if RDY must not come. */
bool emu_fault_no_ready(struct nvq_emu *c);

/* Device thread, while c->nr_delayed: post the held completions that are
 * due; returns how many were posted. */
unsigned int emu_fault_flush(struct nvq_emu *c);
/* Earliest due time of a held completion (UINT64_MAX if none). */
uint64_t emu_fault_deadline(struct nvq_emu *c);
/* Device thread: @sq is being deleted (NULL: every queue, reset): its held
 * completions are dropped, as a device's lost commands are. */
void emu_fault_sq_gone(struct nvq_emu *c, struct emu_sq *sq);

/* ---- device.c, params.c, queue.c: for fault.c ---- */

struct emu_req;

/* Execute @req's command (no completion); returns its NVMe status. */
uint16_t emu_exec_cmd(struct nvq_emu *c, struct emu_req *req);

/* params.c's duration syntax (80us, 2s; at most an hour), and its
 * message naming @key. */
int emu_param_duration(const char *key, const char *s, uint64_t *out);
/* fault.c, for params.c: parse the fault= value @v and append it to @p. */
int emu_fault_param(struct nvq_emu_params *p, const char *v);

/*
 * Post @e on @cq only if it fits the ring now and nothing is held: extra
 * and late entries never take the holding ring's room, which is sized by
 * one entry per command. false if it did not fit.
 */
bool emu_cq_try_post(struct nvq_emu *c, struct emu_cq *cq,
		     const struct nvq_cqe *e);
/* Post @e as a command's own completion (held if the CQ is full). */
void emu_cq_post(struct nvq_emu *c, struct emu_cq *cq, const struct nvq_cqe *e);

#endif /* NVQ_EMU_FAULT_H */
