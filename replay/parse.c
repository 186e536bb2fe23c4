/*
 * tree-sitter-tlaplus concrete syntax trees -> our AST. Anything outside the supported subset
 * is an error naming the construct and its position, never silently dropped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tree_sitter/api.h>

#include "parse.h"

const TSLanguage *tree_sitter_tlaplus(void);

struct conv {
	struct parse_ctx *pc;
	const char *src;
	const char *file;
	struct spec_error *err;
	bool failed;
	uintptr_t stack_top; /* the frame of the outermost expr(): deep nesting is an error */
};

/* How much C stack nested expressions may use: half the limit, at most 256 MiB. */
static size_t stack_budget(void)
{
	static size_t budget;
	if (!budget) {
		struct rlimit rl;
		size_t lim = (size_t)8 << 20;
		if (getrlimit(RLIMIT_STACK, &rl) == 0)
			lim = rl.rlim_cur == RLIM_INFINITY ? (size_t)256 << 20 : (size_t)rl.rlim_cur;
		if (lim > ((size_t)256 << 20))
			lim = (size_t)256 << 20;
		budget = lim / 2;
	}
	return budget;
}

/* ---- errors ---- */

static struct src_pos pos_of(struct conv *c, TSNode n)
{
	TSPoint p = ts_node_start_point(n);
	return (struct src_pos){ c->file, p.row + 1, p.column + 1 };
}

static void excerpt(struct conv *c, TSNode n, char *out, size_t cap)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	const char *nl = memchr(c->src + a, '\n', b - a);
	if (nl)
		b = (uint32_t)(nl - c->src);
	size_t len = b - a < cap - 1 ? b - a : cap - 1;
	memcpy(out, c->src + a, len);
	out[len] = '\0';
}

__attribute__((format(printf, 3, 4))) static void *fail(struct conv *c, TSNode n, const char *fmt, ...)
{
	if (c->failed)
		return NULL;
	c->failed = true;
	c->err->pos = pos_of(c, n);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	excerpt(c, n, c->err->excerpt, sizeof(c->err->excerpt));
	return NULL;
}

static const char *type(TSNode n) { return ts_node_type(n); }
static bool is(TSNode n, const char *t) { return !strcmp(ts_node_type(n), t); }

static const char *text(struct conv *c, TSNode n)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	return parse_intern(c->pc, c->src + a, b - a);
}

static void *alloc(struct conv *c, size_t size)
{
	void *p = spt_arena_alloc(c->pc->arena, size ? size : 1);
	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

static struct ast *node(struct conv *c, TSNode n, enum ast_kind k, uint32_t nargs)
{
	struct ast *a = alloc(c, sizeof(*a));
	if (!a)
		return NULL;
	a->kind = k;
	a->pos = pos_of(c, n);
	a->n = nargs;
	a->a = alloc(c, (nargs ? nargs : 1) * sizeof(*a->a));
	return a->a ? a : NULL;
}

static TSNode field(TSNode n, const char *name) { return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name)); }

static bool skipped(const char *t, const char *const *skip)
{
	if (!strcmp(t, "comment") || !strcmp(t, "block_comment"))
		return true;
	for (const char *const *s = skip; s && *s; s++)
		if (!strcmp(t, *s))
			return true;
	return false;
}

/* Named children, skipping comments and punctuation-like named nodes in skip (NULL-terminated),
 * into an array of the parse arena: as many as there are (*out NULL only when out of memory). */
static uint32_t kids(struct conv *c, TSNode n, TSNode **out, const char *const *skip)
{
	uint32_t k = 0, total = ts_node_named_child_count(n);
	*out = spt_arena_alloc(c->pc->arena, (total ? total : 1) * sizeof(**out));
	if (!*out) {
		fail(c, n, "out of memory");
		return 0;
	}
	/* A cursor walks the children in O(n) (ts_node_named_child(n, i) is O(i)). */
	TSTreeCursor cur = ts_tree_cursor_new(n);
	for (bool more = ts_tree_cursor_goto_first_child(&cur); more; more = ts_tree_cursor_goto_next_sibling(&cur)) {
		TSNode ch = ts_tree_cursor_current_node(&cur);
		if (ts_node_is_named(ch) && !skipped(type(ch), skip) && k < total)
			(*out)[k++] = ch;
	}
	ts_tree_cursor_delete(&cur);
	return k;
}

static struct ast *expr(struct conv *c, TSNode n);

/* ---- operator symbols ---- */

/* The name the evaluator knows an operator symbol node by. */
static const char *op_name(TSNode sym)
{
	static const struct {
		const char *node, *name;
	} map[] = {
		{ "plus", "+" },	 { "minus", "-" },	  { "mul", "*" },	   { "div", "\\div" },
		{ "mod", "%" },		 { "pow", "^" },	  { "lt", "<" },	   { "gt", ">" },
		{ "leq", "<=" },	 { "geq", ">=" },	  { "eq", "=" },	   { "neq", "#" },
		{ "in", "\\in" },	 { "notin", "\\notin" }, { "cup", "\\cup" },	   { "cap", "\\cap" },
		{ "setminus", "\\" },	 { "subseteq", "\\subseteq" }, { "dots_2", ".." }, { "times", "\\X" },
		{ "circ", "\\o" },	 { "map_to", ":>" },	  { "compose", "@@" },	   { "land", "/\\" },
		{ "lor", "\\/" },	 { "implies", "=>" },	  { "equiv", "<=>" },	   { "iff", "<=>" },
		{ "lnot", "~" },	 { "negative", "-." },	  { "powerset", "SUBSET" }, { "union", "UNION" },
		{ "domain", "DOMAIN" }, { "subset", "\\subset" }, { "supseteq", "\\supseteq" },
		{ "supset", "\\supset" }, { "ll", "\\ll" },	  { "gg", "\\gg" },	   { "slash", "/" },
		{ "vert", "|" },	 { "amp", "&" },	  { "doteq", "\\doteq" }, { "plusplus", "++" },
		{ "minusminus", "--" }, { "dots_3", "..." },	  { "mulmul", "**" },	   { "slashslash", "//" },
		{ "circ", "\\o" },	 { "oplus", "(+)" },	  { "ominus", "(-)" },	   { "prec", "\\prec" },
		{ "preceq", "\\preceq" }, { "succ", "\\succ" },	  { "succeq", "\\succeq" }, { "sqcup", "\\sqcup" },
		{ "sqcap", "\\sqcap" }, { "sqsubseteq", "\\sqsubseteq" }, { "uplus", "\\uplus" },	  { "modmod", "%%" },	   { "hashhash", "##" },
		{ "ampamp", "&&" },	 { "vertvert", "||" },	  { "powpow", "^^" },	   { "asterisk", "*" },
	};
	const char *t = ts_node_type(sym);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].node, t))
			return map[i].name;
	return NULL;
}

