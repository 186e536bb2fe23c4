/* goprobes: a description's Go probes resolved and attached (goprobes.h). */
#include "goprobes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

#include "gobin.h"
#include "spectap/buf.h"
#include "spectap/json.h"
#include "supervise.h"

int hprobes_fail(char *err, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, HPROBES_ERR_SIZE, fmt, ap);
	va_end(ap);
	return -e;
}

/* Field getters of goprobe's answer. */
static spt_val *get(spt_val *rec, const char *name) { return rec && spt_is_fun(rec) ? spt_rec_get(rec, name) : NULL; }
static const char *gstr(spt_val *rec, const char *name)
{
	spt_val *v = get(rec, name);
	return v && v->kind == SPT_STR ? v->u.s : NULL;
}
static int64_t gint(spt_val *rec, const char *name, int64_t dflt)
{
	spt_val *v = get(rec, name);
	return v && v->kind == SPT_INT ? v->u.i : dflt;
}
static size_t glen(spt_val *v) { return v && (v->kind == SPT_SEQ || spt_is_fun(v)) ? v->n : 0; }
static spt_val *gat(spt_val *seq, size_t i) { return seq && seq->kind == SPT_SEQ && i < seq->n ? seq->u.elems[i] : NULL; }

/* Where goprobe's answer to this request is kept: type-checking a large package from source
 * takes seconds, and the answer only changes with the request, the sources and goprobe. */
static void cache_path(const struct desc *d, const char *goprobe, const struct spt_buf *req, char *out, size_t size)
{
	struct stat st;
	char src[PATH_MAX];
	uint64_t h = spt_hash_bytes(req->p, req->len, 0x5eed);
	h = spt_hash_bytes(d->go_package, strlen(d->go_package), h);
	h = spt_hash_bytes(d->go_path, strlen(d->go_path), h);
	if (!stat(goprobe, &st))
		h = spt_hash_mix(spt_hash_mix(h, (uint64_t)st.st_mtime), (uint64_t)st.st_size);
	snprintf(src, sizeof(src), "%s/src/%s", d->go_path, d->go_package);
	if (!stat(src, &st))
		h = spt_hash_mix(h, (uint64_t)st.st_mtime);
	const char *base = getenv("XDG_CACHE_HOME");
	if (base && *base)
		snprintf(out, size, "%s/spectap/goprobe-%016llx.json", base, (unsigned long long)h);
	else
		snprintf(out, size, "/tmp/spectap-cache-%u/goprobe-%016llx.json", (unsigned)getuid(),
			 (unsigned long long)h);
}

static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	struct spt_buf b = { 0 };
	char chunk[8192];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		spt_buf_put(&b, chunk, k);
	fclose(f);
	if (b.oom) {
		spt_buf_free(&b);
		return -ENOMEM;
	}
	*text = b.p;
	*len = b.len;
	return 0;
}

/* Keeps the answer at path, written whole (a temporary file renamed). Failing to is no error. */
static void cache_store(const char *path, const char *text, size_t len)
{
	char dir[PATH_MAX + 64], tmp[PATH_MAX + 96];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	if (sup_mkdir_p(dir))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return;
	bool ok = fwrite(text, 1, len, f) == len;
	if (fclose(f) || !ok || rename(tmp, path))
		unlink(tmp);
}

