/* Transition Validation of windows against a spec's action. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "enumerate.h"
#include "resolve.h"
#include "tlc_order.h"

/* How Next calls an action: the sets its parameters range over. */
struct action_info {
	const char *name;
	struct opdef *def;
	struct module *mod;
	const struct ast **param_sets; /* one per parameter */
	uint32_t *param_slots;         /* the cells Next binds the arguments to (a set may use outer ones) */
	const struct opdef **param_owner; /* whose frame those cells are in */
	uint32_t *order;               /* parameters from the outermost quantifier in */
	char *no_sets;                 /* why the parameters' sets are unknown (a mapping may bind them) */
};

struct checker {
	struct spec *spec;
	struct cfg cfg;
	struct spt_arena long_arena;   /* constants, Init states */
	struct spt_arena window_arena; /* one window's values */
	struct spt_arena best_arena[2]; /* the closest successor so far, and the one before */
	struct interp in;
	spt_val ***init_states;        /* each an array of n_vars values */
	uint32_t n_init;
	bool init_done;
	struct action_info *actions;
	uint32_t n_actions;
	uint32_t last_action;          /* the one checked last (windows come by the thousand) */
	uint64_t *var_hash;            /* each variable's name as a string value's hash */
	uint32_t *var_len;             /* and its length */
	uint32_t *var_order;           /* the variables in canonical order (a state's keys' order) */
	char warnings[2048];           /* what loading found odd but not wrong (checker_warnings) */
	char window_error[sizeof(((struct check_error *)0)->msg)]; /* res->error: kept here, not in
							* the window arena, which may be what ran out */
};

static void spec_err(struct check_error *err, const struct spec_error *e)
{
	if (e->pos.line)
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s%s%s%s", e->pos.file, e->pos.line, e->pos.col, e->msg,
			 e->excerpt[0] ? " (at \"" : "", e->excerpt, e->excerpt[0] ? "\")" : "");
	else
		snprintf(err->msg, sizeof(err->msg), "%s: %s", e->pos.file ? e->pos.file : "spec", e->msg);
}

uint64_t checker_window_steps = CHECKER_WINDOW_STEPS;

static int eval_err(struct checker *ck, struct check_error *err, const char *what)
{
	const struct eval_error *e = &ck->in.ev.err;
	if (e->pos.file)
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s: %s", e->pos.file, e->pos.line, e->pos.col, what, e->msg);
	else
		snprintf(err->msg, sizeof(err->msg), "%s: %s", what, e->msg);
	return -EINVAL;
}

/* A name the cfg may replace although the root module does not define it: a standard module's
 * operator or set (Nat <- MyNat). */
static bool standard_name(struct checker *ck, const char *name)
{
	static const char *const sets[] = { "Nat", "Int", "Real", "STRING", "BOOLEAN", NULL };
	for (const char *const *p = sets; *p; p++)
		if (!strcmp(*p, name))
			return true;
	struct module *root = spec_root(ck->spec);
	for (uint32_t i = 0; i < root->n_std; i++)
		if (builtin_lookup_any(root->std[i], name))
			return true;
	return false;
}

/* Values first (N = 3), operators next, then constants given by definitions (N <- Def), whose
 * values may need the others: as TLC, they are evaluated once every value is known (a
 * definition using another such constant waits for it). */