/* ---- bounds ---- */

static const char *const ANGLES[] = { "langle_bracket", "rangle_bracket", NULL };

static bool names_of(struct conv *c, TSNode ids_node, struct bound *b)
{
	TSNode *ids;
	uint32_t ni = kids(c, ids_node, &ids, ANGLES);
	b->n_names = ni;
	b->names = alloc(c, (ni ? ni : 1) * sizeof(*b->names));
	b->slots = alloc(c, (ni ? ni : 1) * sizeof(*b->slots));
	for (uint32_t i = 0; b->names && i < ni; i++)
		b->names[i] = text(c, ids[i]);
	return ids && b->names && b->slots;
}

/* quantifier_bound: x, y \in S or <<x, y>> \in S; an unbounded one (\E x : P) has no set. */
static bool bound(struct conv *c, TSNode qb, struct bound *b)
{
	TSNode set = field(qb, "set");
	TSNode *ch;
	uint32_t total = kids(c, qb, &ch, NULL), nk = 0;
	if (!ch)
		return false;
	for (uint32_t i = 0; i < total; i++)
		if ((is(ch[i], "identifier") || is(ch[i], "tuple_of_identifiers")) && !ts_node_eq(ch[i], set))
			ch[nk++] = ch[i];
	if (nk == 1 && is(ch[0], "tuple_of_identifiers")) {
		b->tuple = true;
		if (!names_of(c, ch[0], b))
			return false;
	} else {
		b->tuple = false;
		b->n_names = nk;
		b->names = alloc(c, (nk ? nk : 1) * sizeof(*b->names));
		b->slots = alloc(c, (nk ? nk : 1) * sizeof(*b->slots));
		if (!b->names || !b->slots)
			return false;
		for (uint32_t i = 0; i < nk; i++) {
			if (!is(ch[i], "identifier")) {
				fail(c, ch[i], "a tuple of identifiers must be the only one in its bound");
				return false;
			}
			b->names[i] = text(c, ch[i]);
		}
	}
	if (ts_node_is_null(set)) {
		b->set = NULL;
		return true;
	}
	b->set = expr(c, set);
	return b->set != NULL;
}

/* Every quantifier_bound child of n into a->bounds. */
static bool bounds(struct conv *c, TSNode n, struct ast *a, const char *bound_type)
{
	TSNode *ch;
	uint32_t total = kids(c, n, &ch, NULL), k = 0;
	if (!ch)
		return false;
	for (uint32_t i = 0; i < total; i++)
		if (is(ch[i], bound_type))
			ch[k++] = ch[i];
	a->n_bounds = k;
	a->bounds = alloc(c, (k ? k : 1) * sizeof(*a->bounds));
	if (!a->bounds)
		return false;
	for (uint32_t i = 0; i < k; i++)
		if (!bound(c, ch[i], &a->bounds[i]))
			return false;
	return true;
}

/* ---- expressions ---- */

static struct ast *list(struct conv *c, TSNode n, enum ast_kind k, const char *const *skip)
{
	TSNode *ks;
	uint32_t nk = kids(c, n, &ks, skip);
	struct ast *a = ks ? node(c, n, k, nk) : NULL;
	for (uint32_t i = 0; a && i < nk; i++)
		if (!(a->a[i] = expr(c, ks[i])))
			return NULL;
	return a;
}

/* The expression inside a conj_item / disj_item, skipping its bullet. */
static struct ast *junction(struct conv *c, TSNode n, enum ast_kind k)
{
	TSNode *items;
	uint32_t ni = kids(c, n, &items, NULL);
	struct ast *a = items ? node(c, n, k, ni) : NULL;
	static const char *const bullets[] = { "bullet_conj", "bullet_disj", NULL };
	for (uint32_t i = 0; a && i < ni; i++) {
		TSNode *e;
		uint32_t ne = kids(c, items[i], &e, bullets);
		if (!e)
			return NULL;
		if (ne != 1)
			return fail(c, items[i], "malformed junction item");
		if (!(a->a[i] = expr(c, e[0])))
			return NULL;
	}
	return a;
}

static struct ast *name_app(struct conv *c, TSNode at, const char *name, TSNode *args, uint32_t n)
{
	struct ast *a = node(c, at, A_NAME, n);
	if (!a)
		return NULL;
	a->name = name;
	for (uint32_t i = 0; i < n; i++)
		if (!(a->a[i] = expr(c, args[i])))
			return NULL;
	return a;
}

/* A construct that is an error only if evaluated (see A_UNSUPPORTED); its operands are kept
 * (temporal formulas are read by the model checker: tk says which). */
static struct ast *unsupported_with(struct conv *c, TSNode n, const char *what, enum temporal tk, TSNode *ops, uint32_t nops)
{
	struct ast *a = node(c, n, A_UNSUPPORTED, nops);
	if (!a)
		return NULL;
	a->num = tk;
	for (uint32_t i = 0; i < nops; i++)
		if (!(a->a[i] = expr(c, ops[i])))
			return NULL;
	char msg[256];
	uint32_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
	snprintf(msg, sizeof(msg), "%s is not supported in evaluated expressions (at \"%.*s\"): spectap checks steps, "
		 "not temporal formulas", what, (int)(len > 60 ? 60 : len), c->src + ts_node_start_byte(n));
	a->name = parse_intern(c->pc, msg, strlen(msg));
	return a;
}

static struct ast *unsupported(struct conv *c, TSNode n, const char *what)
{
	return unsupported_with(c, n, what, T_OTHER, NULL, 0);
}