/* Writes the request, runs goprobe (or takes its kept answer), parses its answer into a. */
static int resolve(const struct desc *d, const char *goprobe, struct spt_arena *a, spt_val **answer, char *err)
{
	char path[] = "/tmp/spectap-goprobe-XXXXXX";
	struct spt_buf b = { 0 };
	int fd = mkstemp(path), r = 0;
	if (fd < 0)
		return hprobes_fail(err, errno, "cannot create a file in /tmp for goprobe's request: %s", strerror(errno));
	spt_buf_puts(&b, "{\"functions\":[");
	for (size_t i = 0; i < d->nprobes; i++) {
		spt_buf_printf(&b, "%s{\"name\":", i ? "," : "");
		spt_buf_json_str(&b, d->probes[i].func, strlen(d->probes[i].func));
		spt_buf_puts(&b, ",\"reads\":[");
		for (size_t k = 0; k < d->probes[i].nreads; k++) {
			spt_buf_puts(&b, k ? "," : "");
			spt_buf_json_str(&b, d->probes[i].reads[k].expr, strlen(d->probes[i].reads[k].expr));
		}
		spt_buf_puts(&b, "]}");
	}
	spt_buf_puts(&b, "]}\n");
	char cached[PATH_MAX + 64], *text = NULL;
	size_t len = 0;
	struct spt_json_error je;
	cache_path(d, goprobe, &b, cached, sizeof(cached));
	if (!b.oom && read_file(cached, &text, &len) == 0) {
		r = spt_json_parse(a, text, len, 0, answer, &je);
		free(text);
		if (!r) {
			close(fd);
			unlink(path);
			spt_buf_free(&b);
			return 0;
		}
	}
	if (b.oom || write(fd, b.p, b.len) != (ssize_t)b.len)
		r = hprobes_fail(err, EIO, "writing goprobe's request %s", path);
	close(fd);
	spt_buf_free(&b);
	if (r) {
		unlink(path);
		return r;
	}
	char gopath[4200];
	snprintf(gopath, sizeof(gopath), "GOPATH=%s", d->go_path);
	const char *argv[] = { goprobe, "--package", d->go_package, "--request", path, NULL };
	const char *env[] = { gopath, "GO111MODULE=off", "GOFLAGS=", NULL };
	struct sup_output o = { 0 };
	char serr[SUP_ERR_SIZE] = "";
	r = sup_run_capture(argv, env, 300000, &o, serr);
	unlink(path);
	if (r) {
		r = hprobes_fail(err, -r, "running %s: %s", goprobe, serr);
	} else if (!WIFEXITED(o.status) || WEXITSTATUS(o.status)) {
		char *nl = o.err_out ? strchr(o.err_out, '\n') : NULL, *msg = o.err_out ? o.err_out : (char *)"";
		int fi, ri, k = 0;
		if (nl)
			*nl = 0;
		if (!strncmp(msg, "goprobe: ", 9))
			msg += 9;
		/* "request F R: what": the description's function F, read R (-1: the function) */
		if (sscanf(msg, "request %d %d: %n", &fi, &ri, &k) == 2 && k && fi >= 0 && (size_t)fi < d->nprobes &&
		    ri < (int)d->probes[fi].nreads) {
			const struct desc_probe *p = &d->probes[fi];
			if (ri < 0)
				r = hprobes_fail(err, EINVAL, "%s:%u:%u: %s", d->path, p->pos.line, p->pos.col, msg + k);
			else
				r = hprobes_fail(err, EINVAL, "%s:%u:%u: %s, read %s (%s): %s", d->path, p->reads[ri].pos.line,
					  p->reads[ri].pos.col, p->func, p->reads[ri].name, p->reads[ri].expr, msg + k);
		} else {
			r = hprobes_fail(err, EINVAL, "%s: %s", d->path, msg[0] ? msg : "goprobe failed");
		}
	} else if (spt_json_parse(a, o.out, o.out_len, 0, answer, &je)) {
		r = hprobes_fail(err, EPROTO, "goprobe's answer is not JSON: %s", je.msg);
	} else {
		cache_store(cached, o.out, o.out_len);
	}
	sup_output_free(&o);
	return r;
}

/* The parameter of function answer f named name. */
static spt_val *param_of(spt_val *f, const char *name)
{
	spt_val *ps = get(f, "params");
	for (size_t i = 0; i < glen(ps); i++) {
		const char *n = gstr(gat(ps, i), "name");
		if (n && !strcmp(n, name))
			return gat(ps, i);
	}
	return NULL;
}

/* The register that holds word w of parameter p at the entry (DWARF number), or -1 (stack). */
static int reg_of(spt_val *p, int64_t w)
{
	spt_val *regs = get(p, "regs");
	spt_val *r = gat(regs, (size_t)w);
	return r && r->kind == SPT_INT ? (int)r->u.i : -1;
}

