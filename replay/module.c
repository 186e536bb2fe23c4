/* Loading a spec: its modules, EXTENDS and INSTANCE, and one symbol table per module. */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "junction_check.h"
#include "parse.h"
#include "resolve.h"

/* Standard modules spectap implements natively, and those they extend. */
static const struct {
	const char *name, *also;
} std_modules[] = {
	{ "Naturals", NULL },	{ "Integers", "Naturals" }, { "Sequences", "Naturals" },
	{ "FiniteSets", "Naturals" }, { "TLC", "Sequences" }, { "SequencesExt", "Sequences" },
	{ "FiniteSetsExt", "FiniteSets" }, { "Functions", NULL }, { "Bags", NULL },
	{ "BagsExt", "Bags" }, { "Folds", NULL }, { "TLCExt", "TLC" }, { "Json", NULL },
	{ "IOUtils", NULL }, { "VectorClocks", "Naturals" }, { "Randomization", NULL }, { "UndirectedGraphs", NULL },
	{ "Bitwise", NULL }, { "SVG", NULL }, { "Relation", "FiniteSets" },
	/* Modules of theorems for TLAPS: nothing TLC evaluates (proofs are not read). */
	{ "TLAPS", NULL }, { "NaturalsInduction", NULL }, { "FiniteSetTheorems", NULL },
	{ "FunctionTheorems", NULL }, { "SequenceTheorems", NULL }, { "WellFoundedInduction", NULL },
	{ "SequencesExtTheorems", NULL }, { "FoldsTheorems", NULL }, { "BagsTheorems", NULL },
};

/* The standard modules of TLA+ and TLC themselves: never read from a file of the same name. The
 * others (CommunityModules) are read from the spec's directory when a copy is there, as TLC
 * does; the native operators stay visible beside the copy's definitions. */
static bool core_module(const char *name)
{
	static const char *const core[] = { "Naturals", "Integers", "Sequences", "FiniteSets", "TLC", "Bags",
					    "TLCExt", "Randomization", "TLAPS", NULL };
	for (const char *const *c = core; *c; c++)
		if (!strcmp(*c, name))
			return true;
	return false;
}

struct interner {
	const char **slots;
	uint32_t cap, n;
};

struct spec {
	struct spt_arena arena;
	struct interner names;
	struct module *root;
	struct module **mods; /* every loaded module, the root first */
	uint32_t n_mods, cap_mods;
	const char **vars, **consts;
	uint32_t *const_arity;
	uint32_t n_vars, n_consts, cap_vars, cap_consts;
	TSParser *parser;
	const char *alias;      /* EXTENDS alias reads alias_path (a mapping's "Spec") */
	char *alias_path;
	struct opdef **defs;    /* every definition (LET and LAMBDA ones too), by id (resolver) */
	uint32_t n_defs, cap_defs;
	void *resolved;         /* the resolver's own data (resolve.c) */
	/* Modules that follow another in its file (SANY reads them as if in files of their own). */
	struct embedded {
		const char *name, *path;
	} *embedded;
	uint32_t n_embedded;
	uint32_t n_ipar;        /* parameterized instances (I(x) == INSTANCE ...) */
};

/* ---- interning ---- */