static int set_constants(struct checker *ck, struct check_error *err)
{
	uint32_t n, *arity;
	const char *const *names = spec_constants(ck->spec, &arity, &n);
	uint32_t *later = calloc(ck->cfg.n_consts + 1, sizeof(*later)), n_later = 0;
	if (!later)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t i = 0; i < ck->cfg.n_consts; i++) {
		struct cfg_const *k = &ck->cfg.consts[i];
		uint32_t j = 0;
		while (j < n && names[j] != k->name)
			j++;
		if (j == n) {
			/* A definition the cfg overrides (the resolver bound it), or, as TLC does for
			 * `name = value`, a name the spec does not have: ignored. */
			struct symbol *s = module_lookup(spec_root(ck->spec), k->name);
			bool known = (s && s->kind == SYM_DEF) || standard_name(ck, k->name);
			if (!known && k->op) {
				snprintf(err->msg, sizeof(err->msg),
					 "%s:%u: %s <- %s: the identifier %s does not appear in the specification", ck->cfg.path,
					 k->line, k->name, k->op, k->name);
				rc = -EINVAL;
				goto out;
			}
			if (!known) {
				size_t used = strlen(ck->warnings);
				snprintf(ck->warnings + used, sizeof(ck->warnings) - used,
					 "%s%s:%u: %s is neither a CONSTANT nor a definition of the spec: ignored, as TLC does",
					 used ? "\n" : "", ck->cfg.path, k->line, k->name);
			}
			continue;
		}
		if (k->value) {
			if (arity[j]) {
				snprintf(err->msg, sizeof(err->msg), "%s:%u: %s takes %u arguments: give it an operator (%s <- Op)",
					 ck->cfg.path, k->line, k->name, arity[j], k->name);
				rc = -EINVAL;
				goto out;
			}
			ck->in.consts[j] = k->value;
			continue;
		}
		struct symbol *s = module_lookup(spec_root(ck->spec), k->op);
		if (!s || s->kind != SYM_DEF) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: %s <- %s: %s is not a definition of the spec", ck->cfg.path,
				 k->line, k->name, k->op, k->op);
			rc = -EINVAL;
			goto out;
		}
		if (s->def->n_params != arity[j]) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: %s <- %s: %s takes %u arguments, %s %u", ck->cfg.path, k->line,
				 k->name, k->op, k->op, s->def->n_params, k->name, arity[j]);
			rc = -EINVAL;
			goto out;
		}
		if (arity[j] == 0) {
			later[n_later++] = i;
		} else {
			struct closure *cl = spt_arena_alloc(&ck->long_arena, sizeof(*cl));
			if (!cl) {
				rc = -ENOMEM;
				goto out;
			}
			*cl = (struct closure){ s->def, NULL, NULL };
			ck->in.const_ops[j] = cl;
		}
	}
	/* Rounds until every definition-given constant has its value (or none makes progress). */
	while (n_later) {
		uint32_t kept = 0;
		for (uint32_t l = 0; l < n_later; l++) {
			struct cfg_const *k = &ck->cfg.consts[later[l]];
			uint32_t j = 0;
			while (names[j] != k->name)
				j++;
			struct symbol *s = module_lookup(spec_root(ck->spec), k->op);
			spt_val *v;
			ev_clear_error(&ck->in.ev);
			ck->in.ev.arena = &ck->long_arena;
			if (eval_call(&ck->in, s->def, NULL, 0, &v))
				later[kept++] = later[l];
			else
				ck->in.consts[j] = v;
		}
		if (kept == n_later) {
			/* No progress: the first one's error is the one to show. */
			struct cfg_const *k = &ck->cfg.consts[later[0]];
			struct symbol *s = module_lookup(spec_root(ck->spec), k->op);
			spt_val *v;
			ev_clear_error(&ck->in.ev);
			eval_call(&ck->in, s->def, NULL, 0, &v);
			rc = eval_err(ck, err, k->name);
			goto out;
		}
		n_later = kept;
	}
out:
	free(later);
	return rc;
}