static struct ast *infix(struct conv *c, TSNode n)
{
	TSNode sym = field(n, "symbol"), lhs = field(n, "lhs"), rhs = field(n, "rhs");
	const char *op = op_name(sym);
	if (!op && (is(sym, "leads_to") || is(sym, "plus_arrow"))) {
		TSNode ops[2] = { lhs, rhs };
		return is(sym, "leads_to") ? unsupported_with(c, n, "the temporal operator ~> (leads to)", T_LEADSTO, ops, 2)
					   : unsupported_with(c, n, "the temporal operator -+->", T_OTHER, ops, 2);
	}
	if (!op && is(sym, "cdot")) {
		struct ast *a = node(c, n, A_CDOT, 2);
		if (a && (!(a->a[0] = expr(c, lhs)) || !(a->a[1] = expr(c, rhs))))
			return NULL;
		return a;
	}
	if (!op)
		return fail(c, sym, "the infix operator %s is not supported", type(sym));
	if (!strcmp(op, "/\\") || !strcmp(op, "\\/")) {
		struct ast *a = node(c, n, op[0] == '/' ? A_AND : A_OR, 2);
		if (a && (!(a->a[0] = expr(c, lhs)) || !(a->a[1] = expr(c, rhs))))
			return NULL;
		return a;
	}
	if (!strcmp(op, "\\X")) {
		/* A \X B \X C is a set of triples: flatten unparenthesized chains. */
		uint32_t np = 1;
		for (TSNode cur = n; is(cur, "bound_infix_op") && is(field(cur, "symbol"), "times"); cur = field(cur, "lhs"))
			np++;
		TSNode *parts = alloc(c, np * sizeof(*parts));
		if (!parts)
			return NULL;
		TSNode cur = n;
		for (uint32_t i = np - 1; i > 0; i--) {
			parts[i] = field(cur, "rhs");
			cur = field(cur, "lhs");
		}
		parts[0] = cur;
		return name_app(c, n, parse_intern(c->pc, "\\X", 2), parts, np);
	}
	TSNode args[2] = { lhs, rhs };
	return name_app(c, n, parse_intern(c->pc, op, strlen(op)), args, 2);
}

static struct ast *prefix(struct conv *c, TSNode n)
{
	TSNode sym = field(n, "symbol"), rhs = field(n, "rhs");
	if (is(sym, "unchanged")) {
		struct ast *a = node(c, n, A_UNCHANGED, 1);
		return a && (a->a[0] = expr(c, rhs)) ? a : NULL;
	}
	if (is(sym, "always") || is(sym, "eventually")) {
		TSNode ops[1] = { rhs };
		return is(sym, "always") ? unsupported_with(c, n, "the temporal operator [] (always)", T_ALWAYS, ops, 1)
					 : unsupported_with(c, n, "the temporal operator <> (eventually)", T_EVENTUALLY, ops, 1);
	}
	if (is(sym, "enabled")) {
		TSNode ops[1] = { rhs };
		return unsupported_with(c, n, "ENABLED", T_ENABLED, ops, 1);
	}
	const char *op = op_name(sym);
	if (!op)
		return fail(c, sym, "the prefix operator %s is not supported", type(sym));
	TSNode args[1] = { rhs };
	return name_app(c, n, parse_intern(c->pc, op, strlen(op)), args, 1);
}

static struct ast *number(struct conv *c, TSNode n)
{
	const char *t = text(c, n);
	int base = 10;
	const char *digits = t;
	if (is(n, "binary_number") || is(n, "octal_number") || is(n, "hex_number")) {
		base = is(n, "binary_number") ? 2 : is(n, "octal_number") ? 8 : 16;
		digits = t + 2; /* \b, \o, \h */
	}
	int64_t v = 0;
	for (const char *p = digits; *p; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 32) >= 'a' && (*p | 32) <= 'f' ? (*p | 32) - 'a' + 10 : 99;
		if (d >= base)
			return fail(c, n, "malformed number %s", t);
		if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v))
			return fail(c, n, "the number %s does not fit in 64 bits", t);
	}
	struct ast *a = node(c, n, A_NUM, 0);
	if (a)
		a->num = v;
	return a;
}

static struct ast *string(struct conv *c, TSNode n)
{
	uint32_t s = ts_node_start_byte(n) + 1, e = ts_node_end_byte(n) - 1;
	char *buf = malloc(e - s + 1);
	if (!buf)
		return fail(c, n, "out of memory");
	size_t k = 0;
	for (uint32_t i = s; i < e; i++) {
		char ch = c->src[i];
		if (ch == '\\' && i + 1 < e) {
			char x = c->src[++i];
			ch = x == 'n' ? '\n' : x == 't' ? '\t' : x == 'r' ? '\r' : x == 'f' ? '\f' : x;
		}
		buf[k++] = ch;
	}
	struct ast *a = node(c, n, A_STR, 0);
	if (a && !(a->str = spt_str(c->pc->arena, buf, k)))
		a = NULL;
	free(buf);
	return a;
}

static bool except_step(struct conv *c, TSNode stn, struct except_step *st)
{
	TSNode *ks;
	uint32_t nk = kids(c, stn, &ks, NULL);
	if (!ks)
		return false;
	if (is(stn, "except_update_record_field")) {
		if (nk != 1) {
			fail(c, stn, "malformed EXCEPT field");
			return false;
		}
		st->field = true;
		st->name = text(c, ks[0]);
		return true;
	}
	if (!is(stn, "except_update_fn_appl")) {
		fail(c, stn, "unsupported EXCEPT path step %s", type(stn));
		return false;
	}
	st->n_args = nk;
	st->args = alloc(c, (nk ? nk : 1) * sizeof(*st->args));
	for (uint32_t k = 0; st->args && k < nk; k++)
		if (!(st->args[k] = expr(c, ks[k])))
			return false;
	return st->args != NULL;
}