static const char *intern(struct spt_arena *a, struct interner *t, const char *s, size_t len)
{
	if ((t->n + 1) * 2 > t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		const char **slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return NULL;
		for (uint32_t i = 0; i < t->cap; i++) {
			if (!t->slots[i])
				continue;
			uint32_t j = (uint32_t)spt_str_hash(t->slots[i], strlen(t->slots[i])) & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = slots;
		t->cap = cap;
	}
	uint32_t j = (uint32_t)spt_str_hash(s, len) & (t->cap - 1);
	while (t->slots[j]) {
		if (!strncmp(t->slots[j], s, len) && t->slots[j][len] == '\0')
			return t->slots[j];
		j = (j + 1) & (t->cap - 1);
	}
	char *c = spt_arena_strndup(a, s, len);
	if (!c)
		return NULL;
	t->slots[j] = c;
	t->n++;
	return c;
}

const char *parse_intern(struct parse_ctx *pc, const char *s, size_t len)
{
	return intern(pc->arena, pc->interner, s, len);
}

const char *spec_intern(struct spec *s, const char *name, size_t len)
{
	return intern(&s->arena, &s->names, name, len);
}

struct spt_arena *spec_arena(struct spec *s) { return &s->arena; }

uint32_t spec_n_ipar(struct spec *s) { return s->n_ipar; }

struct module *const *spec_modules(struct spec *s, uint32_t *n)
{
	*n = s->n_mods;
	return s->mods;
}

int spec_add_def(struct spec *s, struct opdef *d)
{
	if (s->n_defs == s->cap_defs) {
		uint32_t cap = s->cap_defs ? s->cap_defs * 2 : 256;
		struct opdef **n = realloc(s->defs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->defs = n;
		s->cap_defs = cap;
	}
	d->id = s->n_defs;
	s->defs[s->n_defs++] = d;
	return 0;
}

struct opdef *const *spec_defs(struct spec *s, uint32_t *n)
{
	*n = s->n_defs;
	return s->defs;
}

void **spec_resolver_data(struct spec *s) { return &s->resolved; }
struct module *spec_root(struct spec *s) { return s->root; }

const char *const *spec_variables(struct spec *s, uint32_t *n)
{
	*n = s->n_vars;
	return s->vars;
}

const char *const *spec_constants(struct spec *s, uint32_t **arity, uint32_t *n)
{
	*n = s->n_consts;
	*arity = s->const_arity;
	return s->consts;
}

/* ---- symbol tables ---- */

static uint32_t ptr_hash(const char *p) { return (uint32_t)(((uintptr_t)p >> 4) * 0x9e3779b1u); }

struct symbol *module_lookup(struct module *m, const char *name)
{
	if (!m->cap_syms)
		return NULL;
	uint32_t j = ptr_hash(name) & (m->cap_syms - 1);
	while (m->syms[j]) {
		if (m->syms[j]->name == name)
			return m->syms[j];
		j = (j + 1) & (m->cap_syms - 1);
	}
	return NULL;
}

/* Adds (or, for the same declaration seen twice through EXTENDS, keeps) a symbol. */
static int add_symbol(struct spec *s, struct module *m, const struct symbol *sym, struct spec_error *err,
		      struct src_pos pos)
{
	struct symbol *old = module_lookup(m, sym->name);
	if (old) {
		bool same = old->kind == sym->kind && old->def == sym->def && old->index == sym->index &&
			    old->inst == sym->inst;
		if (same)
			return 0;
		err->pos = pos;
		snprintf(err->msg, sizeof(err->msg), "%s is defined twice (multiply-defined symbol)", sym->name);
		err->excerpt[0] = '\0';
		return -EINVAL;
	}
	if ((m->n_syms + 1) * 2 > m->cap_syms) {
		uint32_t cap = m->cap_syms ? m->cap_syms * 2 : 64;
		struct symbol **t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (uint32_t i = 0; i < m->cap_syms; i++) {
			if (!m->syms[i])
				continue;
			uint32_t j = ptr_hash(m->syms[i]->name) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = m->syms[i];
		}
		free(m->syms);
		m->syms = t;
		m->cap_syms = cap;
	}
	struct symbol *c = spt_arena_memdup(&s->arena, sym, sizeof(*sym));
	if (!c)
		return -ENOMEM;
	uint32_t j = ptr_hash(c->name) & (m->cap_syms - 1);
	while (m->syms[j])
		j = (j + 1) & (m->cap_syms - 1);
	m->syms[j] = c;
	m->n_syms++;
	return 0;
}

static int push_name(const char ***arr, uint32_t **ar, uint32_t *n, uint32_t *cap, const char *name,
		     uint32_t arity)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 16;
		const char **a = realloc(*arr, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*arr = a;
		if (ar) {
			uint32_t *b = realloc(*ar, c * sizeof(*b));
			if (!b)
				return -ENOMEM;
			*ar = b;
		}
		*cap = c;
	}
	if (ar)
		(*ar)[*n] = arity;
	(*arr)[(*n)++] = name;
	return 0;
}

/* ---- loading ---- */

/* Modules are found beside the module that names them. */
static void sibling(char *out, size_t cap, const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(out, cap, "%.*s/%s.tla", (int)(slash - path), path, name);
	else
		snprintf(out, cap, "%s.tla", name);
}

static bool is_std(const char *name)
{
	for (size_t i = 0; i < sizeof(std_modules) / sizeof(std_modules[0]); i++)
		if (!strcmp(std_modules[i].name, name))
			return true;
	return false;
}

static int add_std(struct spec *s, struct module *m, const char *name)
{
	for (uint32_t i = 0; i < m->n_std; i++)
		if (m->std[i] == name)
			return 0;
	const char **n = realloc(m->std, (m->n_std + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	m->std = n;
	m->std[m->n_std++] = name;
	for (size_t i = 0; i < sizeof(std_modules) / sizeof(std_modules[0]); i++)
		if (!strcmp(std_modules[i].name, name) && std_modules[i].also)
			return add_std(s, m, spec_intern(s, std_modules[i].also, strlen(std_modules[i].also)));
	return 0;
}

static void set_err(struct spec_error *err, const char *file, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void set_err(struct spec_error *err, const char *file, uint32_t line, uint32_t col, const char *fmt, ...)
{
	err->pos = (struct src_pos){ file, line, col };
	err->excerpt[0] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fileno(f), &st) == 0 && (buf = malloc((size_t)st.st_size + 1))) {
		*len = fread(buf, 1, (size_t)st.st_size, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

static struct module *load_module(struct spec *s, const char *name, const char *path, bool root_closure,
				  int depth, struct spec_error *err);

/* Appends m to the spec's modules (which spec_free frees). */
static int push_module(struct spec *s, struct module *m)
{
	if (s->n_mods == s->cap_mods) {
		uint32_t cap = s->cap_mods ? s->cap_mods * 2 : 8;
		struct module **n = realloc(s->mods, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->mods = n;
		s->cap_mods = cap;
	}
	s->mods[s->n_mods++] = m;
	return 0;
}

/* A standard module instantiated (INSTANCE Sequences, S == INSTANCE Naturals): a module with no
 * definitions of its own whose native operators are visible. */
static struct module *std_module(struct spec *s, const char *name)
{
	struct module *m = spt_arena_alloc(&s->arena, sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->path = name;
	m->is_std = true;
	/* Kept with the others (spec_free frees its std list; the walks over modules skip it). */
	if (push_module(s, m))
		return NULL;
	if (add_std(s, m, name))
		return NULL;
	return m;
}

static int import_module(struct spec *s, struct module *into, struct module *from, struct spec_error *err,
			 struct src_pos pos)
{
	for (uint32_t i = 0; i < from->n_std; i++)
		if (add_std(s, into, from->std[i]))
			return -ENOMEM;
	for (uint32_t i = 0; i < from->cap_syms; i++) {
		struct symbol *sym = from->syms[i];
		if (!sym || (sym->def && sym->def->local))
			continue;
		int rc = add_symbol(s, into, sym, err, pos);
		if (rc)
			return rc;
	}
	return 0;
}

static TSNode named_field(TSNode n, const char *f) { return ts_node_child_by_field_name(n, f, (uint32_t)strlen(f)); }

/* The constants and variables of the modules an instantiated module extends are its own
 * parameters too: the instance substitutes them all (those copies belong to the instance). */
static void set_subst(struct module *mod, struct instance *in, int depth)
{
	if (mod->is_std || mod->subst || depth > 32)
		return;
	mod->subst = in;
	for (uint32_t i = 0; i < mod->n_ext; i++)
		set_subst(mod->ext[i], in, depth + 1);
}

/* I(x) == INSTANCE N: a parameter named as a constant or variable of N that WITH does not
 * substitute is substituted for it (the implicit x <- x, x being the parameter). */
static int add_param_substs(struct spec *s, struct instance *in, const char **params, uint32_t n_params,
			    struct src_pos pos)
{
	in->params = params;
	in->n_params = n_params;
	in->ipar = (uint16_t)++s->n_ipar;
	if (!(in->plevel = spt_arena_alloc(&s->arena, n_params)))
		return -ENOMEM;
	memset(in->plevel, 0, n_params);
	for (uint32_t i = 0; i < n_params; i++) {
		bool given = false;
		for (uint32_t j = 0; j < in->n && !given; j++)
			given = in->from[j] == params[i];
		struct symbol *sym = module_lookup(in->mod, params[i]);
		if (given || !sym || (sym->kind != SYM_CONST && sym->kind != SYM_VAR))
			continue;
		struct ast *name = spt_arena_alloc(&s->arena, sizeof(*name));
		if (!name)
			return -ENOMEM;
		memset(name, 0, sizeof(*name));
		name->kind = A_NAME;
		name->pos = pos;
		name->name = params[i];
		in->from[in->n] = params[i];
		in->to[in->n] = name;
		in->to_slots[in->n++] = 0;
	}
	return 0;
}

/* INSTANCE N WITH a <- e, ...: a copy of N whose constants and variables stand for expressions. */
static struct instance *load_instance(struct spec *s, struct parse_ctx *pc, struct module *m, const char *src,
				      TSNode inst, struct spec_error *err, int depth, const char **params, uint32_t n_params,
				      struct src_pos ppos)
{
	TSNode ks[256];
	uint32_t nk = 0, total = ts_node_named_child_count(inst);
	if (total > 256) { /* a limit said, never a substitution dropped */
		TSPoint p = ts_node_start_point(inst);
		set_err(err, m->path, p.row + 1, p.column + 1, "an INSTANCE with more than 255 substitutions is not supported");
		return NULL;
	}
	for (uint32_t i = 0; i < total; i++)
		ks[nk++] = ts_node_named_child(inst, i);
	if (nk == 0 || strcmp(ts_node_type(ks[0]), "identifier_ref")) {
		TSPoint p = ts_node_start_point(inst);
		set_err(err, m->path, p.row + 1, p.column + 1, "malformed INSTANCE");
		return NULL;
	}
	uint32_t a = ts_node_start_byte(ks[0]), b = ts_node_end_byte(ks[0]);
	const char *name = spec_intern(s, src + a, b - a);
	char path[4096];
	sibling(path, sizeof(path), m->path, name);
	struct module *mod = is_std(name) ? std_module(s, name) : load_module(s, name, path, false, depth + 1, err);
	if (!mod) {
		if (err->pos.line == 0) {
			/* The file could not be read: say where it is instantiated. */
			TSPoint ip = ts_node_start_point(ks[0]);
			err->pos = (struct src_pos){ m->path, ip.row + 1, ip.column + 1 };
		}
		return NULL;
	}
	struct instance *in = spt_arena_alloc(&s->arena, sizeof(*in));
	if (!in)
		return NULL;
	memset(in, 0, sizeof(*in));
	in->mod = mod;
	in->in = m;
	in->from = spt_arena_alloc(&s->arena, (nk + n_params) * sizeof(*in->from));
	in->to = spt_arena_alloc(&s->arena, (nk + n_params) * sizeof(*in->to));
	in->to_slots = spt_arena_alloc(&s->arena, (nk + n_params) * sizeof(*in->to_slots));
	if (!in->from || !in->to || !in->to_slots)
		return NULL;
	for (uint32_t i = 1; i < nk; i++) {
		TSNode sub = ks[i];
		if (strcmp(ts_node_type(sub), "substitution"))
			continue;
		TSNode parts[3];
		uint32_t np = 0, t2 = ts_node_named_child_count(sub);
		for (uint32_t j = 0; j < t2 && np < 3; j++) {
			TSNode ch = ts_node_named_child(sub, j);
			const char *ct = ts_node_type(ch);
			if (strcmp(ct, "gets") && strcmp(ct, "comment") && strcmp(ct, "block_comment"))
				parts[np++] = ch;
		}
		if (np != 2) {
			TSPoint p = ts_node_start_point(sub);
			set_err(err, m->path, p.row + 1, p.column + 1, "malformed substitution");
			return NULL;
		}
		uint32_t sa = ts_node_start_byte(parts[0]), sb = ts_node_end_byte(parts[0]);
		in->from[in->n] = spec_intern(s, src + sa, sb - sa);
		pc->module = m;
		if (!(in->to[in->n] = parse_expression(pc, src, m->path, parts[1], err)))
			return NULL;
		in->to_slots[in->n] = 0;
		in->n++;
	}
	if (n_params && add_param_substs(s, in, params, n_params, ppos))
		return NULL;
	set_subst(mod, in, 0);
	return in;
}

/* I == INSTANCE M WITH ...: the instance, as the symbol I of m. A name that already is an
 * instance of m is left as it is when known_ok (the same LET in another definition). */
static int named_instance(struct spec *s, struct parse_ctx *pc, struct module *m, const char *src, TSNode u,
			  struct spec_error *err, int depth, struct src_pos pos, bool known_ok)
{
	TSNode name = named_field(u, "name"), def = named_field(u, "definition");
	/* I(x, y) == INSTANCE ...: the parameters are the children between the name and ==. */
	uint32_t total = ts_node_named_child_count(u), np = 0;
	const char **params = spt_arena_alloc(&s->arena, (total ? total : 1) * sizeof(*params));
	if (!params)
		return -ENOMEM;
	for (uint32_t i = 0; i < total; i++) {
		TSNode ch = ts_node_named_child(u, i);
		const char *ct = ts_node_type(ch);
		if (ts_node_eq(ch, name) || ts_node_eq(ch, def) || !strcmp(ct, "def_eq") || !strcmp(ct, "comment") ||
		    !strcmp(ct, "block_comment"))
			continue;
		if (strcmp(ct, "identifier")) {
			TSPoint p = ts_node_start_point(ch);
			set_err(err, m->path, p.row + 1, p.column + 1,
				"parameterized instances with operator parameters (I(F(_)) == INSTANCE ...) are not supported");
			return -EINVAL;
		}
		uint32_t pa = ts_node_start_byte(ch), pb = ts_node_end_byte(ch);
		params[np++] = spec_intern(s, src + pa, pb - pa);
	}
	uint32_t a = ts_node_start_byte(name), b = ts_node_end_byte(name);
	const char *iname = spec_intern(s, src + a, b - a);
	struct symbol *old = known_ok ? module_lookup(m, iname) : NULL;
	if (old && old->kind == SYM_INSTANCE)
		return 0;
	struct instance *in = load_instance(s, pc, m, src, def, err, depth, params, np, pos);
	if (!in)
		return -EINVAL;
	struct symbol sym = { .name = iname, .kind = SYM_INSTANCE, .inst = in, .module = m };
	return add_symbol(s, m, &sym, err, pos);
}

/* LET I == INSTANCE M WITH ... IN ...: an instance of the module, as if named at module level
 * (its substitutions are expressions of the module; a LET-local name in them is unknown). */
static int let_instances(struct spec *s, struct parse_ctx *pc, struct module *m, const char *src, TSNode n,
			 struct spec_error *err, int depth, int level)
{
	if (level > 200)
		return 0;
	uint32_t total = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < total; i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (level > 0 && !strcmp(ts_node_type(ch), "module_definition")) {
			TSPoint p = ts_node_start_point(ch);
			int rc = named_instance(s, pc, m, src, ch, err, depth, (struct src_pos){ m->path, p.row + 1, p.column + 1 },
						true);
			if (rc)
				return rc;
			continue;
		}
		int rc = let_instances(s, pc, m, src, ch, err, depth, level + 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int declare(struct spec *s, struct module *m, TSNode decl, const char *src, bool root_closure,
		   bool variable, struct spec_error *err)
{
	uint32_t total = ts_node_named_child_count(decl);
	for (uint32_t i = 0; i < total; i++) {
		TSNode ch = ts_node_named_child(decl, i);
		const char *t = ts_node_type(ch);
		uint32_t arity = 0;
		TSNode id = ch;
		if (!strcmp(t, "operator_declaration")) {
			id = named_field(ch, "name");
			arity = ts_node_named_child_count(ch) - 1;
		} else if (strcmp(t, "identifier")) {
			continue;
		}
		uint32_t a = ts_node_start_byte(id), b = ts_node_end_byte(id);
		const char *name = spec_intern(s, src + a, b - a);
		TSPoint p = ts_node_start_point(id);
		struct src_pos pos = { m->path, p.row + 1, p.column + 1 };
		struct symbol sym = { .name = name, .kind = variable ? SYM_VAR : SYM_CONST, .arity = arity, .module = m };
		int rc;
		if (variable) {
			sym.index = root_closure ? s->n_vars : UINT32_MAX;
			if ((rc = push_name(&m->variables, NULL, &m->n_variables, &(uint32_t){ m->n_variables }, name, 0)))
				return rc;
			if (root_closure && (rc = push_name(&s->vars, NULL, &s->n_vars, &s->cap_vars, name, 0)))
				return rc;
		} else {
			sym.index = root_closure ? s->n_consts : UINT32_MAX;
			if (root_closure && (rc = push_name(&s->consts, &s->const_arity, &s->n_consts, &s->cap_consts, name, arity)))
				return rc;
		}
		if ((rc = add_symbol(s, m, &sym, err, pos)))
			return rc;
	}
	return 0;
}

static int unit(struct spec *s, struct parse_ctx *pc, struct module *m, TSNode u, const char *src,
		bool root_closure, int depth, struct spec_error *err)
{
	const char *t = ts_node_type(u);
	TSPoint p = ts_node_start_point(u);
	struct src_pos pos = { m->path, p.row + 1, p.column + 1 };
	bool local = false;
	if (!strcmp(t, "local_definition")) {
		local = true;
		u = ts_node_named_child(u, 0);
		t = ts_node_type(u);
	}
	if (!strcmp(t, "extends")) {
		uint32_t total = ts_node_named_child_count(u);
		for (uint32_t i = 0; i < total; i++) {
			TSNode id = ts_node_named_child(u, i);
			if (strcmp(ts_node_type(id), "identifier_ref"))
				continue;
			uint32_t a = ts_node_start_byte(id), b = ts_node_end_byte(id);
			const char *name = spec_intern(s, src + a, b - a);
			char path[4096];
			if (s->alias && name == s->alias)
				snprintf(path, sizeof(path), "%s", s->alias_path);
			else
				sibling(path, sizeof(path), m->path, name);
			if (is_std(name)) {
				if (add_std(s, m, name))
					return -ENOMEM;
				if (core_module(name) || access(path, R_OK) != 0)
					continue;
			}
			struct module *e = load_module(s, name, path, root_closure, depth + 1, err);
			if (!e) {
				if (err->pos.line == 0) {
					/* The file could not be read: say where it is extended. */
					TSPoint ip = ts_node_start_point(id);
					err->pos = (struct src_pos){ m->path, ip.row + 1, ip.column + 1 };
				}
				return -EINVAL;
			}
			int rc = import_module(s, m, e, err, pos);
			if (rc)
				return rc;
			struct module **ext = realloc(m->ext, (m->n_ext + 1) * sizeof(*ext));
			if (!ext)
				return -ENOMEM;
			m->ext = ext;
			m->ext[m->n_ext++] = e;
		}
		return 0;
	}
	if (!strcmp(t, "constant_declaration"))
		return declare(s, m, u, src, root_closure, false, err);
	if (!strcmp(t, "variable_declaration"))
		return declare(s, m, u, src, root_closure, true, err);
	if (!strcmp(t, "operator_definition") || !strcmp(t, "function_definition")) {
		int lr = let_instances(s, pc, m, src, u, err, depth, 0);
		if (lr)
			return lr;
		pc->module = m;
		struct opdef *d = parse_definition(pc, src, m->path, u, err);
		if (!d)
			return -EINVAL;
		d->local = local;
		struct opdef **defs = realloc(m->defs, (m->n_defs + 1) * sizeof(*defs));
		if (!defs)
			return -ENOMEM;
		m->defs = defs;
		m->defs[m->n_defs++] = d;
		struct symbol sym = { .name = d->name, .kind = SYM_DEF, .def = d, .module = m };
		return add_symbol(s, m, &sym, err, pos);
	}
	if (!strcmp(t, "module_definition"))
		return named_instance(s, pc, m, src, u, err, depth, pos, false);
	if (!strcmp(t, "instance")) {
		struct instance *in = load_instance(s, pc, m, src, u, err, depth, NULL, 0, pos);
		if (!in)
			return -EINVAL;
		for (uint32_t i = 0; i < in->mod->n_std; i++)
			if (add_std(s, m, in->mod->std[i]))
				return -ENOMEM;
		/* An unnamed INSTANCE brings N's definitions in (those N has from its own EXTENDS and
		 * INSTANCEs too); they evaluate inside the instance. */
		for (uint32_t i = 0; i < in->mod->cap_syms; i++) {
			struct symbol *sym = in->mod->syms[i];
			if (!sym || (sym->kind != SYM_DEF && sym->kind != SYM_INSTANCE) || (sym->def && sym->def->local))
				continue;
			int rc = add_symbol(s, m, sym, err, pos);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(t, "assumption")) {
		/* ASSUME e, ASSUME Name == e: kept as a definition without parameters (a named one is
		 * also a definition of the module). */
		TSNode name = named_field(u, "name"), e = { 0 };
		uint32_t total = ts_node_named_child_count(u);
		for (uint32_t i = 0; i < total; i++) {
			TSNode ch = ts_node_named_child(u, i);
			const char *ct = ts_node_type(ch);
			if (!ts_node_eq(ch, name) && strcmp(ct, "def_eq") && strcmp(ct, "comment") && strcmp(ct, "block_comment"))
				e = ch;
		}
		if (ts_node_is_null(e)) {
			set_err(err, m->path, pos.line, pos.col, "malformed ASSUME");
			return -EINVAL;
		}
		struct opdef *d = spt_arena_alloc(&s->arena, sizeof(*d));
		if (!d)
			return -ENOMEM;
		memset(d, 0, sizeof(*d));
		d->pos = pos;
		d->module = m;
		d->name = ts_node_is_null(name) ? spec_intern(s, "ASSUME", 6)
						: spec_intern(s, m->source + ts_node_start_byte(name),
							      ts_node_end_byte(name) - ts_node_start_byte(name));
		d->params = spt_arena_alloc(&s->arena, sizeof(*d->params));
		d->param_arity = spt_arena_alloc(&s->arena, sizeof(*d->param_arity));
		pc->module = m;
		if (!d->params || !d->param_arity || !(d->body = parse_expression(pc, src, m->path, e, err)))
			return -EINVAL;
		struct opdef **as = realloc(m->assumes, (m->n_assumes + 1) * sizeof(*as));
		if (!as)
			return -ENOMEM;
		m->assumes = as;
		m->assumes[m->n_assumes++] = d;
		if (ts_node_is_null(name))
			return 0;
		struct opdef **defs = realloc(m->defs, (m->n_defs + 1) * sizeof(*defs));
		if (!defs)
			return -ENOMEM;
		m->defs = defs;
		m->defs[m->n_defs++] = d;
		struct symbol sym = { .name = d->name, .kind = SYM_DEF, .def = d, .module = m };
		return add_symbol(s, m, &sym, err, pos);
	}
	if (!strcmp(t, "theorem")) {
		/* THEOREM Name == e names e (ASSUME Name may use it); proofs are not read. A statement
		 * that is not an expression (ASSUME ... PROVE), or one spectap cannot read, stays unnamed. */
		TSNode name = named_field(u, "name"), st = named_field(u, "statement");
		if (ts_node_is_null(name) || ts_node_is_null(st) || !strcmp(ts_node_type(st), "assume_prove"))
			return 0;
		struct spec_error ignore = { 0 };
		pc->module = m;
		struct ast *body = parse_expression(pc, src, m->path, st, &ignore);
		if (!body)
			return 0;
		struct opdef *d = spt_arena_alloc(&s->arena, sizeof(*d));
		if (!d)
			return -ENOMEM;
		memset(d, 0, sizeof(*d));
		d->pos = pos;
		d->module = m;
		d->name = spec_intern(s, m->source + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
		d->params = spt_arena_alloc(&s->arena, sizeof(*d->params));
		d->param_arity = spt_arena_alloc(&s->arena, sizeof(*d->param_arity));
		if (!d->params || !d->param_arity)
			return -ENOMEM;
		d->body = body;
		struct opdef **defs = realloc(m->defs, (m->n_defs + 1) * sizeof(*defs));
		if (!defs)
			return -ENOMEM;
		m->defs = defs;
		m->defs[m->n_defs++] = d;
		struct symbol sym = { .name = d->name, .kind = SYM_DEF, .def = d, .module = m };
		return add_symbol(s, m, &sym, err, pos);
	}
	static const char *const ignored[] = { "header_line", "double_line", "single_line", "comment",
					       "block_comment", "recursive_declaration",
					       "theorem", "identifier", "extramodular_text", NULL };
	for (const char *const *ig = ignored; *ig; ig++)
		if (!strcmp(t, *ig))
			return 0;
	set_err(err, m->path, pos.line, pos.col, "%s is not supported at module level", t);
	return -EINVAL;
}

volatile size_t spec_parse_cancel;

/* The length of the longest line of text (for the message of a parse that ran out of time). */
static size_t longest_line(const char *text, size_t len)
{
	size_t best = 0, start = 0;
	for (size_t i = 0; i <= len; i++)
		if (i == len || text[i] == '\n') {
			best = i - start > best ? i - start : best;
			start = i + 1;
		}
	return best;
}

static struct module *load_module(struct spec *s, const char *name, const char *path, bool root_closure,
				  int depth, struct spec_error *err)
{
	/* A module extended twice in the root's closure is loaded once. */
	for (uint32_t i = 0; root_closure && i < s->n_mods; i++)
		if (s->mods[i]->name == name && !s->mods[i]->subst && !s->mods[i]->is_std)
			return s->mods[i];
	if (depth > 32) {
		set_err(err, path, 1, 1, "modules extend or instantiate each other more than 32 deep (a cycle?)");
		return NULL;
	}
	for (uint32_t i = 0; i < s->n_embedded; i++)
		if (s->embedded[i].name == name)
			path = s->embedded[i].path; /* it follows another module in that file */
	struct module *m = spt_arena_alloc(&s->arena, sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->path = spec_intern(s, path, strlen(path));
	if (push_module(s, m))
		return NULL;
	if (!(m->source = read_file(path, &m->source_len))) {
		int e = errno;
		char std[1024] = "";
		for (size_t i = 0, o = 0; e == ENOENT && i < sizeof(std_modules) / sizeof(std_modules[0]) && o < sizeof(std);
		     i++) {
			int k = snprintf(std + o, sizeof(std) - o, "%s%s", i ? ", " : "", std_modules[i].name);
			o = k < 0 ? sizeof(std) : o + (size_t)k; /* past the end: the list is cut there */
		}
		set_err(err, path, 0, 0, "cannot read module %s: %s%s%s%s", name, strerror(e),
			e == ENOENT ? " (and it is not a standard module spectap implements: " : "", std,
			e == ENOENT ? ")" : "");
		return NULL;
	}
	struct junction_issue ji;
	if (junction_check(m->source, m->source_len, &ji)) {
		set_err(err, m->path, ji.line, ji.col, "%s", ji.what);
		return NULL;
	}
	TSTree *tree = ts_parser_parse_string(s->parser, NULL, m->source, (uint32_t)m->source_len);
	if (!tree) {
		size_t longest = longest_line(m->source, m->source_len);
		if (spec_parse_cancel)
			set_err(err, m->path, 0, 0,
				"the time limit (--timeout) was reached while reading this module (its longest line has %zu "
				"characters: the TLA+ grammar's scanner takes time quadratic in a line's length)",
				longest);
		else
			set_err(err, path, 0, 0, "the parser gave up on %s", path);
		return NULL;
	}
	TSNode root = ts_tree_root_node(tree);
	struct module *ret = NULL;
	if (parse_syntax_error(m->source, m->path, root, err))
		goto out;
	TSNode mod = { 0 };
	uint32_t nmods = 0, total = ts_node_named_child_count(root);
	bool found = false;
	for (uint32_t i = 0; i < total; i++) {
		TSNode ch = ts_node_named_child(root, i);
		if (strcmp(ts_node_type(ch), "module"))
			continue;
		TSNode nn = named_field(ch, "name");
		const char *mn = spec_intern(s, m->source + ts_node_start_byte(nn), ts_node_end_byte(nn) - ts_node_start_byte(nn));
		if (nmods++ == 0) {
			mod = ch; /* the file's own module, unless it holds the one asked for later */
		} else {
			bool known = false;
			for (uint32_t j = 0; j < s->n_embedded && !known; j++)
				known = s->embedded[j].name == mn;
			struct embedded *ne = known ? NULL : realloc(s->embedded, (s->n_embedded + 1) * sizeof(*ne));
			if (ne) {
				s->embedded = ne;
				s->embedded[s->n_embedded++] = (struct embedded){ mn, m->path };
			}
		}
		if (!found && mn == name) {
			mod = ch;
			found = true;
		}
	}
	if (!nmods) {
		set_err(err, path, 1, 1, "no ---- MODULE ... ---- found");
		goto out;
	}
	TSNode mname = named_field(mod, "name");
	uint32_t a = ts_node_start_byte(mname), b = ts_node_end_byte(mname);
	if (name == s->alias && s->alias) {
		/* The aliased module is whatever module the file holds. */
		m->name = spec_intern(s, m->source + a, b - a);
	} else if (spec_intern(s, m->source + a, b - a) != name) {
		TSPoint p = ts_node_start_point(mname);
		set_err(err, path, p.row + 1, p.column + 1, "the file %s holds module %.*s, not %s", path,
			(int)(b - a), m->source + a, name);
		goto out;
	}
	struct parse_ctx pc = { &s->arena, m, &s->names };
	total = ts_node_named_child_count(mod);
	for (uint32_t i = 0; i < total; i++) {
		TSNode u = ts_node_named_child(mod, i);
		if (ts_node_eq(u, mname))
			continue;
		if (unit(s, &pc, m, u, m->source, root_closure, depth, err))
			goto out;
	}
	ret = m;
out:
	ts_tree_delete(tree);
	return ret;
}

int spec_parse(const char *path, struct spec **out, struct spec_error *err)
{
	return spec_parse_aliased(path, NULL, NULL, out, err);
}

static int load_resolved(struct spec *s, int rc, struct spec **out, struct spec_error *err)
{
	if (rc)
		return rc;
	if ((rc = spec_resolve(s, NULL, err))) {
		/* The position's file name lives in the spec's arena: keep a copy the caller can print. */
		if (err->pos.file && err->pos.file != err->file) {
			snprintf(err->file, sizeof(err->file), "%s", err->pos.file);
			err->pos.file = err->file;
		}
		spec_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int spec_load(const char *path, struct spec **out, struct spec_error *err)
{
	struct spec *s = NULL;
	int rc = spec_parse(path, &s, err);
	return load_resolved(s, rc, out, err);
}

int spec_load_aliased(const char *path, const char *alias, const char *alias_path, struct spec **out,
		      struct spec_error *err)
{
	struct spec *s = NULL;
	int rc = spec_parse_aliased(path, alias, alias_path, &s, err);
	return load_resolved(s, rc, out, err);
}

int spec_parse_aliased(const char *path, const char *alias, const char *alias_path, struct spec **out,
		       struct spec_error *err)
{
	memset(err, 0, sizeof(*err));
	struct spec *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	spt_arena_init(&s->arena);
	s->arena.tag = SPEC_ARENA_TAG; /* values built here (the cfg's constants) live as long as the spec */
	if (alias) {
		s->alias = spec_intern(s, alias, strlen(alias));
		if (!s->alias || !(s->alias_path = strdup(alias_path))) {
			spec_free(s);
			return -ENOMEM;
		}
	}
	char *copy2 = strdup(path);
	s->parser = ts_parser_new();
	int rc = -ENOMEM;
	if (!copy2 || !s->parser || !ts_parser_set_language(s->parser, parse_language()))
		goto fail;
	ts_parser_set_cancellation_flag(s->parser, (const size_t *)&spec_parse_cancel);
	const char *base = basename(copy2);
	size_t blen = strlen(base);
	if (blen < 5 || strcmp(base + blen - 4, ".tla")) {
		set_err(err, path, 0, 0, "a TLA+ module file name ends in .tla");
		rc = -EINVAL;
		goto fail;
	}
	const char *name = spec_intern(s, base, blen - 4);
	if (!(s->root = load_module(s, name, path, true, 0, err))) {
		rc = -EINVAL;
		goto fail;
	}
	free(copy2);
	*out = s;
	return 0;
fail:
	/* The position's file name lives in the spec's arena: keep a copy the caller can print. */
	if (err->pos.file && err->pos.file != err->file) {
		snprintf(err->file, sizeof(err->file), "%s", err->pos.file);
		err->pos.file = err->file;
	}
	free(copy2);
	spec_free(s);
	return rc;
}

void spec_free(struct spec *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n_mods; i++) {
		struct module *m = s->mods[i];
		free(m->source);
		free(m->syms);
		free(m->variables);
		free(m->defs);
		free(m->assumes);
		free(m->ext);
		free(m->std);
	}
	free(s->mods);
	free(s->defs);
	free(s->vars);
	free(s->consts);
	free(s->const_arity);
	free(s->names.slots);
	free(s->alias_path);
	free(s->embedded);
	if (s->parser)
		ts_parser_delete(s->parser);
	spt_arena_fini(&s->arena);
	free(s);
}

int spec_parse_expr(struct spec *s, const char *text, const char *origin, struct ast **out, uint32_t *nslots,
		    struct spec_error *err)
{
	/* Parse as the body of a definition inside a scratch module. */
	static const char head[] = "---- MODULE expr ----\nE == ";
	static const char tail[] = "\n====\n";
	size_t len = strlen(head) + strlen(text) + strlen(tail);
	char *src = spt_arena_alloc(&s->arena, len + 1);
	if (!src)
		return -ENOMEM;
	snprintf(src, len + 1, "%s%s%s", head, text, tail);
	struct junction_issue ji;
	if (junction_check(src, len, &ji)) {
		set_err(err, origin, ji.line - 1, ji.col, "%s", ji.what);
		return -EINVAL;
	}
	TSTree *tree = ts_parser_parse_string(s->parser, NULL, src, (uint32_t)len);
	if (!tree && spec_parse_cancel) {
		set_err(err, origin, 0, 0, "the time limit (--timeout) was reached while reading this expression");
		return -EINVAL;
	}
	if (!tree)
		return -ENOMEM;
	int rc = -EINVAL;
	TSNode root = ts_tree_root_node(tree);
	if (parse_syntax_error(src, origin, root, err))
		goto out;
	TSNode mod = ts_node_named_child(root, 0);
	TSNode def = { 0 };
	uint32_t total = ts_node_named_child_count(mod);
	for (uint32_t i = 0; i < total; i++)
		if (!strcmp(ts_node_type(ts_node_named_child(mod, i)), "operator_definition"))
			def = ts_node_named_child(mod, i);
	if (ts_node_is_null(def)) {
		set_err(err, origin, 1, 1, "not an expression: %s", text);
		goto out;
	}
	struct parse_ctx pc = { &s->arena, s->root, &s->names };
	*out = parse_expression(&pc, src, origin, ts_node_child_by_field_name(def, "definition", 10), err);
	rc = *out ? spec_resolve_expr(s, *out, NULL, 0, nslots, err) : -EINVAL;
out:
	if (rc && err->pos.line >= 2 && err->pos.file == origin) {
		err->pos.line -= 1; /* positions relative to the expression's own text */
		err->pos.col -= err->pos.line == 1 ? (uint32_t)strlen("E == ") : 0;
	}
	ts_tree_delete(tree);
	return rc;
}
