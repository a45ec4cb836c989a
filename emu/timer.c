// SPDX-License-Identifier: MIT
/*
 * Commands waiting out their media latency, in a binary min-heap by due
 * time. The device thread compares the top against the clock each pass,
 * so completions are timed by spinning, not by a sleep per command; any
 * latency distribution works since nothing assumes FIFO order.
 */
#include <errno.h>
#include <stdlib.h>

#include "emu_internal.h"

int emu_heap_reserve(struct nvq_emu *c, uint32_t want)
{
	struct emu_cmd **h;

	if (want <= c->heap_cap)
		return 0;
	h = realloc(c->heap, (size_t)want * sizeof(*h));
	if (!h)
		return -ENOMEM;
	c->heap = h;
	c->heap_cap = want;
	return 0;
}

static void set(struct nvq_emu *c, uint32_t i, struct emu_cmd *cmd)
{
	c->heap[i] = cmd;
	cmd->heap_idx = i;
}

static void sift_up(struct nvq_emu *c, uint32_t i)
{
	struct emu_cmd *cmd = c->heap[i];

	while (i) {
		uint32_t parent = (i - 1) / 2;

		if (c->heap[parent]->due <= cmd->due)
			break;
		set(c, i, c->heap[parent]);
		i = parent;
	}
	set(c, i, cmd);
}

static void sift_down(struct nvq_emu *c, uint32_t i)
{
	struct emu_cmd *cmd = c->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		uint64_t best = cmd->due;

		if (l < c->heap_n && c->heap[l]->due < best) {
			m = l;
			best = c->heap[l]->due;
		}
		if (l + 1 < c->heap_n && c->heap[l + 1]->due < best)
			m = l + 1;
		if (m == i)
			break;
		set(c, i, c->heap[m]);
		i = m;
	}
	set(c, i, cmd);
}

/* The caller reserved room (emu_heap_reserve at SQ creation). */
void emu_heap_push(struct nvq_emu *c, struct emu_cmd *cmd)
{
	set(c, c->heap_n++, cmd);
	sift_up(c, c->heap_n - 1);
}

void emu_heap_remove(struct nvq_emu *c, struct emu_cmd *cmd)
{
	uint32_t i = cmd->heap_idx;
	struct emu_cmd *last = c->heap[--c->heap_n];

	if (i == c->heap_n)
		return;
	set(c, i, last);
	sift_up(c, i);
	sift_down(c, last->heap_idx);
}

struct emu_cmd *emu_heap_pop_due(struct nvq_emu *c, uint64_t now)
{
	struct emu_cmd *top;

	if (!c->heap_n || c->heap[0]->due > now)
		return NULL;
	top = c->heap[0];
	emu_heap_remove(c, top);
	return top;
}