static struct ast *except(struct conv *c, TSNode n)
{
	TSNode *upd;
	uint32_t total = kids(c, n, &upd, NULL), nu = 0;
	if (!upd)
		return NULL;
	for (uint32_t i = 0; i < total; i++)
		if (is(upd[i], "except_update"))
			upd[nu++] = upd[i];
	struct ast *a = node(c, n, A_EXCEPT, 1);
	if (!a || !(a->a[0] = expr(c, field(n, "expr_to_update"))))
		return NULL;
	a->n_excepts = nu;
	a->excepts = alloc(c, (nu ? nu : 1) * sizeof(*a->excepts));
	if (!a->excepts)
		return NULL;
	for (uint32_t i = 0; i < nu; i++) {
		/* The update_specifier field also names the '!' token: take the named node. */
		TSNode *uk, spec = { 0 };
		uint32_t nuk = kids(c, upd[i], &uk, NULL);
		for (uint32_t j = 0; uk && j < nuk; j++)
			if (is(uk[j], "except_update_specifier"))
				spec = uk[j];
		if (ts_node_is_null(spec))
			return fail(c, upd[i], "malformed EXCEPT update");
		TSNode *steps;
		uint32_t ns = kids(c, spec, &steps, NULL);
		struct except_upd *u = &a->excepts[i];
		u->n_steps = ns;
		u->steps = alloc(c, (ns ? ns : 1) * sizeof(*u->steps));
		if (!steps || !u->steps)
			return NULL;
		for (uint32_t j = 0; j < ns; j++)
			if (!except_step(c, steps[j], &u->steps[j]))
				return NULL;
		if (!(u->value = expr(c, field(upd[i], "new_val"))))
			return NULL;
	}
	return a;
}

static struct ast *record(struct conv *c, TSNode n, enum ast_kind k)
{
	TSNode *ks;
	uint32_t nk = kids(c, n, &ks, (const char *const[]){ "all_map_to", NULL });
	if (!ks)
		return NULL;
	if (nk % 2)
		return fail(c, n, "malformed record");
	struct ast *a = node(c, n, k, nk / 2);
	if (!a || !(a->fields = alloc(c, (nk / 2 + 1) * sizeof(*a->fields))))
		return NULL;
	for (uint32_t i = 0; i < nk / 2; i++) {
		a->fields[i] = text(c, ks[2 * i]);
		if (!(a->a[i] = expr(c, ks[2 * i + 1])))
			return NULL;
	}
	return a;
}

static struct ast *let_in(struct conv *c, TSNode n)
{
	TSNode *ch;
	uint32_t total = kids(c, n, &ch, NULL), nd = 0;
	if (!ch)
		return NULL;
	TSNode body = field(n, "expression");
	for (uint32_t i = 0; i < total; i++)
		if (is(ch[i], "operator_definition") || is(ch[i], "function_definition") || is(ch[i], "module_definition"))
			ch[nd++] = ch[i];
	struct ast *a = node(c, n, A_LET, 1);
	if (!a || !(a->defs = alloc(c, (nd + 1) * sizeof(*a->defs))) || !(a->def_slots = alloc(c, (nd + 1) * sizeof(*a->def_slots))))
		return NULL;
	for (uint32_t i = 0; i < nd; i++) {
		if (is(ch[i], "module_definition"))
			continue; /* LET I == INSTANCE M: loaded as a module-level instance (module.c) */
		/* RECURSIVE declarations are not needed: LET definitions may refer to themselves. */
		struct opdef *d = parse_definition(c->pc, c->src, c->file, ch[i], c->err);
		if (!d) {
			c->failed = true;
			return NULL;
		}
		d->nested = true;
		a->defs[a->n_defs++] = d;
	}
	return (a->a[0] = expr(c, body)) ? a : NULL;
}

static struct ast *quant(struct conv *c, TSNode n, bool bounded)
{
	TSNode q = field(n, "quantifier");
	struct ast *a = node(c, n, is(q, "exists") ? A_EXISTS : A_FORALL, 1);
	if (!a)
		return NULL;
	if (bounded) {
		if (!bounds(c, n, a, "quantifier_bound"))
			return NULL;
	} else {
		/* \E x, y : P: one unbounded bound of its names (an error if evaluated). */
		TSNode *ch;
		uint32_t total = kids(c, n, &ch, NULL), k = 0;
		TSNode e = field(n, "expression");
		if (!ch)
			return NULL;
		for (uint32_t i = 0; i < total; i++)
			if (is(ch[i], "identifier") && !ts_node_eq(ch[i], e))
				ch[k++] = ch[i];
		a->n_bounds = 1;
		if (!(a->bounds = alloc(c, sizeof(*a->bounds))))
			return NULL;
		struct bound *b = &a->bounds[0];
		b->n_names = k;
		b->names = alloc(c, (k ? k : 1) * sizeof(*b->names));
		b->slots = alloc(c, (k ? k : 1) * sizeof(*b->slots));
		if (!b->names || !b->slots)
			return NULL;
		for (uint32_t i = 0; i < k; i++)
			b->names[i] = text(c, ch[i]);
	}
	return (a->a[0] = expr(c, field(n, "expression"))) ? a : NULL;
}

static struct ast *choose(struct conv *c, TSNode n)
{
	TSNode set = field(n, "set"), intro = field(n, "intro");
	struct ast *a = node(c, n, A_CHOOSE, 1);
	if (!a || !(a->bounds = alloc(c, sizeof(*a->bounds))))
		return NULL;
	a->n_bounds = 1;
	struct bound *b = &a->bounds[0];
	if (is(intro, "tuple_of_identifiers")) {
		b->tuple = true;
		if (!names_of(c, intro, b))
			return NULL;
	} else {
		b->n_names = 1;
		if (!(b->names = alloc(c, sizeof(*b->names))) || !(b->slots = alloc(c, sizeof(*b->slots))))
			return NULL;
		b->names[0] = text(c, intro);
	}
	/* CHOOSE x : P (no set) is accepted: an error only if evaluated (a cfg may override the
	 * definition it is in, as TLC users do for "none" values). */
	if (!ts_node_is_null(set) && !(b->set = expr(c, set)))
		return NULL;
	return (a->a[0] = expr(c, field(n, "expression"))) ? a : NULL;
}

