/* The first-order operators of the TLC module: printing, assertions, ToString. */
#include "builtins_internal.h"
#include "ev_core.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

FILE *bi_print_stream;

static void print_line(spt_val *v)
{
	FILE *f = bi_print_stream ? bi_print_stream : stderr;
	spt_value_print(f, v);
	fputc('\n', f);
	fflush(f);
}

/* Print(out, val): shows out as TLC does (strings with their quotes) and is val. */
BI(bi_print)
{
	(void)ev;
	(void)at;
	(void)n;
	print_line(args[0]);
	*out = args[1];
	return 0;
}

BI(bi_printt)
{
	(void)n;
	print_line(args[0]);
	return bi_ret_bool(ev, at, "PrintT", true, out);
}

/* Assert(c, msg): TRUE, or an error carrying msg (a string shows without its quotes). As TLC,
 * whose Assert fails the same way when c is not a Boolean, the error keeps msg (AssertError). */
BI(bi_assert)
{
	(void)n;
	bool c, first = !ev->failed;
	if (bi_boolean(ev, at, "Assert", 1, args[0], &c)) {
		if (first)
			ev->assert_msg = args[1];
		return EVAL_ERR;
	}
	if (c)
		return bi_ret_bool(ev, at, "Assert", true, out);
	spt_val *m = args[1];
	if (m->kind == SPT_STR)
		ev_fail(ev, at, "Assert failed: %.*s", m->n > 600 ? 600 : (int)m->n, m->u.s);
	else
		ev_fail(ev, at, "Assert failed: %s", ev_show(ev, m));
	if (first)
		ev->assert_msg = m;
	return EVAL_ERR;
}

/* TLCExt's Trace: the behaviour from an initial state to the current one, which only the model
 * checker's search has (it rebuilds it as TLC reads it back from its trace file). */
BI(bi_trace)
{
	(void)args;
	(void)n;
	if (!ev->run || !ev->run->trace)
		return ev_unsupported(ev, at, "TLCExt's Trace (the behaviour up to this state) is only defined while model "
					      "checking (check --model, --trace-spec, --whole)");
	return ev->run->trace(ev->run->trace_arg, ev, at, out);
}

BI(bi_tostring)
{
	(void)n;
	return bi_ret(ev, at, "ToString", bi_to_string(ev, args[0]), out);
}

/* TLCEval(v) only forces evaluation in TLC; arguments arrive evaluated here. */
BI(bi_tlceval)
{
	(void)ev;
	(void)at;
	(void)n;
	*out = args[0];
	return 0;
}

/* TLCSet/TLCGet registers: meaningful for a spec's own bookkeeping (integer registers). The
 * named ones ("level", "diameter", ...) describe TLC's model checking, which has no counterpart
 * in window validation: asking for them is an error, never a made-up value. */
#define TLC_REGISTERS 64
#define TLC_NAMED_REGISTERS 64
struct tlc_registers {
	spt_val *r[TLC_REGISTERS];
	/* TLC's named registers, TLCSet("s:name", v): names as the keys' strings, in the arena */
	const char *names[TLC_NAMED_REGISTERS];
	spt_val *named[TLC_NAMED_REGISTERS];
	struct spt_arena arena;
};

static struct tlc_registers *regs(struct ev *ev)
{
	if (!ev->tlc) {
		struct tlc_registers *t = calloc(1, sizeof(*t));
		if (t)
			spt_arena_init(&t->arena);
		ev->tlc = t;
	}
	return ev->tlc;
}

void bi_tlc_fini(struct ev *ev)
{
	struct tlc_registers *t = ev->tlc;
	if (t) {
		spt_arena_fini(&t->arena);
		free(t);
	}
	ev->tlc = NULL;
}

static int register_index(struct ev *ev, const struct ast *at, const char *op, spt_val *i, int64_t *out)
{
	if (i->kind == SPT_STR)
		return ev_fail(ev, at, ev->run ? "%s(\"%s\"): spectap's model checker does not keep it"
					       : "%s(\"%s\") describes TLC's model checking run, which window validation does not have",
			       op, i->u.s);
	if (bi_int(ev, at, op, 1, i, out))
		return EVAL_ERR;
	if (*out < 0 || *out >= TLC_REGISTERS)
		return ev_fail(ev, at, "%s: register %lld is outside 0..%d", op, (long long)*out, TLC_REGISTERS - 1);
	return 0;
}

/* A named register "s:..." (TLC's NAMED_REGISTER_PREFIX): its cell, made when make is set
 * (NULL: not set yet, or no room). */
static spt_val **named_register(struct tlc_registers *t, const char *name, bool make)
{
	for (int i = 0; i < TLC_NAMED_REGISTERS; i++) {
		if (t->names[i] && !strcmp(t->names[i], name))
			return &t->named[i];
		if (!t->names[i]) {
			if (!make)
				return NULL;
			size_t n = strlen(name) + 1;
			char *copy = spt_arena_alloc(&t->arena, n);
			if (!copy)
				return NULL;
			t->names[i] = memcpy(copy, name, n);
			return &t->named[i];
		}
	}
	return NULL;
}