/* Loads root_path (the spec, or a mapping whose "Spec" is spec_path) and the spec's cfg. */
static int checker_open(const char *root_path, const char *spec_path, const char *cfg_path, struct checker **out,
			struct check_error *err)
{
	struct spec_error se = { 0 };
	struct checker *ck = calloc(1, sizeof(*ck));
	if (!ck)
		return -ENOMEM;
	spt_arena_init(&ck->long_arena);
	spt_arena_init(&ck->window_arena);
	for (int i = 0; i < 2; i++)
		spt_arena_init(&ck->best_arena[i]);
	ck->long_arena.tag = CHECKER_LONG_TAG;
	int rc = root_path == spec_path ? spec_parse(spec_path, &ck->spec, &se)
					: spec_parse_aliased(root_path, "Spec", spec_path, &ck->spec, &se);
	if (rc) {
		spec_err(err, &se);
		free(ck);
		return rc;
	}
	char guess[4096];
	if (!cfg_path) {
		size_t len = strlen(spec_path);
		snprintf(guess, sizeof(guess), "%.*s.cfg", (int)(len > 4 ? len - 4 : len), spec_path);
		if (access(guess, R_OK) == 0)
			cfg_path = guess;
	}
	if ((cfg_path && (rc = cfg_load(ck->spec, cfg_path, &ck->cfg, &se))) ||
	    (rc = spec_resolve(ck->spec, cfg_path ? &ck->cfg : NULL, &se))) {
		spec_err(err, &se);
		goto fail;
	}
	/* Before any value is built: TLC's CHOOSE order follows the order texts were first read. */
	if ((rc = tlc_order_note_spec(ck->spec, ck->cfg.text, ck->cfg.text_len))) {
		snprintf(err->msg, sizeof(err->msg), "out of memory while reading %s", spec_path);
		goto fail;
	}
	interp_init(&ck->in, ck->spec, &ck->long_arena);
	uint32_t nv = ck->in.n_vars;
	ck->var_hash = spt_arena_alloc(&ck->long_arena, (nv + 1) * sizeof(*ck->var_hash));
	ck->var_order = spt_arena_alloc(&ck->long_arena, (nv + 1) * sizeof(*ck->var_order));
	ck->var_len = spt_arena_alloc(&ck->long_arena, (nv + 1) * sizeof(*ck->var_len));
	if (!ck->var_hash || !ck->var_order || !ck->var_len) {
		snprintf(err->msg, sizeof(err->msg), "out of memory while reading %s", spec_path);
		checker_free(ck);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nv; i++) {
		const char *v = ck->in.vars[i];
		ck->var_len[i] = (uint32_t)strlen(v);
		ck->var_hash[i] = spt_str_hash(v, ck->var_len[i]);
		uint32_t j = i; /* insertion by name: a string value's order (bytes, then length) */
		for (; j > 0 && strcmp(ck->in.vars[ck->var_order[j - 1]], v) > 0; j--)
			ck->var_order[j] = ck->var_order[j - 1];
		ck->var_order[j] = i;
	}
	ck->in.rewind = true; /* compare_successor copies the closest successor it keeps */
	ck->in.max_steps = checker_window_steps;
	if ((rc = set_constants(ck, err))) {
		checker_free(ck);
		return rc;
	}
	*out = ck;
	return 0;
fail:
	cfg_free(&ck->cfg);
	spec_free(ck->spec);
	spt_arena_fini(&ck->long_arena);
	free(ck);
	return rc;
}

int checker_new(const char *spec_path, const char *cfg_path, struct checker **out, struct check_error *err)
{
	return checker_open(spec_path, spec_path, cfg_path, out, err);
}

int checker_new_mapped(const char *map_path, const char *spec_path, const char *cfg_path, struct checker **out,
		       struct check_error *err)
{
	return checker_open(map_path, spec_path, cfg_path, out, err);
}

struct interp *checker_interp(struct checker *ck) { return &ck->in; }

const char *checker_warnings(const struct checker *ck) { return ck->warnings[0] ? ck->warnings : NULL; }

int checker_call(struct checker *ck, const char *name, spt_val *const *args, uint32_t n, spt_val **out,
		 struct check_error *err)
{
	struct module *root = spec_root(ck->spec);
	struct symbol *s = module_lookup(root, spec_intern(ck->spec, name, strlen(name)));
	if (!s || s->kind != SYM_DEF)
		return 1; /* not defined: the caller's default applies */
	struct opdef *d = s->def;
	if (d->n_params != n || d->higher_order) {
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s takes %u argument%s here", d->pos.file, d->pos.line,
			 d->pos.col, name, n, n == 1 ? "" : "s");
		return -EINVAL;
	}
	struct interp *in = &ck->in;
	in->ev.arena = &ck->window_arena;
	ev_clear_error(&in->ev);
	if (eval_call(in, d, args, n, out))
		return eval_err(ck, err, name);
	return 0;
}
struct spec *checker_spec(struct checker *ck) { return ck->spec; }

