/*
 * CommunityModules' UndirectedGraphs, natively: a graph is a record [node |-> N, edge |-> E]
 * whose edges are sets {a, b} of nodes ({a} a loop). Connectivity is computed by a search over
 * the edges instead of the module's definitions through Seq(S) and SUBSET, which TLC also
 * replaces by Java (its overrides of SimplePath, AreConnectedIn, ConnectedComponents).
 */
#include <stdlib.h>
#include <string.h>

#include "builtins_internal.h"

/* G.node and G.edge when G is a record of exactly those two fields, both sets. */
static bool graph_parts(spt_val *g, spt_val **nodes, spt_val **edges)
{
	if (g->kind != SPT_REC || g->n != 2)
		return false;
	*nodes = spt_rec_get(g, "node");
	*edges = spt_rec_get(g, "edge");
	return *nodes && *edges && (*nodes)->kind == SPT_SET && (*edges)->kind == SPT_SET;
}

static int graph(struct ev *ev, const struct ast *at, const char *op, spt_val *g, spt_val **nodes, spt_val **edges)
{
	if (!graph_parts(g, nodes, edges))
		return bi_type_err(ev, at, op, 0, "a graph [node |-> N, edge |-> E] (N, E sets)", g);
	return 0;
}

/* Every edge a set of one or two nodes (exactly two distinct ones when loop_free). */
static bool well_formed(spt_val *g, bool loop_free)
{
	spt_val *nodes, *edges;
	if (!graph_parts(g, &nodes, &edges))
		return false;
	for (uint32_t i = 0; i < edges->n; i++) {
		spt_val *e = edges->u.elems[i];
		if (e->kind != SPT_SET || e->n < (loop_free ? 2u : 1u) || e->n > 2)
			return false;
		for (uint32_t j = 0; j < e->n; j++)
			if (spt_set_find(nodes, e->u.elems[j]) < 0)
				return false;
	}
	return true;
}

BI(bi_is_undirected_graph)
{
	(void)n;
	return bi_ret_bool(ev, at, "IsUndirectedGraph", well_formed(args[0], false), out);
}

BI(bi_is_loop_free_undirected_graph)
{
	(void)n;
	return bi_ret_bool(ev, at, "IsLoopFreeUndirectedGraph", well_formed(args[0], true), out);
}

/* The component of each node (by its index in nodes): a union-find over the edges whose
 * elements are all nodes. comp[i] is the representative's index. */
static uint32_t find(uint32_t *parent, uint32_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

static uint32_t *components(spt_val *nodes, spt_val *edges)
{
	uint32_t *parent = malloc(((size_t)nodes->n + 1) * sizeof(*parent));
	if (!parent)
		return NULL;
	for (uint32_t i = 0; i < nodes->n; i++)
		parent[i] = i;
	for (uint32_t i = 0; i < edges->n; i++) {
		spt_val *e = edges->u.elems[i];
		if (e->kind != SPT_SET || e->n != 2)
			continue; /* a loop joins nothing; anything else is no edge of this graph */
		long a = spt_set_find(nodes, e->u.elems[0]), b = spt_set_find(nodes, e->u.elems[1]);
		if (a < 0 || b < 0)
			continue;
		uint32_t ra = find(parent, (uint32_t)a), rb = find(parent, (uint32_t)b);
		if (ra != rb)
			parent[ra] = rb;
	}
	for (uint32_t i = 0; i < nodes->n; i++)
		parent[i] = find(parent, i);
	return parent;
}

BI(bi_are_connected_in)
{
	(void)n;
	spt_val *nodes, *edges;
	if (graph(ev, at, "AreConnectedIn", args[2], &nodes, &edges))
		return EVAL_ERR;
	long a = spt_set_find(nodes, args[0]), b = spt_set_find(nodes, args[1]);
	if (a < 0 || b < 0)
		return bi_ret_bool(ev, at, "AreConnectedIn", false, out);
	uint32_t *comp = components(nodes, edges);
	if (!comp)
		return bi_ret(ev, at, "AreConnectedIn", NULL, out);
	bool same = comp[a] == comp[b];
	free(comp);
	return bi_ret_bool(ev, at, "AreConnectedIn", same, out);
}

BI(bi_connected_components)
{
	(void)n;
	spt_val *nodes, *edges;
	if (graph(ev, at, "ConnectedComponents", args[0], &nodes, &edges))
		return EVAL_ERR;
	uint32_t *comp = components(nodes, edges);
	spt_val **parts = calloc((size_t)nodes->n + 1, sizeof(*parts)), **members = malloc(((size_t)nodes->n + 1) * sizeof(*members));
	spt_val *r = NULL;
	if (comp && parts && members) {
		uint32_t k = 0;
		for (uint32_t root = 0; root < nodes->n; root++) {
			uint32_t m = 0;
			for (uint32_t i = 0; i < nodes->n; i++)
				if (comp[i] == root)
					members[m++] = nodes->u.elems[i];
			if (m && !(parts[k++] = spt_set(ev_arena(ev), members, m)))
				break;
		}
		r = spt_set(ev_arena(ev), parts, k);
	}
	free(comp);
	free(parts);
	free(members);
	return bi_ret(ev, at, "ConnectedComponents", r, out);
}

BI(bi_is_strongly_connected)
{
	(void)n;
	spt_val *nodes, *edges;
	if (graph(ev, at, "IsStronglyConnected", args[0], &nodes, &edges))
		return EVAL_ERR;
	if (!nodes->n)
		return bi_ret_bool(ev, at, "IsStronglyConnected", false, out); /* no component is {} */
	uint32_t *comp = components(nodes, edges);
	if (!comp)
		return bi_ret(ev, at, "IsStronglyConnected", NULL, out);
	bool one = true;
	for (uint32_t i = 1; i < nodes->n && one; i++)
		one = comp[i] == comp[0];
	free(comp);
	return bi_ret_bool(ev, at, "IsStronglyConnected", one, out);
}