static bool is_named_register(const spt_val *key) { return key->kind == SPT_STR && !strncmp(key->u.s, "s:", 2); }

/* Register key := v; 0 or EVAL_ERR. */
static int set_register(struct ev *ev, const struct ast *at, const char *op, spt_val *key, spt_val *v)
{
	int64_t i = 0;
	bool named = is_named_register(key);
	if (!named && register_index(ev, at, op, key, &i))
		return EVAL_ERR;
	/* Registers outlive the window being checked: keep a copy of their own. */
	struct tlc_registers *t = regs(ev);
	spt_val *copy = t ? spt_value_clone(&t->arena, v) : NULL;
	spt_val **cell = !copy ? NULL : named ? named_register(t, key->u.s, true) : &t->r[i];
	if (!cell)
		return ev_fail(ev, at, copy ? "%s: more than %d named registers" : "out of memory in %s", op,
			       TLC_NAMED_REGISTERS);
	*cell = copy;
	return 0;
}

/* TLCSet("exit", b): b TRUE stops the model checker's search as TLC's does (the state being
 * expanded finishes, no other is taken, the run ends as a completed one); any other value does
 * nothing.
 * TLCSet("pause", b) waits for the user's enter, which a check never asks for. */
static int set_control(struct ev *ev, const struct ast *at, spt_val *key, spt_val *v, bool *handled)
{
	*handled = key->kind == SPT_STR && (!strcmp(key->u.s, "exit") || !strcmp(key->u.s, "pause"));
	if (!*handled)
		return 0;
	if (v->kind != SPT_BOOL || !v->u.b) /* TLC: only TRUE does something, any other value nothing */
		return 0;
	if (key->u.s[0] == 'p')
		return ev_fail(ev, at, "TLCSet(\"pause\", TRUE) waits for the user to press enter; spectap does not ask");
	if (!ev->run || !ev->run->exit_req)
		return ev_fail(ev, at, "TLCSet(\"exit\", TRUE) stops TLC's model checking, which window validation does not have");
	atomic_store(ev->run->exit_req, 1);
	return 0;
}

BI(bi_tlcset)
{
	(void)n;
	bool control;
	if (set_control(ev, at, args[0], args[1], &control) || (!control && set_register(ev, at, "TLCSet", args[0], args[1])))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "TLCSet", true, out);
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* TLCGet("level"), TLCGet("stats"), ... as TLC's breadth-first mode gives them. */
static int tlcget_named(struct ev *ev, const struct ast *at, const struct tlc_run *r, spt_val *key, spt_val **out)
{
	struct spt_arena *a = ev->arena;
	const char *k = key->u.s;
	int64_t dur = (int64_t)(now_seconds() - r->start);
	if (!strcmp(k, "level"))
		return bi_ret(ev, at, "TLCGet", spt_int(a, r->level), out);
	if (!strcmp(k, "diameter") || !strcmp(k, "distinct") || !strcmp(k, "generated") || !strcmp(k, "queue")) {
		enum tlc_counter c = k[0] == 'd' ? (k[1] == 'i' && k[2] == 'a' ? TLC_DIAMETER : TLC_DISTINCT)
					   : k[0] == 'g' ? TLC_GENERATED : TLC_QUEUE;
		return bi_ret(ev, at, "TLCGet", spt_int(a, (int64_t)r->count(r->arg, c)), out);
	}
	if (!strcmp(k, "duration"))
		return bi_ret(ev, at, "TLCGet", spt_int(a, dur), out);
	/* TLC's Java system properties: the one a spec asks to know that \cdot is on. */
	if (!strcmp(k, "-Dtlc2.tool.impl.Tool.cdot"))
		return bi_ret(ev, at, "TLCGet", spt_cstr(a, "true"), out);
	if (!strncmp(k, "-D", 2))
		return ev_fail(ev, at, "TLCGet(\"%s\") reads a Java system property of TLC, which spectap does not have", k);
	if (!strcmp(k, "stats")) {
		static const char *const names[] = { "queue", "distinct", "initial", "generated", "diameter", "duration", "worker" };
		spt_val *v[7] = { spt_int(a, (int64_t)r->count(r->arg, TLC_QUEUE)), spt_int(a, (int64_t)r->count(r->arg, TLC_DISTINCT)),
				  spt_int(a, (int64_t)r->initial), spt_int(a, (int64_t)r->count(r->arg, TLC_GENERATED)),
				  spt_int(a, (int64_t)r->count(r->arg, TLC_DIAMETER)), spt_int(a, dur), spt_int(a, r->worker) };
		return bi_ret(ev, at, "TLCGet", spt_rec(a, names, v, 7), out);
	}
	if (!strcmp(k, "config")) {
		static const char *const names[] = { "mode", "deadlock", "worker", "seed", "fingerprint", "install" };
		spt_val *v[6] = { spt_cstr(a, "bfs"), spt_bool(a, r->deadlock), spt_int(a, r->workers), spt_cstr(a, "0"),
				  spt_cstr(a, "0"), spt_cstr(a, "spectap") };
		return bi_ret(ev, at, "TLCGet", spt_rec(a, names, v, 6), out);
	}
	return ev_fail(ev, at, "TLCGet(%s) was undefined", k);
}