void checker_free(struct checker *ck)
{
	if (!ck)
		return;
	for (uint32_t i = 0; i < ck->n_actions; i++) {
		free(ck->actions[i].param_sets);
		free(ck->actions[i].param_slots);
		free(ck->actions[i].param_owner);
		free(ck->actions[i].order);
		free(ck->actions[i].no_sets);
	}
	free(ck->actions);
	free(ck->init_states);
	interp_fini(&ck->in);
	cfg_free(&ck->cfg);
	spec_free(ck->spec);
	spt_arena_fini(&ck->long_arena);
	spt_arena_fini(&ck->window_arena);
	for (int i = 0; i < 2; i++)
		spt_arena_fini(&ck->best_arena[i]);
	free(ck);
}

struct spt_arena *checker_window_arena(struct checker *ck) { return &ck->window_arena; }

const struct cfg *checker_cfg(struct checker *ck) { return &ck->cfg; }

const char *const *checker_vars(struct checker *ck, uint32_t *n)
{
	*n = ck->in.n_vars;
	return ck->in.vars;
}

/* ---- how Next calls an action ---- */

struct scope {
	uint32_t slot;            /* a bound name's cell */
	const struct opdef *owner; /* in this definition's frame */
	const struct ast *set;
	uint32_t depth;           /* 0 for the outermost */
	const struct scope *next;
};

/* Finds Name(x, y) under \E x \in S, y \in T in e (the body of owner); fills sets. Follows calls
 * of zero-parameter definitions. */
static bool find_call(const struct opdef *owner, const struct ast *e, const struct opdef *action,
		      const struct scope *sc, const struct ast **sets, uint32_t *slots, const struct opdef **owners,
		      uint32_t *depths, uint32_t nparams, int depth)
{
	if (!e || depth > 64)
		return false;
	if (e->kind == A_EXISTS) {
		const struct scope *inner = sc;
		uint32_t total = 0;
		for (uint32_t i = 0; i < e->n_bounds; i++)
			total += e->bounds[i].n_names;
		struct scope *chain = malloc((total + 1) * sizeof(*chain));
		uint32_t k = 0;
		for (uint32_t i = 0; chain && i < e->n_bounds; i++)
			for (uint32_t j = 0; j < e->bounds[i].n_names && !e->bounds[i].tuple && e->bounds[i].set; j++) {
				chain[k] = (struct scope){ e->bounds[i].slots[j], owner, e->bounds[i].set, inner ? inner->depth + 1 : 0, inner };
				inner = &chain[k++];
			}
		bool found = find_call(owner, e->a[0], action, inner, sets, slots, owners, depths, nparams, depth + 1);
		free(chain);
		return found;
	}
	if (e->kind == A_NAME && e->ref == REF_DEF && e->r.def == action) {
		if (e->n != nparams)
			return false;
		for (uint32_t i = 0; i < e->n; i++) {
			const struct ast *arg = e->a[i];
			const struct scope *s = sc;
			while (s && !(arg->kind == A_NAME && arg->ref == REF_LOCAL && arg->up == 0 && s->owner == owner &&
				      s->slot == arg->slot))
				s = s->next;
			if (!s)
				return false;
			sets[i] = s->set;
			slots[i] = s->slot;
			owners[i] = s->owner;
			depths[i] = s->depth;
		}
		return true;
	}
	if (e->kind == A_NAME && e->ref == REF_DEF && e->n == 0) {
		const struct opdef *d = e->r.def;
		if (!d->n_params && !d->n_fbounds)
			return find_call(d, d->body, action, sc, sets, slots, owners, depths, nparams, depth + 1);
	}
	for (uint32_t i = 0; i < e->n; i++)
		if (find_call(owner, e->a[i], action, sc, sets, slots, owners, depths, nparams, depth + 1))
			return true;
	return false;
}