static struct ast *case_expr(struct conv *c, TSNode n)
{
	TSNode *arms;
	uint32_t na = kids(c, n, &arms, (const char *const[]){ "case_box", NULL });
	if (!arms)
		return NULL;
	bool other = na && is(arms[na - 1], "other_arm");
	uint32_t nops = (na - other) * 2 + other;
	struct ast *a = node(c, n, A_CASE, nops);
	if (!a)
		return NULL;
	a->has_other = other;
	for (uint32_t i = 0; i < na; i++) {
		TSNode *e;
		uint32_t ne = kids(c, arms[i], &e, (const char *const[]){ "case_arrow", NULL });
		if (!e)
			return NULL;
		if (is(arms[i], "other_arm")) {
			if (ne != 1 || !(a->a[nops - 1] = expr(c, e[0])))
				return c->failed ? NULL : fail(c, arms[i], "malformed OTHER arm");
		} else {
			if (ne != 2 || !(a->a[2 * i] = expr(c, e[0])) || !(a->a[2 * i + 1] = expr(c, e[1])))
				return c->failed ? NULL : fail(c, arms[i], "malformed CASE arm");
		}
	}
	return a;
}

static struct ast *bound_op(struct conv *c, TSNode n)
{
	TSNode name = field(n, "name");
	TSNode *args;
	uint32_t total = kids(c, n, &args, NULL), na = 0;
	if (!args)
		return NULL;
	for (uint32_t i = 0; i < total; i++)
		if (!ts_node_eq(args[i], name))
			args[na++] = args[i];
	return name_app(c, n, text(c, name), args, na);
}

static struct ast *lambda(struct conv *c, TSNode n)
{
	TSNode *ks;
	uint32_t nk = kids(c, n, &ks, NULL);
	if (!ks)
		return NULL;
	if (nk < 2)
		return fail(c, n, "malformed LAMBDA");
	struct ast *a = node(c, n, A_LAMBDA, 0);
	struct opdef *d = alloc(c, sizeof(*d));
	if (!a || !d || !(d->params = alloc(c, nk * sizeof(*d->params))) ||
	    !(d->param_arity = alloc(c, nk * sizeof(*d->param_arity))))
		return NULL;
	d->name = parse_intern(c->pc, "LAMBDA", 6);
	d->pos = a->pos;
	d->module = c->pc->module;
	d->nested = true;
	d->n_params = nk - 1;
	for (uint32_t i = 0; i + 1 < nk; i++)
		d->params[i] = text(c, ks[i]);
	a->lambda = d;
	return (d->body = expr(c, ks[nk - 1])) ? a : NULL;
}

/* +(a, b), -(a), a^+ written as an application of the operator's symbol (after I!). */
static struct ast *nonfix_op(struct conv *c, TSNode n)
{
	TSNode symf = field(n, "symbol");
	TSNode sym = ts_node_named_child_count(symf) ? ts_node_named_child(symf, 0) : ts_node_child(symf, 0);
	const char *op = op_name(sym);
	if (!op)
		return fail(c, n, "the operator symbol %s is not supported", type(sym));
	TSNode *args;
	uint32_t total = kids(c, n, &args, NULL), na = 0;
	if (!args)
		return NULL;
	for (uint32_t i = 0; i < total; i++)
		if (!ts_node_eq(args[i], symf))
			args[na++] = args[i];
	return name_app(c, n, parse_intern(c->pc, op, strlen(op)), args, na);
}

static struct ast *prefixed(struct conv *c, TSNode n)
{
	/* Inst!Op(args): the instance name, then the operator applied in it. */
	TSNode pre = field(n, "prefix"), op = field(n, "op");
	TSNode *comps, *id;
	uint32_t nc = kids(c, pre, &comps, NULL);
	if (!comps)
		return NULL;
	/* A!B!Op: instances of instances (each a name: Inv!2, Op!:, ... are subexpressions). A
	 * parameterized instance's component P(a, b) is written "P(2)" in the path, its arguments
	 * going before Op's (resolve.c takes them in path order). */
	char path[1024];
	size_t used = 0;
	struct ast *iargs[64];
	uint32_t n_iargs = 0;
	for (uint32_t i = 0; i < nc; i++) {
		if (!is(comps[i], "subexpr_component"))
			return fail(c, n, "subexpression references (Op!1, Op!:, Op!<<) are not supported; only Instance!Operator");
		uint32_t nid = kids(c, comps[i], &id, NULL);
		struct ast *app = nid == 1 && is(id[0], "bound_op") ? bound_op(c, id[0]) : NULL;
		if (!app && (nid != 1 || !is(id[0], "identifier_ref")))
			return c->failed ? NULL
					 : fail(c, n, "subexpression references (Op!1, Op!:, Op!<<) are not supported; only Instance!Operator");
		if (app && n_iargs + app->n > 64)
			return fail(c, n, "more than 64 instance arguments");
		for (uint32_t k = 0; app && k < app->n; k++)
			iargs[n_iargs++] = app->a[k];
		const char *iname = app ? app->name : text(c, id[0]);
		int w = app ? snprintf(path + used, sizeof(path) - used, "%s%s(%u)", used ? "!" : "", iname, app->n)
			    : snprintf(path + used, sizeof(path) - used, "%s%s", used ? "!" : "", iname);
		if (w < 0 || (size_t)w >= sizeof(path) - used)
			return fail(c, n, "the instance path is too long");
		used += (size_t)w;
	}
	if (!nc)
		return fail(c, n, "only Instance!Operator references are supported");
	struct ast *inner = is(op, "bound_op")         ? bound_op(c, op)
			    : is(op, "identifier_ref") ? name_app(c, op, text(c, op), NULL, 0)
			    : is(op, "nat_number_set") || is(op, "int_number_set") || is(op, "real_number_set")
				    ? expr(c, op) /* N!Nat */
			    : is(op, "bound_nonfix_op") ? nonfix_op(c, op) /* N!+(a, b) */
						       : fail(c, op, "unsupported reference after !");
	if (!inner)
		return NULL;
	if (n_iargs) {
		struct ast **all = alloc(c, (n_iargs + inner->n) * sizeof(*all));
		if (!all)
			return NULL;
		memcpy(all, iargs, n_iargs * sizeof(*all));
		for (uint32_t k = 0; k < inner->n; k++)
			all[n_iargs + k] = inner->a[k];
		inner->a = all;
		inner->n += n_iargs;
		inner->pos = pos_of(c, n);
	}
	/* Encoded as the name "Inst!Op" ("A!B!Op" through instances of instances). */
	const char *iname = path;
	size_t len = strlen(iname) + strlen(inner->name) + 2;
	char *buf = malloc(len);
	if (!buf)
		return fail(c, n, "out of memory");
	snprintf(buf, len, "%s!%s", iname, inner->name);
	inner->name = parse_intern(c->pc, buf, strlen(buf));
	free(buf);
	return inner;
}