/* One part of goprobe's answer as a uprobe read, at the entry or a return. */
static int part_read(spt_val *f, spt_val *part, bool at_return, struct uprobe_read *out, int *need_reg,
		     int32_t *need_slot, char *err, const char *what)
{
	const char *pname = gstr(part, "param"), *how = gstr(part, "read");
	spt_val *p = pname ? param_of(f, pname) : NULL, *derefs = get(part, "derefs");
	int64_t word = gint(part, "word", 0), off = gint(part, "off", 0), size = gint(part, "size", 8);
	if (!p || !how)
		return hprobes_fail(err, EPROTO, "%s: goprobe's answer names no parameter", what);
	memset(out, 0, sizeof(*out));
	*need_reg = -1;
	int reg = reg_of(p, word);
	int64_t stack = gint(p, "stack", -1), spill = gint(p, "spill", -1);
	if (reg >= 0 && !at_return) {
		out->src = (uint8_t)reg;
	} else if (reg >= 0) {
		out->src = UPROBE_SRC_STACK;
		out->src_off = (int32_t)(spill + 8 * word);
		*need_reg = reg;
		*need_slot = out->src_off;
	} else {
		out->src = UPROBE_SRC_STACK;
		out->src_off = (int32_t)(stack + (!strcmp(how, "value") ? off : gint(part, "slot", 0)));
		if (!strcmp(how, "value"))
			off = 0;
	}
	if (glen(derefs) > UPROBE_MAX_DEREFS)
		return hprobes_fail(err, E2BIG, "%s: %zu pointer dereferences, at most %d", what, glen(derefs), UPROBE_MAX_DEREFS);
	out->nderef = (uint8_t)glen(derefs);
	for (size_t k = 0; k < glen(derefs); k++)
		out->deref_off[k] = (int32_t)gat(derefs, k)->u.i;
	if (!strcmp(how, "value")) {
		out->kind = out->nderef ? UPROBE_READ_MEM : UPROBE_READ_VALUE;
	} else if (!strcmp(how, "mem")) {
		out->kind = UPROBE_READ_MEM;
	} else if (!strcmp(how, "array")) {
		/* the count comes from the length part read before it (attach_one sets len_read) */
		out->kind = UPROBE_READ_ARRAY;
		out->stride = (uint16_t)gint(part, "stride", 8);
		if (get(part, "tail") && get(part, "tail")->kind == SPT_BOOL && get(part, "tail")->u.b)
			out->flags |= UPROBE_READ_TAIL;
		if (size < 1 || size > UPROBE_MAX_ELEMS)
			return hprobes_fail(err, EINVAL, "%s: %lld elements, 1..%d", what, (long long)size, UPROBE_MAX_ELEMS);
	} else {
		out->kind = UPROBE_READ_BLOCK;
		size = size > UPROBE_MAX_BLOCK ? UPROBE_MAX_BLOCK : size;
	}
	out->off = (int32_t)off;
	out->size = (uint8_t)size;
	if (gint(part, "signed", 0) || (get(part, "signed") && get(part, "signed")->kind == SPT_BOOL &&
					get(part, "signed")->u.b))
		out->flags = UPROBE_READ_SIGNED;
	return 0;
}

static enum hread_kind kind_of(const char *k)
{
	return !strcmp(k, "int") ? HREAD_INT : !strcmp(k, "bool") ? HREAD_BOOL : !strcmp(k, "string") ? HREAD_STRING
	     : !strcmp(k, "bytes") ? HREAD_BYTES : !strcmp(k, "pointer") ? HREAD_POINTER : !strcmp(k, "array") ? HREAD_ARRAY
	     : !strcmp(k, "hex") ? HREAD_HEX
	     : HREAD_UINT;
}