static struct action_info *action_info(struct checker *ck, const char *name, struct check_error *err)
{
	if (ck->last_action < ck->n_actions && !strcmp(ck->actions[ck->last_action].name, name))
		return &ck->actions[ck->last_action];
	const char *iname = spec_intern(ck->spec, name, strlen(name));
	for (uint32_t i = 0; i < ck->n_actions; i++)
		if (ck->actions[i].name == iname) {
			ck->last_action = i;
			return &ck->actions[i];
		}
	struct module *root = spec_root(ck->spec);
	struct symbol *s = module_lookup(root, iname);
	if (!s || s->kind != SYM_DEF || s->def->n_fbounds) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s is not an action (an operator) of module %s", root->path, name,
			 root->name);
		return NULL;
	}
	struct action_info ai = { iname, s->def, s->def->module, NULL, NULL, NULL, NULL, NULL };
	if (s->def->n_params) {
		uint32_t np = s->def->n_params;
		ai.param_sets = calloc(np, sizeof(*ai.param_sets));
		ai.param_slots = calloc(np, sizeof(*ai.param_slots));
		ai.param_owner = calloc(np, sizeof(*ai.param_owner));
		ai.order = calloc(np, sizeof(*ai.order));
		uint32_t *depths = calloc(np, sizeof(*depths));
		const char *next_name = ck->cfg.next ? ck->cfg.next : spec_intern(ck->spec, "Next", 4);
		struct symbol *nx = module_lookup(root, next_name);
		bool found = ai.param_sets && ai.param_slots && ai.param_owner && ai.order && depths && nx &&
			     nx->kind == SYM_DEF &&
			     find_call(nx->def, nx->def->body, s->def, NULL, ai.param_sets, ai.param_slots, ai.param_owner,
				       depths, np, 0);
		/* Bind from the outermost quantifier in: an inner set may name an outer variable. */
		for (uint32_t i = 0; found && i < np; i++) {
			uint32_t j = i;
			while (j > 0 && depths[ai.order[j - 1]] > depths[i]) {
				ai.order[j] = ai.order[j - 1];
				j--;
			}
			ai.order[j] = i;
		}
		free(depths);
		if (!found) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg),
				 "%s:%u:%u: %s has %u parameter%s, but %s does not call it as \\E x \\in S : %s(x, ...), "
				 "so spectap cannot tell what its parameters range over (a mapping's Params can say)",
				 s->def->pos.file, s->def->pos.line, s->def->pos.col, name, s->def->n_params,
				 s->def->n_params == 1 ? "" : "s", next_name, name);
			free(ai.param_sets);
			free(ai.param_slots);
			free(ai.param_owner);
			free(ai.order);
			ai.param_sets = NULL;
			ai.param_slots = NULL;
			ai.param_owner = NULL;
			ai.order = NULL;
			if (!(ai.no_sets = strdup(msg)))
				return NULL;
		}
	}
	struct action_info *n = realloc(ck->actions, (ck->n_actions + 1) * sizeof(*n));
	if (!n) {
		free(ai.param_sets);
		free(ai.param_slots);
		free(ai.param_owner);
		free(ai.order);
		return NULL;
	}
	ck->actions = n;
	ck->actions[ck->n_actions] = ai;
	ck->last_action = ck->n_actions;
	return &ck->actions[ck->n_actions++];
}

int checker_action(struct checker *ck, const char *action, uint32_t *params, struct check_error *err)
{
	struct action_info *ai = action_info(ck, action, err);
	if (!ai)
		return -EINVAL;
	/* Parameters whose sets Next does not give (ai->no_sets) are still fine for windows that
	 * carry their binding (spectap windows writes it): a window without one is the error. */
	*params = ai->def->n_params;
	return 0;
}

/* ---- Init ---- */

static int keep_init(struct interp *in, void *arg)
{
	struct checker *ck = arg;
	spt_val ***n = realloc(ck->init_states, (ck->n_init + 1) * sizeof(*n));
	spt_val **st = spt_arena_alloc(&ck->long_arena, (in->n_vars + 1) * sizeof(*st));
	if (!n || !st)
		return ev_fail(&in->ev, NULL, "out of memory");
	ck->init_states = n;
	for (uint32_t i = 0; i < in->n_vars; i++)
		st[i] = in->next[i] ? spt_value_clone(&ck->long_arena, in->next[i]) : NULL;
	ck->init_states[ck->n_init++] = st;
	return ck->n_init > 10000 ? ev_fail(&in->ev, NULL, "Init allows more than 10000 states") : 0;
}