/* Op!2!1, M!Op!3: a definition's k-th conjunct or disjunct (and so on), as the name
 * "Op!2!1" the resolver reads. Other navigations (Op!:, Op!<<, Op!@) are not supported. */
static struct ast *subexpression(struct conv *c, TSNode n)
{
	char path[1024];
	size_t used = 0;
	/* The pieces: the prefix's components and navigations, then the last navigation. */
	TSNode pieces[64];
	uint32_t np = 0, nk = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < nk; i++) {
		TSNode part = ts_node_named_child(n, i);
		uint32_t pk = is(part, "subexpr_prefix") ? ts_node_named_child_count(part) : 1;
		if (np + pk > 64)
			return fail(c, n, "a subexpression reference of more than 64 parts is not supported");
		for (uint32_t j = 0; j < pk; j++)
			pieces[np++] = pk == 1 && !is(part, "subexpr_prefix") ? part : ts_node_named_child(part, j);
	}
	for (uint32_t i = 0; i < np; i++) {
		TSNode x = pieces[i];
		const char *piece = NULL;
		if (is(x, "subexpr_tree_nav") && ts_node_named_child_count(x) == 1)
			x = ts_node_named_child(x, 0);
		if (is(x, "subexpr_component") && ts_node_named_child_count(x) == 1 &&
		    is(ts_node_named_child(x, 0), "identifier_ref"))
			piece = text(c, ts_node_named_child(x, 0));
		else if (is(x, "child_id"))
			piece = text(c, x);
		else if (is(x, "colon"))
			piece = ":"; /* a named theorem's statement (T!:) */
		else if (is(x, "comment") || is(x, "block_comment"))
			continue;
		if (!piece)
			return fail(c, n, "this subexpression reference (Op!<<, Op!@, Op!(x), ...) is not supported; "
					  "Op!k (the k-th conjunct or disjunct) and T!: are");
		int w = snprintf(path + used, sizeof(path) - used, "%s%s", used ? "!" : "", piece);
		if (w < 0 || (size_t)w >= sizeof(path) - used)
			return fail(c, n, "the subexpression reference is too long");
		used += (size_t)w;
	}
	if (!used)
		return fail(c, n, "malformed subexpression reference");
	return name_app(c, n, parse_intern(c->pc, path, used), NULL, 0);
}

static struct ast *expr_node(struct conv *c, TSNode n);

static struct ast *expr(struct conv *c, TSNode n)
{
	if (c->failed || ts_node_is_null(n))
		return NULL;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (!c->stack_top)
		c->stack_top = here;
	if (c->stack_top > here && c->stack_top - here > stack_budget())
		return fail(c, n, "the expression is nested too deeply to read (more than the stack allows)");
	struct ast *a = expr_node(c, n);
	if (c->stack_top == here)
		c->stack_top = 0;
	return a;
}