/* Attaches probe i (answer f) at its sites. */
static int attach_one(struct uprobe_loader *l, struct gobin *g, const char *binary, spt_val *f, const struct desc *d,
		      size_t i, struct hprobes *out, char *err)
{
	const struct desc_probe *dp = &d->probes[i];
	struct hprobe *hp = &out->p[i];
	struct probe_spec spec;
	int need_reg[UPROBE_MAX_READS];
	int32_t need_slot[UPROBE_MAX_READS];
	unsigned nr = 0;
	char what[512], gerr[GOBIN_ERRBUF_SIZE];
	bool at_return = dp->at == DESC_AT_RETURN;
	int r;

	memset(&spec, 0, sizeof(spec));
	hp->dp = dp;
	hp->id = HPROBES_ID_BASE + (uint32_t)i;
	/* An entry probe sits on the prologue's jbe when there is one: the flags there tell a call
	 * that will repeat after morestack. Elsewhere the return address and stack pointer do. */
	const char *sym = gstr(f, "symbol");
	struct gobin_func fn;
	struct gobin_sites sites;
	if (!sym || gobin_func_find(g, sym, &fn, gerr))
		return hprobes_fail(err, ENOENT, "%s:%u:%u: %s is not a function of %s (%s); was it inlined or renamed in this "
			     "build?", d->path, dp->pos.line, dp->pos.col, dp->func, binary, gerr);
	if ((r = gobin_sites(g, &fn, &sites, gerr)))
		return hprobes_fail(err, -r, "%s: %s", dp->func, gerr);
	bool at_branch = !at_return && sites.entry_branch_off;
	gobin_sites_free(&sites);
	unsigned extra = at_branch ? 2 : 3; /* reads of our own, after the description's */
	spt_val *reads = get(f, "reads");
	for (size_t k = 0; k < dp->nreads; k++) {
		spt_val *ra = gat(reads, k), *parts = get(ra, "parts");
		struct hread *h = &hp->reads[hp->nreads++];
		h->name = dp->reads[k].name;
		h->kind = kind_of(gstr(ra, "kind") ? gstr(ra, "kind") : "uint");
		h->v = h->b = -1;
		snprintf(what, sizeof(what), "%s:%u:%u: %s, read %s (%s)", d->path, dp->reads[k].pos.line,
			 dp->reads[k].pos.col, dp->func, dp->reads[k].name, dp->reads[k].expr);
		for (size_t q = 0; q < glen(parts); q++) {
			spt_val *part = gat(parts, q);
			if (nr + extra >= UPROBE_MAX_READS)
				return hprobes_fail(err, E2BIG, "%s: more than %d reads in one probe (a string takes two)", what,
					     UPROBE_MAX_READS - (int)extra);
			if ((r = part_read(f, part, at_return, &spec.reads[nr], &need_reg[nr], &need_slot[nr], err, what)))
				return r;
			const char *role = gstr(part, "role");
			if (role && !strcmp(role, "elems")) {
				h->b = (int)nr;
				if (h->v < 0)
					return hprobes_fail(err, EPROTO, "%s: goprobe gave no length before the elements", what);
				spec.reads[nr].len_read = (uint8_t)h->v;
			} else if (role && !strcmp(role, "bytes")) {
				h->b = (int)nr;
				if (h->v >= 0) { /* the length came first: read no more than it */
					spec.reads[nr].flags |= UPROBE_READ_LEN;
					spec.reads[nr].len_read = (uint8_t)h->v;
				}
			} else {
				h->v = (int)nr;
			}
			nr++;
		}
	}
	/* The goroutine; the flags at the jbe, or the return address and the stack pointer. */
	hp->g_read = (int)nr;
	spec.reads[nr++] = (struct uprobe_read){ .src = UPROBE_SRC_R14, .kind = UPROBE_READ_VALUE, .size = 8 };
	hp->flags_read = hp->ret_read = hp->sp_read = -1;
	if (at_branch) {
		hp->flags_read = (int)nr;
		spec.reads[nr++] = (struct uprobe_read){ .src = UPROBE_SRC_FLAGS, .kind = UPROBE_READ_VALUE, .size = 8 };
	} else {
		hp->ret_read = (int)nr;
		spec.reads[nr++] = (struct uprobe_read){ .src = UPROBE_SRC_STACK, .kind = UPROBE_READ_VALUE, .size = 8 };
		hp->sp_read = (int)nr;
		spec.reads[nr++] = (struct uprobe_read){ .src = UPROBE_SRC_RSP, .kind = UPROBE_READ_VALUE, .size = 8 };
	}
	for (unsigned k = (unsigned)hp->g_read; k < nr; k++)
		need_reg[k] = -1;
	spec.nreads = nr;

	if ((r = gobin_sites(g, &fn, &sites, gerr)))
		return hprobes_fail(err, -r, "%s: %s", dp->func, gerr);
	if (!at_return) {
		uint64_t off = at_branch ? sites.entry_branch_off : sites.entry_off;
		r = uprobe_attach(l, binary, off, hp->id, &spec, -1);
		if (r)
			r = hprobes_fail(err, -r, "attaching %s at its entry: %s", dp->func, uprobe_loader_error(l));
		hp->nsites = 1;
		out->entry_sites++;
		gobin_sites_free(&sites);
		return r;
	}
	/* Returns: the sites every path reaches with each register argument read saved. */
	size_t nsite = sites.nret + sites.ntail, ok = 0;
	bool *all = calloc(nsite + 1, sizeof(bool)), *one = calloc(nsite + 1, sizeof(bool));
	if (!all || !one) {
		free(all);
		free(one);
		gobin_sites_free(&sites);
		return hprobes_fail(err, ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < nsite; k++)
		all[k] = true;
	for (unsigned k = 0; k < nr && !r; k++) {
		if (need_reg[k] < 0)
			continue;
		if ((r = gobin_spilled_at(g, &fn, &sites, need_reg[k], need_slot[k], one, one + sites.nret, gerr)))
			r = hprobes_fail(err, -r, "%s: %s", dp->func, gerr);
		for (size_t q = 0; q < nsite && !r; q++)
			all[q] = all[q] && one[q];
	}
	for (size_t q = 0; q < nsite && !r; q++) {
		if (!all[q])
			continue;
		uint64_t off = q < sites.nret ? sites.ret_off[q] : sites.tail_off[q - sites.nret];
		if ((r = uprobe_attach(l, binary, off, hp->id, &spec, -1)))
			r = hprobes_fail(err, -r, "attaching %s at a return: %s", dp->func, uprobe_loader_error(l));
		ok++;
	}
	free(all);
	free(one);
	gobin_sites_free(&sites);
	if (!r && !ok)
		return hprobes_fail(err, ENOTSUP, "%s:%u:%u: %s does not save the arguments its return probe reads at any of its %zu "
			     "return sites: read them at the entry, or at the entry of the next function probed",
			     d->path, dp->pos.line, dp->pos.col, dp->func, nsite);
	hp->nsites = (unsigned)ok;
	out->ret_sites += (unsigned)ok;
	return r;
}

int hprobes_attach(struct uprobe_loader *l, const struct desc *d, const char *binary, const char *goprobe,
		   struct hprobes *out, char *err)
{
	struct gobin *g = NULL;
	struct spt_arena a;
	spt_val *answer = NULL;
	char gerr[GOBIN_ERRBUF_SIZE];
	int r;

	memset(out, 0, sizeof(*out));
	if (d->lang == DESC_LANG_C)
		return hprobes_attach_c(l, d, binary, out, err);
	if (d->lang != DESC_LANG_GO || !goprobe)
		return hprobes_fail(err, ENOTSUP, "%s: Go probes need tools/goprobe", d->path);
	if ((r = gobin_open(binary, &g, gerr)))
		return hprobes_fail(err, -r, "%s", gerr);
	spt_arena_init(&a);
	if ((r = resolve(d, goprobe, &a, &answer, err)))
		goto out;
	const char *built = gstr(answer, "go"), *bin = gobin_go_version(g);
	snprintf(out->go_version, sizeof(out->go_version), "%s", bin);
	if (!built || strcmp(built, bin)) {
		r = hprobes_fail(err, EINVAL, "%s was built with %s and this machine's Go (golang-go) is %s: the struct layouts "
			  "goprobe computes may not be the binary's, so nothing is attached", binary, bin,
			  built ? built : "?");
		goto out;
	}
	out->p = calloc(d->nprobes, sizeof(*out->p));
	out->table = calloc(d->nprobes, sizeof(*out->table));
	if (!out->p || !out->table) {
		r = hprobes_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	out->n = d->nprobes;
	spt_val *fs = get(answer, "functions");
	for (size_t i = 0; i < d->nprobes && !r; i++) {
		r = attach_one(l, g, binary, gat(fs, i), d, i, out, err);
		out->table[i] = (struct collect_probe){ .probe_id = out->p[i].id, .kind = d->probes[i].name };
		out->sites += out->p[i].nsites;
	}
	out->ctable = (struct collect_table){ out->table, out->n };
out:
	spt_arena_fini(&a);
	gobin_close(g);
	if (r)
		hprobes_free(out);
	return r;
}

void hprobes_free(struct hprobes *p)
{
	free(p->p);
	free(p->table);
	memset(p, 0, sizeof(*p));
}

const struct hprobe *hprobes_find(const struct hprobes *p, uint32_t id)
{
	return id >= HPROBES_ID_BASE && id - HPROBES_ID_BASE < p->n ? &p->p[id - HPROBES_ID_BASE] : NULL;
}