static int init_states(struct checker *ck, struct check_error *err)
{
	if (ck->init_done)
		return 0;
	const char *init = ck->cfg.init ? ck->cfg.init : spec_intern(ck->spec, "Init", 4);
	struct symbol *s = module_lookup(spec_root(ck->spec), init);
	if (!s || s->kind != SYM_DEF) {
		snprintf(err->msg, sizeof(err->msg), "the window leaves variables out, and the spec has no %s to say what they may be", init);
		return -EINVAL;
	}
	struct interp *in = &ck->in;
	in->init_mode = true;
	in->ev.arena = &ck->long_arena;
	memset(in->next, 0, in->n_vars * sizeof(*in->next));
	struct frame *f = frame_new(in, s->def, NULL, NULL);
	int rc = f ? enumerate(in, (struct ctx){ f, NULL, false }, s->def->body, keep_init, ck) : EVAL_ERR;
	in->init_mode = false;
	in->ev.arena = &ck->window_arena;
	if (rc)
		return eval_err(ck, err, "evaluating Init");
	ck->init_done = true;
	return 0;
}

/* ---- one window ---- */

struct wstate {
	struct checker *ck;
	spt_val *post;
	uint32_t *observed;     /* variable indices the post-state gives */
	spt_val **expected;
	uint32_t n_obs;
	struct window_result *res;
	spt_val **best;         /* the closest successor, once the replay found it again */
	uint32_t best_dist;
	uint32_t best_ord;      /* its number among the successors (enumeration is deterministic) */
	bool replay;            /* enumerating again, to take the best_ord-th successor */
	spt_val *binding;
	const char *best_binding;
	spt_val *params;        /* bound by a mapping, or NULL */
};

/* Each successor against the window's post-state. A failing window's closest successor is
 * kept by a second enumeration that stops at it: its values go when its branch returns (the
 * enumerator rewinds), and copying every better one on the way would cost passing windows. */
static int compare_successor(struct interp *in, void *arg)
{
	struct wstate *w = arg;
	uint32_t ord = w->res->successors++;
	if (w->replay) {
		if (ord != w->best_ord)
			return 0;
		struct spt_arena *a = &w->ck->best_arena[0];
		spt_arena_reset(a);
		for (uint32_t i = 0; i < in->n_vars; i++)
			if (in->next[i] && !(w->best[i] = spt_value_move(a, in->next[i])))
				return ev_fail(&in->ev, NULL, "out of memory");
		const char *b = w->binding ? ev_show(&in->ev, w->binding) : NULL;
		w->best_binding = b ? spt_arena_strndup(a, b, strlen(b)) : NULL;
		return 1;
	}
	uint32_t dist = 0;
	for (uint32_t i = 0; i < w->n_obs; i++)
		if (!spt_value_eq(in->next[w->observed[i]], w->expected[i]))
			dist++;
	if (dist < w->best_dist) {
		w->best_dist = dist;
		w->best_ord = ord;
	}
	return dist == 0 ? 1 : 0; /* a match: done */
}

