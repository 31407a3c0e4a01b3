// SPDX-License-Identifier: MIT
/*
 * Wait-for graph and deadlock cycles (see waitgraph.h for the edges).
 *
 * The graph is the AND model: a thread blocked in a lock waits until every
 * holder releases it (an exclusive lock has one; read locks may have
 * several), a process wait until every thread of the process is gone.
 * In that model any cycle is a deadlock, and a strongly connected
 * component with a cycle is a knot of threads none of which can move;
 * we report one shortest cycle per such component, through its first
 * thread in snapshot order, so the output is deterministic.
 *
 * The snapshot may describe hundreds of thousands of threads (a 256 MiB
 * arena) and may be forged, so nothing here recurses: Tarjan's algorithm
 * runs on explicit stacks, the cycle search is a breadth-first search,
 * and the number of edges is capped (per waiter and in total); hitting a
 * cap is reported as truncated rather than silently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "waitgraph.h"

/* Holders, joined threads or waited-for threads one waiter may point at. */
#define WG_MAX_OUT	1024U
#define WG_MAX_EDGES	(4U << 20)
#define WG_UNDEF	UINT32_MAX

struct holder {
	uint64_t lock;
	uint32_t node;
	/* May explain a wait in another process: a lock-held activity
	 * (which does not say) or a held-set entry marked shared. */
	bool shared;
};

struct tid_entry {
	uint32_t tid;
	uint32_t node;
};

struct builder {
	struct waitgraph *g;
	const struct actrack_snapshot *s;
	uint32_t *proc_first;		/* first node of each process */
	struct holder *holders;
	uint32_t nr_holders;
	struct tid_entry *tids;
	uint32_t cap_edges;
};

bool wg_is_wait(uint8_t type)
{
	switch (type) {
	case ACTRACK_ACT_LOCK_ACQUIRE:
	case ACTRACK_ACT_EVENT_WAIT:
	case ACTRACK_ACT_THREAD_JOIN:
	case ACTRACK_ACT_PROCESS_WAIT:
	case ACTRACK_ACT_IO_WAIT:
		return true;
	}
	return false;
}

static int holder_cmp(const void *x, const void *y)
{
	const struct holder *a = x, *b = y;

	if (a->lock != b->lock)
		return a->lock < b->lock ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return 0;
}

static int tid_cmp(const void *x, const void *y)
{
	const struct tid_entry *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return 0;
}

static int add_edge(struct builder *b, uint32_t from, uint32_t to,
		    bool cross_process)
{
	struct waitgraph *g = b->g;

	if (g->nr_edges >= WG_MAX_EDGES) {
		g->truncated = true;
		return 0;
	}
	if (g->nr_edges == b->cap_edges) {
		uint32_t cap = b->cap_edges ? b->cap_edges * 2 : 64;
		struct wg_edge *e = realloc(g->edges, (size_t)cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		g->edges = e;
		b->cap_edges = cap;
	}
	g->edges[g->nr_edges++] = (struct wg_edge){
		.from = from, .to = to, .cross_process = cross_process,
	};
	return 0;
}

/* Index of the first holder entry of @lock (or nr_holders). */
static uint32_t holders_lower(const struct builder *b, uint64_t lock)
{
	uint32_t lo = 0, hi = b->nr_holders;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->holders[mid].lock < lock)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int lock_edges(struct builder *b, uint32_t from, uint64_t lock)
{
	const struct wg_thread *t = b->g->threads;
	uint32_t lo = holders_lower(b, lock), hi = lo, out = 0;
	bool local = false;
	int ret;

	while (hi < b->nr_holders && b->holders[hi].lock == lock) {
		if (t[b->holders[hi].node].proc == t[from].proc)
			local = true;
		hi++;
	}
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t to = b->holders[i].node;
		bool same = t[to].proc == t[from].proc;

		/* A holder in our own process explains the wait; one in
		 * another process is only a guess (pshared lock at the
		 * same address), so it is used only when there is none. */
		if (same != local || (!same && !b->holders[i].shared))
			continue;
		if (out++ == WG_MAX_OUT) {
			b->g->truncated = true;
			break;
		}
		ret = add_edge(b, from, to, !same);
		if (ret)
			return ret;
	}
	return 0;
}

