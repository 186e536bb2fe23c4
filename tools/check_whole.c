/* spectap check --whole --map M --spec S trace.spt: a trace checked as one behaviour. The
 * mapping's windows, in the order they end, give the behaviour's states (the first window's
 * pre-state, then each window's post-state) with the variables the mapping gives; the spec's
 * other variables are hidden and searched (check_model's --states). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_model.h"
#include "mapping.h"

struct collect {
	struct spt_arena *a;
	spt_val **states;
	size_t n, cap;
	uint64_t windows;
};

static int keep_state(struct collect *c, spt_val *v)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		spt_val **ns = realloc(c->states, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->states = ns;
		c->cap = cap;
	}
	/* The window's values live in the mapping's arenas until its next event. */
	if (!(c->states[c->n] = spt_value_clone(c->a, v)))
		return -ENOMEM;
	c->n++;
	return 0;
}

static int on_window(void *arg, const struct map_window *w)
{
	struct collect *c = arg;
	c->windows++;
	if (!c->n && keep_state(c, w->pre))
		return -ENOMEM;
	return keep_state(c, w->post);
}

int check_whole_map(struct cli *c, const struct check_model_opts *o, const char *map, const char *trace)
{
	struct mapping *m = NULL;
	struct spt_reader *r = NULL;
	struct check_error err;
	struct spt_arena a;
	spt_arena_init(&a);
	struct collect col = { &a, NULL, 0, 0, 0 };
	int rc;
	if (mapping_new(map, o->spec, o->cfg, &m, &err)) {
		rc = cli_fail(c, "%s", err.msg);
		goto out;
	}
	if ((rc = cli_open_trace(c, trace, &r)))
		goto out;
	int mr = mapping_run(m, r, on_window, &col, &err);
	if (mr) {
		rc = mr == -ENOMEM ? cli_fail(c, "out of memory keeping the states of %s's windows (%zu so far)", trace, col.n)
				   : cli_fail(c, "%s", err.msg);
		goto out;
	}
	cli_warn_damage(c, trace, r);
	if (spt_reader_info(r)->damaged && !c->allow_damage) {
		rc = cli_fail(c, "%s is damaged: a behaviour with the lost events' steps missing cannot be checked "
			      "whole (--allow-damage checks the windows read as if they were the whole trace)", trace);
		goto out;
	}
	if (!col.n) {
		rc = cli_fail(c, "%s: the mapping %s makes no window of it: nothing to check", trace, map);
		goto out;
	}
	spt_val *states = spt_seq(&a, col.states, col.n);
	if (!states) {
		rc = cli_fail(c, "out of memory");
		goto out;
	}
	struct check_model_opts wo = *o;
	wo.states = trace;
	wo.states_val = states;
	rc = check_model(c, &wo);
out:
	if (r)
		spt_reader_close(r);
	if (m)
		mapping_free(m);
	free(col.states);
	spt_arena_fini(&a);
	return rc;
}
