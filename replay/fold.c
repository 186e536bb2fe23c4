/* fold: a TLA+ operator folded over a stream (fold.h). The arena scheme is mapping.c's: the
 * accumulator in one of two live arenas, compacted by copying; the rest in a scratch arena
 * reset per step; the definition cache told which arenas outlive its entries. */
#include "fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define LIVE_MIN ((size_t)8 << 20) /* compaction only past this */
enum { TAG_LIVE_A = 221, TAG_LIVE_B = 222 };

struct fold {
	struct checker *ck;
	struct interp *in;
	struct opdef *init, *step, *end;
	struct spt_arena live[2];
	uint8_t cur;
	size_t live_after;
	struct spt_arena scratch;
	spt_val *acc;
};

static struct spt_arena *LIVE(struct fold *f) { return &f->live[f->cur]; }

static struct opdef *def(struct fold *f, const char *name, uint32_t arity, bool required, struct check_error *err)
{
	struct spec *s = checker_spec(f->ck);
	struct module *root = spec_root(s);
	struct symbol *sym = module_lookup(root, spec_intern(s, name, strlen(name)));
	if (!sym || sym->kind != SYM_DEF) {
		if (required)
			snprintf(err->msg, sizeof(err->msg), "%s: defines no %s", root->path, name);
		return NULL;
	}
	if (sym->def->n_params != arity) {
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s takes %u argument%s here", sym->def->pos.file,
			 sym->def->pos.line, sym->def->pos.col, name, arity, arity == 1 ? "" : "s");
		return NULL;
	}
	return sym->def;
}

static int call(struct fold *f, struct opdef *d, spt_val *const *args, spt_val **out, struct check_error *err)
{
	struct interp *in = f->in;
	in->ev.arena = &f->scratch;
	ev_clear_error(&in->ev);
	if (eval_call(in, d, args, d->n_params, out)) {
		const struct eval_error *e = &in->ev.err;
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: in %s: %s", e->pos.file ? e->pos.file : "?", e->pos.line,
			 e->pos.col, d->name, e->msg);
		return -EINVAL;
	}
	return 0;
}

int fold_new(const char *module, const char *init, const char *step, const char *end, struct fold **out,
	     struct check_error *err)
{
	struct fold *f = calloc(1, sizeof(*f));
	spt_val *acc;
	int rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	spt_arena_init(&f->live[0]);
	spt_arena_init(&f->live[1]);
	f->live[0].tag = TAG_LIVE_A;
	f->live[1].tag = TAG_LIVE_B;
	spt_arena_init(&f->scratch);
	err->msg[0] = 0;
	if ((rc = checker_new(module, NULL, &f->ck, err))) {
		free(f);
		return rc;
	}
	f->in = checker_interp(f->ck);
	f->init = def(f, init, 0, true, err);
	f->step = f->init ? def(f, step, 2, true, err) : NULL;
	f->end = f->step && end ? def(f, end, 1, false, err) : NULL;
	if (!f->init || !f->step || err->msg[0]) {
		fold_free(f);
		return -EINVAL;
	}
	memo_set_stable(&f->in->memo, TAG_LIVE_A, TAG_LIVE_B);
	if ((rc = call(f, f->init, NULL, &acc, err))) {
		fold_free(f);
		return rc;
	}
	if (!(f->acc = spt_value_move(LIVE(f), acc))) {
		fold_free(f);
		return -ENOMEM;
	}
	f->live_after = LIVE(f)->bytes;
	*out = f;
	return 0;
}

void fold_free(struct fold *f)
{
	if (!f)
		return;
	checker_free(f->ck);
	spt_arena_fini(&f->live[0]);
	spt_arena_fini(&f->live[1]);
	spt_arena_fini(&f->scratch);
	free(f);
}

struct interp *fold_interp(struct fold *f) { return f->in; }

/* Copies the accumulator into the other live arena once the current one has doubled. */
static int maybe_compact(struct fold *f)
{
	size_t used = LIVE(f)->bytes;
	if (used < LIVE_MIN || used < 2 * f->live_after)
		return 0;
	uint8_t next = (uint8_t)(1 - f->cur);
	spt_arena_reset(&f->live[next]);
	spt_val *acc = spt_value_move(&f->live[next], f->acc);
	if (!acc)
		return -ENOMEM;
	f->acc = acc;
	memo_forget_stable(&f->in->memo);
	spt_arena_reset(&f->live[f->cur]);
	spt_arena_trim(&f->live[f->cur], f->live[next].bytes);
	f->cur = next;
	f->live_after = LIVE(f)->bytes;
	return 0;
}

struct spt_arena *fold_begin(struct fold *f)
{
	spt_arena_reset(&f->scratch);
	memo_collect(&f->in->memo);
	return maybe_compact(f) ? NULL : &f->scratch;
}

int fold_step(struct fold *f, spt_val *x, spt_val **out, struct check_error *err)
{
	spt_val *args[2] = { x, f->acc }, *res, *acc;
	int rc = call(f, f->step, args, &res, err);
	if (rc)
		return rc;
	if (!spt_is_fun(res) || !(acc = spt_rec_get(res, "acc"))) {
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s must give a record [acc |-> ..., out |-> ...], not %s",
			 f->step->pos.file, f->step->pos.line, f->step->pos.col, f->step->name, ev_show(&f->in->ev, res));
		return -EINVAL;
	}
	if (!(f->acc = spt_value_move(LIVE(f), acc)))
		return -ENOMEM;
	*out = spt_rec_get(res, "out");
	return 0;
}

int fold_end(struct fold *f, spt_val **out, struct check_error *err)
{
	if (!f->end)
		return 1;
	return call(f, f->end, &f->acc, out, err);
}