/* TLCGet(key) and TLCGetOrDefault(key, d) (dflt; NULL: unset is an error). */
static int get_register(struct ev *ev, const struct ast *at, const char *op, spt_val *key, spt_val *dflt,
			spt_val **out)
{
	int64_t i;
	if (is_named_register(key)) {
		struct tlc_registers *t = regs(ev);
		spt_val **cell = t ? named_register(t, key->u.s, false) : NULL;
		if (!(*out = cell && *cell ? *cell : dflt))
			return ev_fail(ev, at, "%s(\"%s\"): nothing was TLCSet there", op, key->u.s);
		return 0;
	}
	if (key->kind == SPT_STR && ev->run)
		return tlcget_named(ev, at, ev->run, key, out);
	if (register_index(ev, at, op, key, &i))
		return EVAL_ERR;
	struct tlc_registers *t = regs(ev);
	if (!(*out = t && t->r[i] ? t->r[i] : dflt))
		return ev_fail(ev, at, "%s(%lld): nothing was TLCSet there", op, (long long)i);
	return 0;
}

BI(bi_tlcget)
{
	(void)n;
	return get_register(ev, at, "TLCGet", args[0], NULL, out);
}

/* TLCExt's TLCGetOrDefault(key, d): register key's value, or d when nothing was TLCSet there. */
BI(bi_tlc_get_or_default)
{
	(void)n;
	return get_register(ev, at, "TLCGetOrDefault", args[0], args[1], out);
}

/* TLCExt's TLCGetAndSet(key, Op, v, d): sets register key to Op(old, v), where old is its value
 * (d when unset), and gives old. */
HBI_DECL(bi_tlc_get_and_set)
{
	(void)n;
	spt_val *old, *v;
	if (get_register(ev, at, "TLCGetAndSet", args[0], args[3], &old))
		return EVAL_ERR;
	spt_val *op_args[2] = { old, args[2] };
	if (ev_call_op(ev, at, ops[1], op_args, 2, &v))
		return EVAL_ERR;
	return set_register(ev, at, "TLCGetAndSet", args[0], v) ? EVAL_ERR : (*out = old, 0);
}

/* TLCExt's PickSuccessor(exp): TRUE when exp is; otherwise TLC asks the user on its console
 * whether to take the step, which a check never does: an error naming it, not a guess. */
BI(bi_pick_successor)
{
	(void)n;
	if (args[0]->kind != SPT_BOOL)
		return ev_fail(ev, at, "PickSuccessor(exp): exp is not a Boolean");
	if (!args[0]->u.b)
		return ev_fail(ev, at, "PickSuccessor(FALSE) asks the user whether to take this step (TLC's interactive "
				       "mode); spectap does not ask: make exp TRUE where the step is to be taken");
	return bi_ret_bool(ev, at, "PickSuccessor", true, out);
}

/* TLCExt's CounterExample: the behaviour of a violation as a graph, [action |-> {...}, state |->
 * {...}], which TLC binds only while it evaluates the POSTCONDITION after a violation (spectap
 * does not evaluate it there, and says so); everywhere else TLC gives the empty graph, as here. */
BI(bi_counter_example)
{
	(void)args;
	(void)n;
	static const char *const names[] = { "action", "state" };
	spt_val *empty = spt_set(ev->arena, NULL, 0);
	spt_val *v[2] = { empty, empty };
	return bi_ret(ev, at, "CounterExample", empty ? spt_rec(ev->arena, names, v, 2) : NULL, out);
}

/* TLCExt's ToTrace(CE): the states of CounterExample's graph as a tuple, state i at i. */
BI(bi_to_trace)
{
	(void)n;
	spt_val *st = args[0]->kind == SPT_REC ? spt_rec_get(args[0], "state") : NULL;
	if (!st || st->kind != SPT_SET)
		return ev_fail(ev, at, "ToTrace(CE): CE is not a CounterExample (a record with a set state of <<i, s>>)");
	spt_val **elems = spt_arena_alloc(ev->arena, (st->n ? st->n : 1) * sizeof(*elems));
	if (!elems)
		return ev_fail(ev, at, "out of memory in ToTrace");
	memset(elems, 0, (st->n ? st->n : 1) * sizeof(*elems));
	for (uint32_t i = 0; i < st->n; i++) {
		spt_val *p = st->u.elems[i];
		if (p->kind != SPT_SEQ || p->n != 2 || p->u.elems[0]->kind != SPT_INT || p->u.elems[0]->u.i < 1 ||
		    p->u.elems[0]->u.i > (int64_t)st->n || elems[p->u.elems[0]->u.i - 1])
			return ev_fail(ev, at, "ToTrace(CE): CE.state is not a set of <<i, s>> with i in 1..%u, each once", st->n);
		elems[p->u.elems[0]->u.i - 1] = (spt_val *)p->u.elems[1];
	}
	return bi_ret(ev, at, "ToTrace", spt_seq_adopt(ev->arena, elems, st->n), out);
}
