/* SPDX-License-Identifier: MIT */
/*
 * The wait-for graph of a snapshot: which thread waits for which, and the
 * cycles (deadlocks) in it, within and across processes.
 */
#ifndef ACTRACK_CLI_WAITGRAPH_H
#define ACTRACK_CLI_WAITGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include "actrack.h"

struct wg_thread {
	const struct actrack_snap_process *proc;
	const struct actrack_snap_thread *thread;
	/* Its innermost activity when that is stored (depth == stored) and
	 * the filter accepted it (without a filter: when it is a wait,
	 * wg_is_wait()); else NULL. */
	const struct actrack_snap_activity *wait;
	/* The filter said WG_EDGES (its wait has out-edges, if any). */
	bool edges;
	/* In a strongly connected component with a cycle: a knot of
	 * threads none of which can move (a deadlock), whether or not the
	 * shortest cycle reported for it goes through this thread. */
	bool in_cycle;
};

struct wg_edge {
	uint32_t from, to;		/* indexes into threads[] */
	/* A lock edge between two processes: it is only real if the lock
	 * is process-shared and mapped at the same address in both. */
	bool cross_process;
};

struct wg_cycle {
	uint32_t nr;			/* threads (= edges) in the cycle */
	uint32_t *edges;		/* edges[i].to == edges[i+1].from, the
					 * last one's .to == the first .from */
	uint32_t component;		/* threads in its strongly connected
					 * component (>= nr) */
	bool cross_process;		/* spans more than one process */
};

struct waitgraph {
	uint32_t nr_threads;
	struct wg_thread *threads;	/* snapshot order: by pid, tid */
	uint32_t nr_edges;
	struct wg_edge *edges;		/* grouped by .from */
	uint32_t *first_edge;		/* [nr_threads + 1]: edges of thread i
					 * are first_edge[i]..first_edge[i+1] */
	bool truncated;			/* edge limits were hit */
	uint32_t nr_cycles;
	struct wg_cycle *cycles;
};

/* What the filter makes of a thread's innermost stored activity. */
enum wg_use {
	WG_SKIP,	/* not a wait that counts: wait stays NULL */
	WG_LIST,	/* wait is set, but it has no out-edges */
	WG_EDGES,	/* wait is set, with its out-edges (if a wait) */
};

/* Decides about thread @t of @p, node @node of the graph (hangs: waits
 * old enough that did not move, whose owner can be known). */
typedef enum wg_use (*wg_filter_fn)(const struct actrack_snap_process *p,
				    const struct actrack_snap_thread *t,
				    uint32_t node, void *arg);

/* Is @type one of the waits the graph knows (or hangs reports)? */
bool wg_is_wait(uint8_t type);

/*
 * wg_build() - the graph of @s; @filter (NULL: every wait, with edges) is
 * asked about every untorn thread whose innermost activity is stored, and
 * only threads it gives WG_EDGES get outgoing edges.  Edges:
 *  - lock-acquire of L -> every thread holding L (a lock-held activity of
 *    L anywhere on its stack, or L in its held set): those of the
 *    waiter's own process if there are any (an exclusive lock has one
 *    holder, and a private lock can only be held inside its process),
 *    else those of other processes, marked cross_process (assuming a
 *    process-shared lock at the same address; a held-set entry counts
 *    there only if it is marked ACTRACK_HELD_SHARED);
 *  - thread-join of T -> thread T (of the waiter's process if it has one,
 *    else any process: tids are unique system-wide among live threads);
 *  - process-wait of P -> every thread of process P; of pid 0 (any
 *    child: waitpid(-1), wait()) -> every thread of every process whose
 *    parent_pid is the waiter's pid and which started after it;
 *  - event-wait and io-wait: no edge (no owner is recorded).
 * Then finds one cycle per strongly connected component that has one
 * (Tarjan's algorithm with explicit stacks: no recursion), and marks
 * every thread of such a component in_cycle.
 * Return: 0 or -ENOMEM (the graph is then empty, freeable).
 */
int wg_build(struct waitgraph *g, const struct actrack_snapshot *s,
	     wg_filter_fn filter, void *arg);
void wg_free(struct waitgraph *g);

/* Edges out of thread @i. */
static inline uint32_t wg_out_begin(const struct waitgraph *g, uint32_t i)
{
	return g->first_edge[i];
}

static inline uint32_t wg_out_end(const struct waitgraph *g, uint32_t i)
{
	return g->first_edge[i + 1];
}

#endif /* ACTRACK_CLI_WAITGRAPH_H */