/* Every binding of the action's parameters, each checked by enumerating its successors. */
static int try_bindings(struct checker *ck, struct action_info *ai, struct wstate *w, uint32_t i, spt_val **vals,
			struct check_error *err)
{
	struct interp *in = &ck->in;
	struct opdef *d = ai->def;
	if (i == 0 && w->params) {
		/* The mapping bound the parameters. */
		if (!spt_is_fun(w->params) || (w->params->n && w->params->kind != SPT_SEQ) || w->params->n != d->n_params) {
			snprintf(err->msg, sizeof(err->msg), "the parameters %s given for %s are not a tuple of %u values",
				 ev_show(&in->ev, w->params), d->name, d->n_params);
			return -EINVAL;
		}
		for (uint32_t k = 0; k < d->n_params; k++)
			vals[k] = (spt_val *)w->params->u.elems[k];
		i = d->n_params;
	}
	if (i == d->n_params) {
		struct spt_arena_mark m = spt_arena_mark(in->ev.arena);
		struct frame *f = frame_new(in, d, NULL, NULL);
		if (!f)
			return eval_err(ck, err, d->name);
		for (uint32_t k = 0; k < d->n_params; k++)
			f->c[k].v = vals[k];
		w->binding = d->n_params ? spt_seq(in->ev.arena, vals, d->n_params) : NULL;
		memset(in->next, 0, in->n_vars * sizeof(*in->next));
		int rc = enumerate(in, (struct ctx){ f, NULL, false }, d->body, compare_successor, w);
		if (rc == EVAL_ERR)
			return eval_err(ck, err, d->name);
		spt_arena_rewind(in->ev.arena, m);
		return rc;
	}
	if (ai->no_sets) {
		snprintf(err->msg, sizeof(err->msg), "%s", ai->no_sets);
		return -EINVAL;
	}
	/* The i-th parameter from the outermost quantifier in; the outer ones are bound by now, in
	 * the frame of the definition whose \E binds them. */
	uint32_t p = ai->order[i];
	struct frame *sf = frame_new(in, ai->param_owner[p], NULL, NULL);
	if (!sf)
		return eval_err(ck, err, d->name);
	struct ctx sc = { sf, NULL, false };
	for (uint32_t k = 0; k < i; k++)
		if (ai->param_owner[ai->order[k]] == ai->param_owner[p])
			sf->c[ai->param_slots[ai->order[k]]].v = vals[ai->order[k]];
	spt_val *set;
	if (eval(in, sc, ai->param_sets[p], &set))
		return eval_err(ck, err, "the set a parameter ranges over");
	if (set->kind != SPT_SET) {
		snprintf(err->msg, sizeof(err->msg), "parameter %s of %s ranges over %s, which is not a finite set", d->params[p], d->name,
			 ev_show(&in->ev, set));
		return -EINVAL;
	}
	for (uint32_t k = 0; k < set->n; k++) {
		vals[p] = (spt_val *)set->u.elems[k];
		int rc = try_bindings(ck, ai, w, i + 1, vals, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The variable named key (a state's i-th key: the i-th variable in canonical order is tried
 * first), or -1. */
static int var_index(struct checker *ck, spt_val *key, uint32_t i)
{
	const char *const *vars = ck->in.vars;
	uint32_t n = ck->in.n_vars, j = i < n ? ck->var_order[i] : 0;
	for (uint32_t k = 0; k < n; k++, j = j + 1 < n ? j + 1 : 0)
		if (key->hash == ck->var_hash[j] && key->n == ck->var_len[j] && !memcmp(key->u.s, vars[j], key->n))
			return (int)j;
	return -1;
}

/* An error while checking the action is the window's verdict, and the next window is checked:
 * running out of memory too (--max-memory: what the window built goes with its arena, as after
 * any error); running out of time (--timeout is the whole run's), and what no values can make
 * work (an unsupported construct, a constant without a value), stop the check. */
static int window_error(struct checker *ck, struct window_result *res, int rc, struct check_error *err)
{
	if (rc != -EINVAL || interp_time_up || ck->in.ev.err.unsupported)
		return rc;
	snprintf(ck->window_error, sizeof(ck->window_error), "%s", err->msg);
	memset(res, 0, sizeof(*res));
	res->error = ck->window_error;
	err->msg[0] = 0;
	return 0;
}

int checker_window(struct checker *ck, const char *action, spt_val *pre, spt_val *post, spt_val *params,
		   struct window_result *res, struct check_error *err)
{
	struct interp *in = &ck->in;
	memset(res, 0, sizeof(*res));
	struct action_info *ai = action_info(ck, action, err);
	if (!ai)
		return -EINVAL;
	ev_clear_error(&in->ev);
	in->ev.arena = &ck->window_arena;
	in->steps = 0; /* the step limit is per window */
	uint32_t nv = in->n_vars;
	/* In the window's arena: allocated before anything the evaluation rewinds. */
	struct spt_arena *wa = &ck->window_arena;
	bool *given = spt_arena_alloc(wa, nv + 1);
	struct wstate w = { ck, post, spt_arena_alloc(wa, (nv + 1) * sizeof(uint32_t)), spt_arena_alloc(wa, (nv + 1) * sizeof(spt_val *)),
			    0, res, spt_arena_alloc(wa, (nv + 1) * sizeof(spt_val *)), UINT32_MAX, 0, false, NULL, NULL, params };
	spt_val **vals = spt_arena_alloc(wa, (ai->def->n_params + 1) * sizeof(*vals));
	int rc = -ENOMEM;
	if (!given || !w.observed || !w.expected || !w.best || !vals)
		goto out;
	memset(given, 0, nv + 1);
	memset(vals, 0, (ai->def->n_params + 1) * sizeof(*vals));
	memset(w.best, 0, (nv + 1) * sizeof(*w.best));
	rc = -EINVAL;
	for (uint32_t i = 0; pre && i < pre->n; i++) {
		int v = var_index(ck, pre->u.fn.keys[i], i);
		if (v < 0) {
			snprintf(err->msg, sizeof(err->msg), "pre_state has %s, which is not a variable of the spec", pre->u.fn.keys[i]->u.s);
			goto out;
		}
		given[v] = true;
		in->cur[v] = (spt_val *)pre->u.fn.vals[i];
	}
	for (uint32_t i = 0; post && i < post->n; i++) {
		int v = var_index(ck, post->u.fn.keys[i], i);
		if (v < 0) {
			snprintf(err->msg, sizeof(err->msg), "post_state has %s, which is not a variable of the spec", post->u.fn.keys[i]->u.s);
			goto out;
		}
		w.observed[w.n_obs] = (uint32_t)v;
		w.expected[w.n_obs++] = post->u.fn.vals[i];
	}
	bool all = true;
	for (uint32_t i = 0; i < nv; i++)
		all &= given[i];
	uint32_t n_pre = 1;
	if (!all) {
		if (init_states(ck, err))
			goto out;
		n_pre = ck->n_init;
	}
	rc = 0;
	for (uint32_t s = 0; s < n_pre && rc == 0; s++) {
		for (uint32_t i = 0; i < nv; i++)
			if (!given[i])
				in->cur[i] = ck->init_states[s][i];
		rc = try_bindings(ck, ai, &w, 0, vals, err);
	}
	if (rc < 0) {
		rc = window_error(ck, res, rc, err);
		goto out;
	}
	rc = 0;
	res->passed = w.best_dist == 0;
	res->no_successor = res->successors == 0;
	if (!res->passed && !res->no_successor) {
		/* Again, to the closest successor (the same pre-states, bindings and order). */
		uint32_t successors = res->successors;
		w.replay = true;
		res->successors = 0;
		for (uint32_t s = 0; s < n_pre && rc == 0; s++) {
			for (uint32_t i = 0; i < nv; i++)
				if (!given[i])
					in->cur[i] = ck->init_states[s][i];
			rc = try_bindings(ck, ai, &w, 0, vals, err);
		}
		res->successors = successors;
		if (rc < 0) {
			rc = window_error(ck, res, rc, err);
			goto out;
		}
		rc = 0;
	}
	res->binding = w.best_binding;
	if (!res->passed && !res->no_successor) {
		res->diffs = spt_arena_alloc(&ck->window_arena, (w.n_obs + 1) * sizeof(*res->diffs));
		if (!res->diffs) {
			rc = -ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < w.n_obs; i++) {
			spt_val *got = w.best[w.observed[i]];
			if (!spt_value_eq(got, w.expected[i]))
				res->diffs[res->n_diffs++] = (struct var_diff){ in->vars[w.observed[i]], w.expected[i], got };
		}
	}
out:
	for (uint32_t i = 0; i < nv; i++)
		in->cur[i] = NULL;
	return rc;
}