static struct ast *expr_node(struct conv *c, TSNode n)
{
	const char *t = type(n);
	if (ts_node_is_missing(n) || !strcmp(t, "ERROR"))
		return fail(c, n, "syntax error");
	if (!strcmp(t, "identifier_ref") || !strcmp(t, "identifier"))
		return name_app(c, n, text(c, n), NULL, 0);
	if (!strcmp(t, "subexpression"))
		return subexpression(c, n);
	if (!strcmp(t, "infix_op_symbol") || !strcmp(t, "prefix_op_symbol") || !strcmp(t, "postfix_op_symbol")) {
		/* An operator passed by its symbol: FoldSet(+, 0, S), SortSeq(s, <). */
		TSNode sym = ts_node_named_child_count(n) ? ts_node_named_child(n, 0) : ts_node_child(n, 0);
		const char *op = op_name(sym);
		if (!op)
			return fail(c, n, "the operator symbol %s is not supported", type(sym));
		return name_app(c, n, parse_intern(c->pc, op, strlen(op)), NULL, 0);
	}
	if (!strcmp(t, "nat_number") || !strcmp(t, "binary_number") || !strcmp(t, "octal_number") ||
	    !strcmp(t, "hex_number"))
		return number(c, n);
	if (!strcmp(t, "real_number"))
		return fail(c, n, "real numbers are not supported");
	if (!strcmp(t, "string"))
		return string(c, n);
	if (!strcmp(t, "boolean")) {
		struct ast *a = node(c, n, A_BOOL, 0);
		if (a)
			a->num = !strcmp(text(c, n), "TRUE");
		return a;
	}
	static const struct {
		const char *node, *name;
	} sets[] = { { "nat_number_set", "Nat" },   { "int_number_set", "Int" },
		     { "real_number_set", "Real" }, { "boolean_set", "BOOLEAN" },
		     { "string_set", "STRING" } };
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (!strcmp(t, sets[i].node))
			return name_app(c, n, parse_intern(c->pc, sets[i].name, strlen(sets[i].name)), NULL, 0);
	if (!strcmp(t, "parentheses")) {
		TSNode *e;
		uint32_t ne = kids(c, n, &e, NULL);
		return !e ? NULL : ne == 1 ? expr(c, e[0]) : fail(c, n, "malformed parentheses");
	}
	if (!strcmp(t, "bound_infix_op"))
		return infix(c, n);
	if (!strcmp(t, "bound_prefix_op"))
		return prefix(c, n);
	if (!strcmp(t, "bound_postfix_op")) {
		TSNode sym = field(n, "symbol");
		if (!is(sym, "prime"))
			return fail(c, sym, "the postfix operator %s is not supported", type(sym));
		struct ast *a = node(c, n, A_PRIME, 1);
		return a && (a->a[0] = expr(c, field(n, "lhs"))) ? a : NULL;
	}
	if (!strcmp(t, "bound_op"))
		return bound_op(c, n);
	if (!strcmp(t, "conj_list"))
		return junction(c, n, A_AND);
	if (!strcmp(t, "disj_list"))
		return junction(c, n, A_OR);
	if (!strcmp(t, "if_then_else")) {
		struct ast *a = node(c, n, A_IF, 3);
		if (a && (!(a->a[0] = expr(c, field(n, "if"))) || !(a->a[1] = expr(c, field(n, "then"))) ||
			  !(a->a[2] = expr(c, field(n, "else")))))
			return NULL;
		return a;
	}
	if (!strcmp(t, "case"))
		return case_expr(c, n);
	if (!strcmp(t, "let_in"))
		return let_in(c, n);
	if (!strcmp(t, "choose"))
		return choose(c, n);
	if (!strcmp(t, "bounded_quantification"))
		return quant(c, n, true);
	if (!strcmp(t, "unbounded_quantification"))
		return quant(c, n, false);
	if (!strcmp(t, "finite_set_literal"))
		return list(c, n, A_SET, NULL);
	if (!strcmp(t, "tuple_literal"))
		return list(c, n, A_TUPLE, ANGLES);
	if (!strcmp(t, "set_filter")) {
		struct ast *a = node(c, n, A_FILTER, 1);
		if (!a || !bounds(c, n, a, "quantifier_bound"))
			return NULL;
		if (a->n_bounds != 1)
			return fail(c, n, "a set filter has one bound");
		return (a->a[0] = expr(c, field(n, "filter"))) ? a : NULL;
	}
	if (!strcmp(t, "set_map")) {
		struct ast *a = node(c, n, A_MAP, 1);
		if (!a || !bounds(c, n, a, "quantifier_bound"))
			return NULL;
		return (a->a[0] = expr(c, field(n, "map"))) ? a : NULL;
	}
	if (!strcmp(t, "function_literal")) {
		struct ast *a = node(c, n, A_FUNC, 1);
		if (!a || !bounds(c, n, a, "quantifier_bound"))
			return NULL;
		TSNode *ks;
		uint32_t nk = kids(c, n, &ks, (const char *const[]){ "quantifier_bound", "all_map_to", NULL });
		if (!ks)
			return NULL;
		return nk == 1 && (a->a[0] = expr(c, ks[0])) ? a : c->failed ? NULL : fail(c, n, "malformed function");
	}
	if (!strcmp(t, "set_of_functions"))
		return list(c, n, A_FUNCSET, (const char *const[]){ "maps_to", NULL });
	if (!strcmp(t, "record_literal"))
		return record(c, n, A_RECORD);
	if (!strcmp(t, "set_of_records"))
		return record(c, n, A_RECSET);
	if (!strcmp(t, "record_value")) {
		TSNode *ks;
		uint32_t nk = kids(c, n, &ks, NULL);
		if (!ks)
			return NULL;
		if (nk != 2)
			return fail(c, n, "malformed record field access");
		struct ast *a = node(c, n, A_FIELD, 1);
		if (!a || !(a->fields = alloc(c, sizeof(*a->fields))))
			return NULL;
		a->fields[0] = a->name = text(c, ks[1]);
		return (a->a[0] = expr(c, ks[0])) ? a : NULL;
	}
	if (!strcmp(t, "function_evaluation"))
		return list(c, n, A_APPLY, NULL);
	if (!strcmp(t, "except"))
		return except(c, n);
	if (!strcmp(t, "prev_func_val"))
		return node(c, n, A_AT, 0);
	if (!strcmp(t, "lambda"))
		return lambda(c, n);
	if (!strcmp(t, "prefixed_op"))
		return prefixed(c, n);
	if (!strcmp(t, "label"))
		return expr(c, field(n, "expression"));
	if (!strcmp(t, "step_expr_or_stutter") || !strcmp(t, "step_expr_no_stutter")) {
		struct ast *a = list(c, n, A_STUTTER, (const char *const[]){ "langle_bracket", "rangle_bracket_sub", NULL });
		if (a && a->n != 2)
			return fail(c, n, "malformed [A]_v");
		if (a)
			a->num = !strcmp(t, "step_expr_no_stutter");
		return a;
	}
	if (!strcmp(t, "fairness")) {
		/* WF_v(A), SF_v(A): the subscript and the action. */
		TSNode *ks;
		uint32_t nk = kids(c, n, &ks, NULL);
		if (!ks)
			return NULL;
		uint32_t a0 = ts_node_start_byte(n);
		bool strong = c->src[a0] == 'S';
		TSNode ops[2];
		uint32_t k = 0;
		for (uint32_t i = 0; i < nk && k < 2; i++)
			if (!is(ks[i], "WF") && !is(ks[i], "SF"))
				ops[k++] = ks[i];
		return unsupported_with(c, n, "fairness (WF_/SF_)", strong ? T_SF : T_WF, ops, k);
	}
	if (!strcmp(t, "temporal_forall") || !strcmp(t, "temporal_exists"))
		return unsupported(c, n, "temporal quantification (\\AA, \\EE)");
	return fail(c, n, "%s is not supported", t);
}

/* ---- definitions ---- */