static int join_edges(struct builder *b, uint32_t from, uint64_t tid)
{
	const struct wg_thread *t = b->g->threads;
	uint32_t lo = 0, hi = b->g->nr_threads, end, out = 0;
	bool local = false;
	int ret;

	if (tid == 0 || tid > UINT32_MAX)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->tids[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < b->g->nr_threads && b->tids[end].tid == tid;
	     end++)
		if (t[b->tids[end].node].proc == t[from].proc)
			local = true;
	/* Several records with one tid: stale ones of exited processes;
	 * the joiner's own process is the one that matters. */
	for (uint32_t i = lo; i < end; i++) {
		uint32_t to = b->tids[i].node;

		if (local && t[to].proc != t[from].proc)
			continue;
		if (out++ == WG_MAX_OUT) {
			b->g->truncated = true;
			break;
		}
		ret = add_edge(b, from, to, false);
		if (ret)
			return ret;
	}
	return 0;
}

static int process_threads(struct builder *b, uint32_t from, uint32_t k,
			   uint32_t *out)
{
	for (uint32_t i = 0; i < b->s->processes[k].nr_threads; i++) {
		int ret;

		if ((*out)++ == WG_MAX_OUT) {
			b->g->truncated = true;
			return 0;
		}
		ret = add_edge(b, from, b->proc_first[k] + i, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* waitpid(-1): the tracked children of the waiter's process, by their
 * record's parent_pid (a child started after its parent: an older
 * process of a reused pid is not one). */
static int children_edges(struct builder *b, uint32_t from)
{
	const struct actrack_snap_process *w = b->g->threads[from].proc;
	const struct actrack_snapshot *s = b->s;
	uint32_t out = 0;
	int ret;

	for (uint32_t k = 0; k < s->nr_processes; k++) {
		const struct actrack_snap_process *c = &s->processes[k];

		if (!c->has_record || c->parent_pid != w->pid || c == w ||
		    c->start_ticks < w->start_ticks ||
		    (c->pid_ns && w->pid_ns && c->pid_ns != w->pid_ns))
			continue;
		ret = process_threads(b, from, k, &out);
		if (ret || b->g->truncated)
			return ret;
	}
	return 0;
}

static int process_edges(struct builder *b, uint32_t from, uint64_t pid)
{
	const struct actrack_snapshot *s = b->s;
	uint32_t lo = 0, hi = s->nr_processes, out = 0;
	int ret;

	if (pid == 0)
		return children_edges(b, from);
	if (pid > UINT32_MAX)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->processes[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Every generation of the pid in the arena: a parent waits for its
	 * child, and a stale record of an older one has no waiting threads
	 * that could close a cycle anyway. */
	for (uint32_t k = lo; k < s->nr_processes && s->processes[k].pid == pid;
	     k++) {
		ret = process_threads(b, from, k, &out);
		if (ret || b->g->truncated)
			return ret;
	}
	return 0;
}

static int build_nodes(struct builder *b, wg_filter_fn filter, void *arg)
{
	const struct actrack_snapshot *s = b->s;
	struct waitgraph *g = b->g;
	uint64_t total = 0, nr_held = 0;
	uint32_t n = 0;

	for (uint32_t k = 0; k < s->nr_processes; k++) {
		const struct actrack_snap_process *p = &s->processes[k];

		total += p->nr_threads;
		for (uint32_t i = 0; p->threads && i < p->nr_threads; i++) {
			nr_held += p->threads[i].nr_held < ACTRACK_HELD_SLOTS ?
				   p->threads[i].nr_held : ACTRACK_HELD_SLOTS;
			for (uint32_t a = 0; a < p->threads[i].nr_activities;
			     a++)
				nr_held += p->threads[i].activities[a].a.type ==
					   ACTRACK_ACT_LOCK_HELD;
		}
	}
	if (total >= UINT32_MAX / 2 || nr_held >= UINT32_MAX / 2)
		return -ENOMEM;
	g->threads = calloc(total + 1, sizeof(*g->threads));
	g->first_edge = calloc(total + 1, sizeof(*g->first_edge));
	b->proc_first = calloc(s->nr_processes + 1, sizeof(*b->proc_first));
	b->tids = calloc(total + 1, sizeof(*b->tids));
	b->holders = calloc(nr_held + 1, sizeof(*b->holders));
	if (!g->threads || !g->first_edge || !b->proc_first || !b->tids ||
	    !b->holders)
		return -ENOMEM;

	for (uint32_t k = 0; k < s->nr_processes; k++) {
		const struct actrack_snap_process *p = &s->processes[k];

		b->proc_first[k] = n;
		for (uint32_t i = 0; p->threads && i < p->nr_threads; i++) {
			const struct actrack_snap_thread *t = &p->threads[i];
			struct wg_thread *w = &g->threads[n];

			w->proc = p;
			w->thread = t;
			b->tids[n] = (struct tid_entry){ t->tid, n };
			for (uint32_t a = 0; a < t->nr_activities; a++)
				if (t->activities[a].a.type ==
				    ACTRACK_ACT_LOCK_HELD)
					b->holders[b->nr_holders++] =
						(struct holder){
						t->activities[a].a.object, n,
						true };
			/* The held set (ABI 1.2): what the thread holds
			 * whatever its stack says, e.g. in a program that
			 * never pushes (actrack run). */
			for (uint32_t h = 0; h < t->nr_held &&
			     h < ACTRACK_HELD_SLOTS; h++)
				b->holders[b->nr_holders++] = (struct holder){
					t->held[h] & ~ACTRACK_HELD_SHARED, n,
					(t->held[h] & ACTRACK_HELD_SHARED) != 0 };
			/* Deeper than stored: the innermost is unknown,
			 * whatever the innermost stored one says. */
			if (!t->torn && t->nr_activities &&
			    t->depth == t->nr_activities) {
				const struct actrack_snap_activity *a =
					&t->activities[t->nr_activities - 1];
				enum wg_use use = filter ?
					filter(p, t, n, arg) :
					wg_is_wait(a->a.type) ? WG_EDGES :
					WG_SKIP;

				if (use != WG_SKIP)
					w->wait = a;
				w->edges = use == WG_EDGES;
			}
			n++;
		}
	}
	g->nr_threads = n;
	qsort(b->tids, n, sizeof(*b->tids), tid_cmp);
	qsort(b->holders, b->nr_holders, sizeof(*b->holders), holder_cmp);
	/* One entry per (lock, thread): a recursive lock held twice is
	 * one holder. */
	if (b->nr_holders) {
		uint32_t u = 1;

		for (uint32_t i = 1; i < b->nr_holders; i++)
			if (holder_cmp(&b->holders[u - 1], &b->holders[i]))
				b->holders[u++] = b->holders[i];
			else
				b->holders[u - 1].shared |=
					b->holders[i].shared;
		b->nr_holders = u;
	}
	return 0;
}

static int build_edges(struct builder *b)
{
	struct waitgraph *g = b->g;
	int ret = 0;

	for (uint32_t i = 0; i < g->nr_threads && !ret; i++) {
		const struct actrack_snap_activity *w = g->threads[i].wait;

		g->first_edge[i] = g->nr_edges;
		if (!w || !g->threads[i].edges)
			continue;
		switch (w->a.type) {
		case ACTRACK_ACT_LOCK_ACQUIRE:
			ret = lock_edges(b, i, w->a.object);
			break;
		case ACTRACK_ACT_THREAD_JOIN:
			ret = join_edges(b, i, w->a.object);
			break;
		case ACTRACK_ACT_PROCESS_WAIT:
			ret = process_edges(b, i, w->a.object);
			break;
		}
	}
	g->first_edge[g->nr_threads] = g->nr_edges;
	return ret;
}

/* Tarjan's strongly connected components, iteratively.  @comp gets each
 * node's component number, @size each component's node count. */
static int tarjan(const struct waitgraph *g, uint32_t *comp, uint32_t *size)
{
	uint32_t n = g->nr_threads, counter = 0, sp = 0, csp = 0, nr_comp = 0;
	uint32_t *index, *low, *stack, *cs_node, *cs_edge;
	bool *on_stack;
	int ret = -ENOMEM;

	index = malloc((size_t)(n + 1) * sizeof(*index));
	low = malloc((size_t)(n + 1) * sizeof(*low));
	stack = malloc((size_t)(n + 1) * sizeof(*stack));
	cs_node = malloc((size_t)(n + 1) * sizeof(*cs_node));
	cs_edge = malloc((size_t)(n + 1) * sizeof(*cs_edge));
	on_stack = calloc(n + 1, sizeof(*on_stack));
	if (!index || !low || !stack || !cs_node || !cs_edge || !on_stack)
		goto out;
	for (uint32_t v = 0; v < n; v++)
		index[v] = WG_UNDEF;

	for (uint32_t root = 0; root < n; root++) {
		if (index[root] != WG_UNDEF)
			continue;
		index[root] = low[root] = counter++;
		stack[sp++] = root;
		on_stack[root] = true;
		cs_node[csp] = root;
		cs_edge[csp++] = g->first_edge[root];
		while (csp) {
			uint32_t v = cs_node[csp - 1];

			if (cs_edge[csp - 1] < g->first_edge[v + 1]) {
				uint32_t w = g->edges[cs_edge[csp - 1]++].to;

				if (index[w] == WG_UNDEF) {
					index[w] = low[w] = counter++;
					stack[sp++] = w;
					on_stack[w] = true;
					cs_node[csp] = w;
					cs_edge[csp++] = g->first_edge[w];
				} else if (on_stack[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			csp--;
			if (low[v] == index[v]) {
				uint32_t w;

				size[nr_comp] = 0;
				do {
					w = stack[--sp];
					on_stack[w] = false;
					comp[w] = nr_comp;
					size[nr_comp]++;
				} while (w != v);
				nr_comp++;
			}
			if (csp && low[v] < low[cs_node[csp - 1]])
				low[cs_node[csp - 1]] = low[v];
		}
	}
	ret = 0;
out:
	free(index);
	free(low);
	free(stack);
	free(cs_node);
	free(cs_edge);
	free(on_stack);
	return ret;
}

/*
 * Shortest cycle through @r inside its component (breadth-first).
 * Return: 0 and @c filled, 1 if there is none (a single thread without a
 * self-edge), -ENOMEM.
 */
static int shortest_cycle(const struct waitgraph *g, const uint32_t *comp,
			  uint32_t r, uint32_t *queue, uint32_t *parent,
			  uint32_t *seen, uint32_t stamp, struct wg_cycle *c)
{
	uint32_t head = 0, tail = 0, close = WG_UNDEF, n = 0, v;

	queue[tail++] = r;
	seen[r] = stamp;
	while (head < tail && close == WG_UNDEF) {
		uint32_t u = queue[head++];

		for (uint32_t e = g->first_edge[u]; e < g->first_edge[u + 1];
		     e++) {
			uint32_t w = g->edges[e].to;

			if (comp[w] != comp[r])
				continue;
			if (w == r) {
				close = e;
				break;
			}
			if (seen[w] != stamp) {
				seen[w] = stamp;
				parent[w] = e;
				queue[tail++] = w;
			}
		}
	}
	if (close == WG_UNDEF)
		return 1;
	for (v = g->edges[close].from; v != r; v = g->edges[parent[v]].from)
		n++;
	c->nr = n + 1;
	c->edges = malloc((size_t)c->nr * sizeof(*c->edges));
	if (!c->edges)
		return -ENOMEM;
	/* Walk back from the closing edge, filling from the end. */
	c->edges[n] = close;
	for (v = g->edges[close].from; v != r; v = g->edges[parent[v]].from)
		c->edges[--n] = parent[v];
	c->cross_process = false;
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct wg_edge *e = &g->edges[c->edges[i]];

		if (g->threads[e->from].proc != g->threads[e->to].proc)
			c->cross_process = true;
	}
	return 0;
}

static int find_cycles(struct waitgraph *g)
{
	uint32_t n = g->nr_threads;
	uint32_t *comp, *size, *queue, *parent, *seen;
	bool *done;
	int ret = -ENOMEM;

	comp = malloc((size_t)(n + 1) * sizeof(*comp));
	size = malloc((size_t)(n + 1) * sizeof(*size));
	queue = malloc((size_t)(n + 1) * sizeof(*queue));
	parent = malloc((size_t)(n + 1) * sizeof(*parent));
	seen = calloc(n + 1, sizeof(*seen));
	done = calloc(n + 1, sizeof(*done));
	if (!comp || !size || !queue || !parent || !seen || !done)
		goto out;
	ret = tarjan(g, comp, size);
	if (ret)
		goto out;
	for (uint32_t v = 0; v < n; v++) {
		g->threads[v].in_cycle = size[comp[v]] > 1;
		for (uint32_t e = g->first_edge[v]; e < g->first_edge[v + 1];
		     e++)
			if (g->edges[e].to == v)
				g->threads[v].in_cycle = true;
	}
	for (uint32_t v = 0; v < n; v++) {
		struct wg_cycle c;
		int r;

		/* The first node of each component in snapshot order. */
		if (done[comp[v]] || !g->threads[v].wait)
			continue;
		done[comp[v]] = true;
		r = shortest_cycle(g, comp, v, queue, parent, seen, v + 1, &c);
		if (r < 0) {
			ret = r;
			goto out;
		}
		if (r)
			continue;
		c.component = size[comp[v]];
		if (!(g->nr_cycles & (g->nr_cycles + 1))) {
			/* grow at 0, 1, 3, 7, ...: capacity 2^k */
			struct wg_cycle *p = realloc(g->cycles,
				(size_t)(g->nr_cycles + 1) * 2 * sizeof(*p));

			if (!p) {
				free(c.edges);
				ret = -ENOMEM;
				goto out;
			}
			g->cycles = p;
		}
		g->cycles[g->nr_cycles++] = c;
	}
	ret = 0;
out:
	free(comp);
	free(size);
	free(queue);
	free(parent);
	free(seen);
	free(done);
	return ret;
}

void wg_free(struct waitgraph *g)
{
	for (uint32_t i = 0; g->cycles && i < g->nr_cycles; i++)
		free(g->cycles[i].edges);
	free(g->cycles);
	free(g->edges);
	free(g->first_edge);
	free(g->threads);
	memset(g, 0, sizeof(*g));
}

int wg_build(struct waitgraph *g, const struct actrack_snapshot *s,
	     wg_filter_fn filter, void *arg)
{
	struct builder b = { .g = g, .s = s };
	int ret;

	memset(g, 0, sizeof(*g));
	ret = build_nodes(&b, filter, arg);
	if (!ret)
		ret = build_edges(&b);
	if (!ret)
		ret = find_cycles(g);
	free(b.proc_first);
	free(b.tids);
	free(b.holders);
	if (ret)
		wg_free(g);
	return ret;
}