struct opdef *parse_definition(struct parse_ctx *pc, const char *src, const char *file, TSNode n,
			       struct spec_error *err)
{
	struct conv cv = { pc, src, file, err, false, 0 }, *c = &cv;
	struct opdef *d = alloc(c, sizeof(*d));
	if (!d)
		return NULL;
	d->pos = pos_of(c, n);
	d->module = pc->module;
	TSNode name = field(n, "name");
	if (!ts_node_is_null(name) && !is(name, "identifier")) {
		/* Infix operator definitions (a ++ b == ...) are named by their symbol. */
		TSNode *sym;
		uint32_t ns = kids(c, name, &sym, NULL);
		const char *op = sym && ns == 1 ? op_name(sym[0]) : NULL;
		if (!op && !c->failed && (is(name, "real_number_set") || (ns == 1 && is(sym[0], "real_number_set"))))
			return fail(c, name, "defining Real (the set of module Reals) is not supported");
		if (!op)
			return c->failed ? NULL : fail(c, name, "this operator symbol cannot be defined here");
		d->name = parse_intern(pc, op, strlen(op));
	} else if (!ts_node_is_null(name)) {
		d->name = text(c, name);
	} else {
		return fail(c, n, "definition without a name");
	}
	TSNode *ps;
	uint32_t total = kids(c, n, &ps, NULL), np = 0;
	if (!ps)
		return NULL;
	TSNode def = field(n, "definition");
	for (uint32_t i = 0; i < total; i++) {
		if (ts_node_eq(ps[i], name) || ts_node_eq(ps[i], def))
			continue;
		if (is(ps[i], "identifier") || is(ps[i], "operator_declaration"))
			ps[np++] = ps[i];
	}
	if (is(n, "function_definition")) {
		struct ast tmp = { 0 };
		if (!bounds(c, n, &tmp, "quantifier_bound"))
			return NULL;
		for (uint32_t i = 0; i < tmp.n_bounds; i++)
			if (!tmp.bounds[i].set)
				return fail(c, n, "a function definition's bounds need sets (f[x \\in S] == ...)");
		d->fbounds = tmp.bounds;
		d->n_fbounds = tmp.n_bounds;
		np = 0;
	}
	d->n_params = np;
	d->params = alloc(c, (np + 1) * sizeof(*d->params));
	d->param_arity = alloc(c, (np + 1) * sizeof(*d->param_arity));
	if (!d->params || !d->param_arity)
		return NULL;
	for (uint32_t i = 0; i < np; i++) {
		if (is(ps[i], "operator_declaration")) {
			TSNode pn = field(ps[i], "name"), *holes;
			d->params[i] = text(c, pn);
			uint32_t nh = kids(c, ps[i], &holes, NULL);
			if (!holes)
				return NULL;
			d->param_arity[i] = nh - 1;
		} else {
			d->params[i] = text(c, ps[i]);
		}
	}
	if (!(d->body = expr(c, def)))
		return c->failed ? NULL : fail(c, n, "definition without a body");
	return d;
}

struct ast *parse_expression(struct parse_ctx *pc, const char *src, const char *file, TSNode n,
			     struct spec_error *err)
{
	struct conv cv = { pc, src, file, err, false, 0 };
	struct ast *a = expr(&cv, n);
	if (!a && !cv.failed)
		fail(&cv, n, "out of memory");
	return a;
}

/* The first ERROR or MISSING node under n, depth first. */
static bool first_error(TSNode n, TSNode *out)
{
	if (ts_node_is_missing(n) || !strcmp(ts_node_type(n), "ERROR")) {
		*out = n;
		return true;
	}
	if (!ts_node_has_error(n))
		return false;
	uint32_t total = ts_node_child_count(n);
	for (uint32_t i = 0; i < total; i++)
		if (first_error(ts_node_child(n, i), out))
			return true;
	*out = n;
	return true;
}

/* An ERROR node can wrap whole units that parsed fine before the fault (even the module
 * header): the fault is at the first child after the last complete unit. */
static TSNode narrow_error(TSNode bad)
{
	static const char *const units[] = { "variable_declaration", "constant_declaration", "operator_definition",
					     "function_definition", "extends", "module_definition", "instance",
					     "local_definition", "assumption", "theorem", "recursive_declaration", NULL };
	uint32_t n = ts_node_child_count(bad), after = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *t = ts_node_type(ts_node_child(bad, i));
		for (const char *const *u = units; *u; u++)
			if (!strcmp(t, *u))
				after = i + 1;
	}
	return after < n && after > 0 ? ts_node_child(bad, after) : bad;
}

/* A block comment never closed: TLA+'s comments nest, so a "(*" inside one (a "(*raft).Step"
 * in prose) opens another, and the parser can only say that the module is wrong from its first
 * line. 1 with where the comment left open starts and the first "(*" opened inside a comment,
 * else 0. Strings and line comments outside block comments are skipped. */
static int unclosed_comment(const char *src, uint32_t *line, uint32_t *col, uint32_t *nline, uint32_t *ncol)
{
	uint32_t l = 1, c = 1, depth = 0;
	bool nested = false;
	for (const char *p = src; *p; p++) {
		if (depth == 0 && p[0] == '"') { /* a string: to its closing quote */
			for (p++, c++; *p && *p != '"' && *p != '\n'; p++, c++)
				if (*p == '\\' && p[1] && p[1] != '\n')
					p++, c++;
			if (!*p)
				break;
		} else if (depth == 0 && p[0] == '\\' && p[1] == '*') { /* a line comment */
			while (p[1] && p[1] != '\n')
				p++, c++;
		} else if (p[0] == '(' && p[1] == '*') {
			if (depth == 0)
				*line = l, *col = c;
			else if (!nested)
				*nline = l, *ncol = c, nested = true;
			depth++;
			p++, c++;
		} else if (depth && p[0] == '*' && p[1] == ')') {
			depth--;
			p++, c++;
		}
		if (*p == '\n')
			l++, c = 0;
		c++;
	}
	if (!nested)
		*nline = *ncol = 0;
	return depth > 0;
}

int parse_syntax_error(const char *src, const char *file, TSNode root, struct spec_error *err)
{
	TSNode bad;
	if (!first_error(root, &bad))
		return 0;
	uint32_t line = 1, col = 1, nline = 0, ncol = 0;
	if (unclosed_comment(src, &line, &col, &nline, &ncol)) {
		err->pos = (struct src_pos){ file, line, col };
		if (nline)
			snprintf(err->msg, sizeof(err->msg), "syntax error: the comment opened here is never closed: comments "
				 "nest, and the \"(*\" at %u:%u opens another (write \"( *\" there, or close it)", nline, ncol);
		else
			snprintf(err->msg, sizeof(err->msg), "syntax error: the comment opened here is never closed");
		err->excerpt[0] = 0;
		return -EINVAL;
	}
	if (!ts_node_is_missing(bad))
		bad = narrow_error(bad);
	struct conv cv = { NULL, src, file, err, false, 0 };
	if (ts_node_is_missing(bad))
		fail(&cv, bad, "syntax error: missing %s", ts_node_type(bad));
	else
		fail(&cv, bad, "syntax error");
	/* Show the rest of the line where it starts, not just the first token. */
	const char *from = src + ts_node_start_byte(bad);
	size_t n = strcspn(from, "\n");
	snprintf(err->excerpt, sizeof(err->excerpt), "%.*s", (int)(n < sizeof(err->excerpt) - 1 ? n : sizeof(err->excerpt) - 1), from);
	return -EINVAL;
}

const TSLanguage *parse_language(void) { return tree_sitter_tlaplus(); }
