/* C binaries (probes/c/cbin): DWARF resolution on tests/targets/c_target (path: argv[1], else
 * $C_TARGET, else C_TARGET_DEFAULT from the build) checked against what the target itself
 * prints (offsetof, sizeof) and against its ELF symbols; the error messages; then real entry
 * and return uprobes built from cbin_read expressions, with the entry -> return stash, checked
 * against what the target did: on the executable, and on the shared-object build of the same
 * program (libc_target.so, run by c_target_so, next to the target). Without BPF (not root) the
 * probe tests print "SKIP: ...". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cbin.h"          /* probes/c */
#include "uprobe_loader.h" /* probes */
#include "check.h"

#ifndef C_TARGET_DEFAULT
#define C_TARGET_DEFAULT "build/tests/c_target"
#endif

#define CALLS 2000

static const char *target;
static char target_lib[4096], target_launcher[4096]; /* the shared-object variant */
static unsigned long skipped;
static bool bpf_usable;

/* ---- DWARF ---------------------------------------------------------------------------------- */

/* Every "path offset size" line of `c_target -p` equals cbin_field on struct raft_server. */
static void test_fields_match_offsetof(void)
{
	char cmd[4200], line[256], err[CBIN_ERRBUF_SIZE];
	struct cbin *c = NULL;
	struct cbin_field fld;
	struct cbin_type t;
	unsigned lines = 0;
	FILE *p;

	CHECKF(cbin_open(target, &c, err) == 0, "%s", err);
	if (!c)
		return;
	snprintf(cmd, sizeof(cmd), "'%s' -p", target);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (p && fgets(line, sizeof(line), p)) {
		char path[128];
		unsigned long off, size;

		if (sscanf(line, "sizeof(struct %127[^)]) %lu", path, &size) == 2) {
			char name[160];

			snprintf(name, sizeof(name), "struct %s", path);
			CHECKF(cbin_type_find(c, name, &t, err) == 0 && t.size == size, "%s: %s (size %llu, want %lu)",
			       name, err, (unsigned long long)t.size, size);
			lines++;
		} else if (sscanf(line, "entry.term %lu", &off) == 1) {
			CHECKF(cbin_field(c, "struct entry", "term", &fld, err) == 0 && fld.offset == off, "%s", err);
			lines++;
		} else if (sscanf(line, "%127s %lu %lu", path, &off, &size) == 3) {
			int r = cbin_field(c, "struct raft_server", path, &fld, err);

			CHECKF(r == 0, "%s: %s", path, err);
			CHECKF(r || (fld.offset == off && fld.type.size == size), "%s: offset %llu size %llu, want %lu %lu",
			       path, (unsigned long long)fld.offset, (unsigned long long)fld.type.size, off, size);
			/* The typedef finds the same. */
			CHECKF(cbin_field(c, "raft_server_t", path, &fld, err) == 0 && fld.offset == off, "%s", err);
			lines++;
		}
	}
	CHECK(p && pclose(p) == 0);
	CHECKF(lines == 19, "%u lines from the target", lines);

	/* Types as C spells them, signedness, bit fields. */
	CHECK(cbin_field(c, "struct raft_server", "current_term", &fld, err) == 0);
	CHECKF(strcmp(fld.type.name, "raft_term_t") == 0 && fld.type.is_signed && fld.type.kind == CBIN_T_INT, "%s",
	       fld.type.name);
	CHECK(cbin_field(c, "struct raft_server", "logp", &fld, err) == 0);
	CHECKF(strcmp(fld.type.name, "struct raft_log *") == 0 && fld.type.kind == CBIN_T_POINTER, "%s",
	       fld.type.name);
	CHECK(cbin_field(c, "struct raft_server", "state", &fld, err) == 0);
	CHECKF(strcmp(fld.type.name, "enum raft_state") == 0 && fld.type.size == 4, "%s", fld.type.name);
	CHECK(cbin_field(c, "struct raft_server", "leader", &fld, err) == 0);
	CHECKF(fld.bit_size == 1 && fld.offset * 8 + fld.bit_offset == 128 * 8 + 3, "bit field at %llu.%u size %u",
	       (unsigned long long)fld.offset, fld.bit_offset, fld.bit_size);
	CHECK(cbin_type_find(c, "raft_node_id_t", &t, err) == 0 && t.size == 4 && t.is_signed);
	cbin_close(c);
}

static void test_functions(void)
{
	char err[CBIN_ERRBUF_SIZE];
	struct cbin *c = NULL;
	struct cbin_func f;
	const struct cbin_param *p;
	uint64_t off = 0;

	CHECKF(cbin_open(target, &c, err) == 0, "%s", err);
	if (!c)
		return;
	CHECK(strcmp(cbin_path(c), target) == 0 && strcmp(cbin_debug_path(c), target) == 0);

	CHECKF(cbin_func_find(c, "raft_become_candidate", &f, err) == 0, "%s", err);
	CHECK(uprobe_symbol_offset(target, "raft_become_candidate", &off, err, sizeof(err)) == 0);
	CHECKF(f.file_off == off && f.entry != 0, "file offset 0x%llx, symbol's 0x%llx", (unsigned long long)f.file_off,
	       (unsigned long long)off);
	CHECK(f.external == 1 && f.ninlined == 0 && f.nparams == 2 && !f.variadic && !f.ret_in_memory);
	CHECKF(strcmp(f.ret.name, "raft_term_t") == 0 && f.ret.is_signed && f.ret.size == 8, "%s", f.ret.name);
	CHECKF(strcmp(f.params[0].name, "me") == 0 && strcmp(f.params[0].type.name, "raft_server_t *") == 0 &&
		       f.params[0].loc == CBIN_LOC_REG && f.params[0].reg == UPROBE_SRC_RDI,
	       "%s %s", f.params[0].name, f.params[0].type.name);
	CHECKF(strcmp(f.params[1].name, "node_id") == 0 && strcmp(f.params[1].type.name, "raft_node_id_t") == 0 &&
		       f.params[1].loc == CBIN_LOC_REG && f.params[1].reg == UPROBE_SRC_RSI,
	       "%s %s", f.params[1].name, f.params[1].type.name);

	/* Six registers, then the stack. */
	CHECKF(cbin_func_find(c, "raft_many", &f, err) == 0, "%s", err);
	CHECK(f.nparams == 8 && f.params[5].loc == CBIN_LOC_REG && f.params[5].reg == UPROBE_SRC_R9);
	CHECK((p = cbin_func_param(&f, "f7")) && p->loc == CBIN_LOC_STACK && p->stack_off == 8);
	CHECK((p = cbin_func_param(&f, "g8")) && p->loc == CBIN_LOC_STACK && p->stack_off == 16 && p->type.size == 4);

	/* A 16-byte struct in two registers, a double in xmm0, the next integer in rdx. */
	CHECKF(cbin_func_find(c, "raft_sum_pair", &f, err) == 0, "%s", err);
	CHECK(f.params[0].loc == CBIN_LOC_REG2 && f.params[0].reg == UPROBE_SRC_RDI && f.params[0].reg2 == UPROBE_SRC_RSI);
	CHECK(f.params[1].loc == CBIN_LOC_SSE && f.params[1].type.kind == CBIN_T_FLOAT);
	CHECK(f.params[2].loc == CBIN_LOC_REG && f.params[2].reg == UPROBE_SRC_RDX);

	/* A struct above 16 bytes returned through rdi: k moves to rsi, b is on the stack. */
	CHECKF(cbin_func_find(c, "raft_big", &f, err) == 0, "%s", err);
	CHECK(f.ret_in_memory && f.ret.size == 40);
	CHECK(f.params[0].loc == CBIN_LOC_REG && f.params[0].reg == UPROBE_SRC_RSI);
	CHECK(f.params[1].loc == CBIN_LOC_STACK && f.params[1].stack_off == 8 && f.params[1].type.size == 40);

	/* Static, inlined at its call site and also out of line. */
	CHECKF(cbin_func_find(c, "raft_both_ways", &f, err) == 0, "%s", err);
	CHECKF(f.external == 0 && f.ninlined == 1, "external %d ninlined %u", f.external, f.ninlined);
	CHECK(uprobe_symbol_offset(target, "raft_both_ways", &off, err, sizeof(err)) == 0 && off == f.file_off);

	/* A function named with its source file (how same-named statics are told apart). */
	CHECKF(cbin_func_find(c, "c_target.c:raft_depth", &f, err) == 0 && strcmp(f.name, "raft_depth") == 0, "%s", err);
	CHECKF(cbin_func_find(c, "targets/c_target.c:raft_depth", &f, err) == 0, "%s", err);
	CHECK(cbin_func_find(c, "target.c:raft_depth", &f, err) == -ENOENT);
	CHECKF(strstr(err, "no out-of-line function raft_depth in source file target.c"), "%s", err);
	cbin_close(c);
}

/* Direct call sites (what objdump shows), the recursive call left out, a function whose address
 * is taken said to be; a call site probe reads the arguments as the entry's would. */
static void test_call_sites(void)
{
	char err[CBIN_ERRBUF_SIZE];
	struct cbin *c = NULL;
	struct cbin_func f;
	struct cbin_sites cs;

	CHECKF(cbin_open(target, &c, err) == 0, "%s", err);
	if (!c)
		return;
	CHECKF(cbin_func_find(c, "raft_append_entry", &f, err) == 0, "%s", err);
	CHECKF(cbin_call_sites(c, &f, &cs, err) == 0, "%s", err);
	CHECKF(cs.n == 1 && !cs.address_taken, "raft_append_entry: %zu sites, taken %d", cs.n, cs.address_taken);
	if (cs.n == 1) {
		uint8_t op = 0;
		int fd = open(target, O_RDONLY);
		CHECK(fd >= 0 && pread(fd, &op, 1, (off_t)cs.off[0]) == 1 && op == 0xe8); /* call rel32 */
		if (fd >= 0)
			close(fd);
		CHECK(cs.va[0] != f.entry);
		struct cbin_func caller;
		CHECKF(cbin_func_find(c, "main", &caller, err) == 0, "%s", err);
		CHECK(cbin_function_at(c, cs.va[0]) == caller.entry); /* main calls it */
		CHECK(cbin_function_at(c, f.entry) == f.entry);
		CHECK(cbin_function_at(c, 0) == 0);
	}
	cbin_sites_free(&cs);
	CHECKF(cbin_func_find(c, "raft_depth", &f, err) == 0, "%s", err);
	CHECKF(cbin_call_sites(c, &f, &cs, err) == 0, "%s", err);
	CHECKF(cs.n == 1 && !cs.address_taken, "raft_depth (calls itself once): %zu sites", cs.n);
	cbin_sites_free(&cs);
	CHECKF(cbin_func_find(c, "raft_both_ways", &f, err) == 0, "%s", err);
	CHECKF(cbin_call_sites(c, &f, &cs, err) == 0, "%s", err);
	CHECKF(cs.address_taken, "raft_both_ways is called through raft_both_ways_ptr: %zu sites", cs.n);
	cbin_sites_free(&cs);
	CHECK(!cbin_entry_is_nop5(c, &f));
	cbin_close(c);
}

static void expect_err(int got, int want, const char *err, const char *msg)
{
	CHECKF(got == want, "got %d, want %d (%s)", got, want, err);
	CHECKF(strstr(err, msg) != NULL, "message \"%s\" lacks \"%s\"", err, msg);
}

static void test_errors(void)
{
	char err[CBIN_ERRBUF_SIZE], cmd[8500], stripped[] = "/tmp/test_cbin_stripped.XXXXXX",
					      notelf[] = "/tmp/test_cbin_notelf.XXXXXX";
	const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	struct cbin *c = NULL, *s = NULL;
	struct cbin_field fld;
	struct cbin_type t;
	struct cbin_func f;
	struct uprobe_read r;
	int fd;

	expect_err(cbin_open("/nonexistent/redisraft.so", &c, err), -ENOENT, err, "/nonexistent/redisraft.so");
	CHECK(c == NULL);
	fd = mkstemp(notelf);
	CHECK(fd >= 0 && write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	expect_err(cbin_open(notelf, &c, err), -ENOEXEC, err, "not an ELF file");
	unlink(notelf);

	/* The same program without its debug info. */
	fd = mkstemp(stripped);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' '%s'", target, stripped);
	if (system(cmd) == 0) {
		const char *sb = strrchr(stripped, '/') + 1;
		char want[128];

		snprintf(want, sizeof(want), "%s: no DWARF debug info (build with -g", sb);
		expect_err(cbin_open(stripped, &s, err), -ENODATA, err, want);
	} else {
		printf("SKIP: objcopy failed: no stripped-binary check\n");
		skipped++;
	}
	unlink(stripped);

	CHECKF(cbin_open(target, &c, err) == 0, "%s", err);
	if (!c)
		return;
	expect_err(cbin_func_find(c, "raft_no_such_function", &f, err), -ENOENT, err, "no function raft_no_such_function");
	CHECK(strncmp(err, base, strlen(base)) == 0);
	expect_err(cbin_func_find(c, "raft_inlined_only", &f, err), -EADDRNOTAVAIL, err, "is only inlined");
	expect_err(cbin_field(c, "struct raft_server", "current_termx", &fld, err), -ENOENT, err,
		   "struct raft_server has no field current_termx");
	expect_err(cbin_field(c, "struct raft_server", "log.countx", &fld, err), -ENOENT, err, "has no field countx");
	expect_err(cbin_field(c, "struct raft_server", "logp.count", &fld, err), -EINVAL, err, "a pointer: use ->");
	expect_err(cbin_field(c, "struct raft_server", "peers[3]", &fld, err), -EINVAL, err, "out of bounds");
	expect_err(cbin_field(c, "struct raft_serverx", "current_term", &fld, err), -ENOENT, err,
		   "no type struct raft_serverx");
	expect_err(cbin_type_find(c, "raft_server", &t, err), -ENOENT, err, "needs its keyword");

	/* Reads that cannot be made. */
	CHECK(cbin_func_find(c, "raft_sum_pair", &f, err) == 0);
	expect_err(cbin_read(c, &f, "x", -1, &r, err), -EINVAL, err, "xmm register");
	expect_err(cbin_read(c, &f, "p", -1, &r, err), -EINVAL, err, "two registers");
	CHECK(cbin_func_find(c, "raft_opaque", &f, err) == 0);
	expect_err(cbin_read(c, &f, "me_->current_term", -1, &r, err), -EINVAL, err, "void pointer: cast it");
	CHECK(cbin_func_find(c, "raft_become_candidate", &f, err) == 0);
	expect_err(cbin_read(c, &f, "me->leader", -1, &r, err), -EINVAL, err, "bit field");
	expect_err(cbin_read(c, &f, "mee->current_term", -1, &r, err), -ENOENT, err, "has no parameter mee");
	expect_err(cbin_read(c, &f, "me->log", -1, &r, err), 0, err, ""); /* 32 bytes: a block */
	CHECK(r.kind == UPROBE_READ_BLOCK && r.size == 32 && r.off == 40);
	expect_err(cbin_read(c, &f, "me->peers", -1, &r, err), 0, err, "");
	CHECK(r.kind == UPROBE_READ_BLOCK && r.size == 48);
	expect_err(cbin_read(c, &f, "me->logp->entries->data", -1, &r, err), 0, err, "");
	CHECK(r.kind == UPROBE_READ_BLOCK && r.nderef == 2 && r.deref_off[0] == 72 && r.deref_off[1] == 0 && r.off == 16);
	expect_err(cbin_read(c, &f, "me->logp->entries[3].id", -1, &r, err), 0, err, "");
	CHECK(r.kind == UPROBE_READ_MEM && r.nderef == 2 && r.off == 3 * 24 + 12 && r.size == 4 && !r.flags);
	expect_err(cbin_read(c, &f, "me->logp->entries->term", 4, &r, err), -EINVAL, err, "stash slot out of range");

	/* A void * field cast: ((type *)p->f)->g. */
	CHECK(cbin_func_find(c, "raft_node_touch", &f, err) == 0);
	expect_err(cbin_read(c, &f, "((struct raft_server *)n->udata)->current_term", -1, &r, err), 0, err, "");
	CHECK(r.kind == UPROBE_READ_MEM && r.nderef == 1 && r.deref_off[0] == 8 && r.off == 0 && r.size == 8 &&
	      r.flags == UPROBE_READ_SIGNED);
	expect_err(cbin_read(c, &f, "((raft_server_t *) n->udata)->logp->count", -1, &r, err), 0, err, "");
	CHECK(r.kind == UPROBE_READ_MEM && r.nderef == 2 && r.deref_off[0] == 8 && r.deref_off[1] == 72 && r.off == 8);
	expect_err(cbin_read(c, &f, "((struct raft_server *)n->id)->current_term", -1, &r, err), -EINVAL, err,
		   "casts something that is not a pointer");
	expect_err(cbin_read(c, &f, "((struct raft_server *)n->udata", -1, &r, err), -EINVAL, err,
		   "a cast of a field must be");
	expect_err(cbin_read(c, &f, "((struct raft_server *)n->udata)", -1, &r, err), -EINVAL, err,
		   "a cast needs a dereference after it");
	expect_err(cbin_read(c, &f, "n->udata->current_term", -1, &r, err), -EINVAL, err, "void pointer: cast it");

	/* Enumerators. */
	int64_t ev = -1;
	expect_err(cbin_enum_value(c, "enum raft_state", "LEADER", &ev, err), 0, err, "");
	CHECK(ev == 2);
	expect_err(cbin_enum_value(c, "enum raft_state", "CANDIDATE", &ev, err), 0, err, "");
	CHECK(ev == 1);
	expect_err(cbin_enum_value(c, "enum raft_state", "OBSERVER", &ev, err), -ENOENT, err,
		   "enum enum raft_state has no enumerator OBSERVER");
	expect_err(cbin_enum_value(c, "struct raft_server", "LEADER", &ev, err), -EINVAL, err, "is not an enum");
	cbin_close(c);
}

/* ---- probes --------------------------------------------------------------------------------- */

enum { P_CAND = 1, P_CAND_RET, P_APPEND, P_APPEND_RET, P_MANY, P_BIG, P_OPAQUE, P_DEPTH, P_DEPTH_RET, NPROBES };
enum { S_CAND = 1, S_APPEND, S_DEPTH }; /* stash ids */

struct probe {
	const char *func;
	uint32_t id;
	uint32_t flags;
	uint16_t stash_id;
	uint8_t nstash;
	int slot;               /* expressions read from stash slot 0 (return probes) or not (-1) */
	const char *exprs[12];
};

static const struct probe probes[] = {
	{"raft_become_candidate", P_CAND, 0, S_CAND, 1, -1,
	 {"me", "node_id", "me->current_term", "me->state", "me->idx.commit_idx", "me->logp->count",
	  "me->peers[1].match_idx", "me->u.lo", "me->voted_for"}},
	{"raft_become_candidate", P_CAND_RET, UPROBE_SPEC_RETPROBE, S_CAND, 0, 0,
	 {"return", "me->current_term", "me->voted_for", "me->state"}},
	{"raft_append_entry", P_APPEND, UPROBE_SPEC_STASH_ONLY, S_APPEND, 1, -1, {"me"}},
	{"raft_append_entry", P_APPEND_RET, UPROBE_SPEC_RETPROBE, S_APPEND, 0, 0, {"return", "me->log.count"}},
	{"raft_many", P_MANY, 0, 0, 0, -1, {"a", "f7", "g8", "me->current_term", "e"}},
	{"raft_big", P_BIG, 0, 0, 0, -1, {"k", "b.x", "b.y[3]"}},
	{"raft_opaque", P_OPAQUE, 0, 0, 0, -1,
	 {"(struct raft_server *)me_->current_term", "(raft_server_t *)me_->log.count",
	  "(raft_server_t *) me_->logp->entries[0].term"}},
	{"raft_depth", P_DEPTH, 0, S_DEPTH, 2, -1, {"depth"}},
	{"raft_depth", P_DEPTH_RET, UPROBE_SPEC_RETPROBE, S_DEPTH, 0, 0, {"return", "depth"}},
};

/* Builds probe pr's spec from its expressions. The append return probe also gathers the terms of
 * the last 4 log entries: an ARRAY over me->log.entries counted by me->log.count. */
static int build_spec(const struct cbin *c, const struct probe *pr, struct probe_spec *s, struct cbin_func *f)
{
	char err[CBIN_ERRBUF_SIZE];
	int r = cbin_func_find(c, pr->func, f, err);

	CHECKF(r == 0, "%s", err);
	if (r)
		return r;
	memset(s, 0, sizeof(*s));
	s->flags = pr->flags;
	s->stash_id = pr->stash_id;
	s->nstash = pr->nstash;
	for (unsigned i = 0; i < 12 && pr->exprs[i]; i++) {
		/* "return" is never stashed; the rest of a return probe comes from the stash. */
		int slot = strcmp(pr->exprs[i], "return") == 0 ? -1 : pr->slot;

		r = cbin_read(c, f, pr->exprs[i], slot, &s->reads[s->nreads++], err);
		CHECKF(r == 0, "%s: %s", pr->exprs[i], err);
		if (r)
			return r;
	}
	if (pr->id == P_APPEND_RET) {
		struct cbin_field entries, term;
		struct cbin_type et;
		struct uprobe_read *a = &s->reads[s->nreads];

		r = cbin_field(c, "struct raft_server", "log.entries", &entries, err) ||
		    cbin_field(c, "struct entry", "term", &term, err) || cbin_type_find(c, "struct entry", &et, err);
		CHECKF(r == 0, "%s", err);
		a->src = UPROBE_SRC_STASH;
		a->src_off = 0;
		a->kind = UPROBE_READ_ARRAY;
		a->nderef = 1;
		a->deref_off[0] = (int32_t)entries.offset;
		a->off = (int32_t)term.offset;
		a->stride = (uint16_t)et.size;
		a->len_read = 1; /* me->log.count */
		a->size = 4;
		a->flags = UPROBE_READ_TAIL;
		s->nreads++;
	}
	if (pr->id == P_DEPTH || pr->id == P_DEPTH_RET) {
		/* A stashed read that faults at the entry (me->u.raw is a small number, never a
		 * mapped address) must fault at the return too, not read as 0. */
		struct uprobe_read *b = &s->reads[s->nreads++];

		b->size = 8;
		if (pr->id == P_DEPTH) {
			b->src = UPROBE_SRC_RDI;
			b->kind = UPROBE_READ_MEM;
			b->nderef = 1;
			b->deref_off[0] = 32; /* u (test_fields_match_offsetof checks it) */
		} else {
			b->src = UPROBE_SRC_STASH;
			b->src_off = 1;
			b->kind = UPROBE_READ_VALUE;
		}
	}
	return 0;
}

struct seen {
	unsigned long n[NPROBES];
	unsigned long mismatches, records;
	int depth_calls; /* raft_depth entries seen in the current outer call */
};

static void mismatch(struct seen *sn, const char *what, long i, long long got, long long want)
{
	if (sn->mismatches++ < 10)
		fprintf(stderr, "  mismatch: %s at call %ld: got %lld, want %lld\n", what, i, got, want);
}

#define EXPECT(sn, what, i, got, want)                                                             \
	do {                                                                                       \
		if ((long long)(got) != (long long)(want))                                         \
			mismatch(sn, what, i, (long long)(got), (long long)(want));                \
	} while (0)

/* raft_depth calls of the loop, in order: at i, depths i%4, i%4-1, ..., 0 (entry order), which
 * return in the opposite order. Call k of all entries / of all returns maps to (i, depth). */
static void depth_call(unsigned long k, bool ret, long *i, long *depth)
{
	unsigned long seen = 0;

	for (long j = 0;; j++) {
		unsigned long calls = (unsigned long)(j % 4) + 1;

		if (k < seen + calls) {
			unsigned long m = k - seen;

			*i = j;
			*depth = ret ? (long)m : j % 4 - (long)m;
			return;
		}
		seen += calls;
	}
}

static int on_event(void *ctx, const struct uprobe_event *ev, size_t size)
{
	struct seen *sn = ctx;
	const __u64 *v = ev->val;
	long i, d;

	sn->records++;
	if (ev->probe_id >= NPROBES) {
		mismatch(sn, "probe id", -1, ev->probe_id, 0);
		return 0;
	}
	i = (long)sn->n[ev->probe_id]++;
	switch (ev->probe_id) {
	case P_CAND:
		EXPECT(sn, "cand err", i, ev->err, 0);
		EXPECT(sn, "cand node_id", i, v[1], i % 5 + 1);
		EXPECT(sn, "cand me->current_term", i, v[2], 10 * i);
		EXPECT(sn, "cand me->state", i, v[3], 0);
		EXPECT(sn, "cand me->idx.commit_idx", i, v[4], i);
		EXPECT(sn, "cand me->logp->count", i, v[5], i);
		EXPECT(sn, "cand me->peers[1].match_idx", i, v[6], 2 * i);
		EXPECT(sn, "cand me->u.lo", i, (int64_t)v[7], i ^ 0x55);
		EXPECT(sn, "cand me->voted_for (signed)", i, (int64_t)v[8], -1);
		break;
	case P_CAND_RET:
		EXPECT(sn, "cand ret err", i, ev->err, 0);
		EXPECT(sn, "cand return", i, (int64_t)v[0], 10 * i + 1);
		EXPECT(sn, "cand ret me->current_term", i, v[1], 10 * i + 1);
		EXPECT(sn, "cand ret me->voted_for", i, v[2], i % 5 + 1);
		EXPECT(sn, "cand ret me->state", i, v[3], 1);
		break;
	case P_APPEND_RET: {
		const uint8_t *blk = uprobe_event_block(ev, size, 2);
		long count = i + 1, n = count < 4 ? count : 4;

		EXPECT(sn, "append ret err", i, ev->err, 0);
		EXPECT(sn, "append return", i, (int64_t)v[0], count);
		EXPECT(sn, "append ret me->log.count", i, v[1], count);
		EXPECT(sn, "append ret terms: n", i, v[2], n);
		for (long j = 0; blk && j < 4; j++) {
			uint64_t term;
			long k = count - n + j;

			memcpy(&term, blk + 8 * j, sizeof(term));
			EXPECT(sn, "append ret: log entry term", i * 10 + j, term, j < n ? 10 * k + 1 : 0);
		}
		if (!blk)
			mismatch(sn, "append ret has a block", i, 0, 1);
		break;
	}
	case P_MANY:
		EXPECT(sn, "many err", i, ev->err, 0);
		EXPECT(sn, "many a", i, v[0], i);
		EXPECT(sn, "many f7 (stack)", i, v[1], 6 * i);
		EXPECT(sn, "many g8 (stack)", i, (int64_t)v[2], 7 * i);
		EXPECT(sn, "many me->current_term", i, v[3], 10 * i + 1);
		EXPECT(sn, "many e", i, v[4], 5 * i);
		break;
	case P_BIG:
		EXPECT(sn, "big err", i, ev->err, 0);
		EXPECT(sn, "big k (rsi)", i, v[0], i);
		EXPECT(sn, "big b.x (stack)", i, v[1], 3 * i);
		EXPECT(sn, "big b.y[3] (stack)", i, v[2], i + 3);
		break;
	case P_OPAQUE:
		EXPECT(sn, "opaque err", i, ev->err, 0);
		EXPECT(sn, "opaque current_term", i, v[0], 10 * i + 1);
		EXPECT(sn, "opaque log.count", i, v[1], i + 1);
		EXPECT(sn, "opaque entries[0].term", i, v[2], 1);
		break;
	case P_DEPTH:
		depth_call((unsigned long)i, false, &i, &d);
		EXPECT(sn, "depth entry", i, v[0], d);
		EXPECT(sn, "depth entry err (read 1 faults)", i, ev->err, 1u << 1);
		break;
	case P_DEPTH_RET:
		/* Each return reads the stash of its own frame: recursion does not mix them. */
		depth_call((unsigned long)i, true, &i, &d);
		EXPECT(sn, "depth ret err (the faulted stash slot)", i, ev->err, 1u << 2);
		EXPECT(sn, "depth ret faulted slot", i, v[2], 0);
		EXPECT(sn, "depth return", i, v[0], d);
		EXPECT(sn, "depth stashed at its entry", i, v[1], d);
		break;
	default:
		mismatch(sn, "unexpected probe id", i, ev->probe_id, 0);
	}
	return 0;
}

static int spawn_held(const char *exe, int *go_fd, long calls)
{
	char n[32];
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -errno;
	snprintf(n, sizeof(n), "%ld", calls);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execl(exe, exe, "-w", "-n", n, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

/* Releases the target, drains every 10 ms until it has exited and the ring buffer is empty.
 * Returns its exit status, or -1. */
static int run_and_drain(struct uprobe_loader *l, int pid, int go_fd, struct seen *sn)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};
	int status = -1, r;

	if (write(go_fd, "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go_fd);
	for (int t = 0; t < 12000; t++) {
		CHECKF(uprobe_drain(l, on_event, sn) >= 0, "%s", uprobe_loader_error(l));
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (t == 11999) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&tick, NULL);
	}
	while ((r = uprobe_drain(l, on_event, sn)) > 0)
		;
	CHECKF(r == 0, "final drain: %s", uprobe_loader_error(l));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs exe with probes on the functions of bin (exe itself, or the library it runs). */
static void probe_run(const char *exe, const char *bin)
{
	char err[CBIN_ERRBUF_SIZE];
	struct uprobe_loader *l = NULL;
	struct cbin *c = NULL;
	struct seen sn = {0};
	uint64_t lost = 1;
	int go = -1, pid, status;
	unsigned long depth_calls = 0;

	CHECKF(cbin_open(bin, &c, err) == 0, "%s", err);
	CHECKF(uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0, "%s", err);
	if (!c || !l)
		goto cleanup;
	pid = spawn_held(exe, &go, CALLS);
	CHECK(pid > 0);
	if (pid <= 0)
		goto cleanup;
	for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
		struct probe_spec s;
		struct cbin_func f;

		if (build_spec(c, &probes[k], &s, &f) == 0)
			CHECKF(uprobe_attach(l, bin, f.file_off, probes[k].id, &s, pid) == 0, "%s",
			       uprobe_loader_error(l));
	}
	status = run_and_drain(l, pid, go, &sn);
	CHECKF(status == 0, "target exit status %d", status);
	for (long i = 0; i < CALLS; i++)
		depth_calls += (unsigned long)(i % 4) + 1;
	for (unsigned id = P_CAND; id < NPROBES; id++) {
		unsigned long want = id == P_APPEND ? 0 : id == P_DEPTH || id == P_DEPTH_RET ? depth_calls : CALLS;

		CHECKF(sn.n[id] == want, "probe %u: %lu records, want %lu", id, sn.n[id], want);
	}
	CHECKF(sn.mismatches == 0, "%lu mismatched values", sn.mismatches);
	CHECK(uprobe_losses(l, &lost) == 0 && lost == 0);
	printf("  (%s: %lu records from %d calls of 7 functions; entry, return and stashed values as the target did)\n",
	       strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin, sn.records, CALLS);
cleanup:
	uprobe_loader_close(l);
	cbin_close(c);
}

static bool have_lib(const char *test)
{
	if (access(target_lib, R_OK) == 0 && access(target_launcher, X_OK) == 0)
		return true;
	printf("SKIP: %s: no %s or %s\n", test, target_lib, target_launcher);
	skipped++;
	return false;
}

static void test_probes(void)
{
	if (!bpf_usable) {
		printf("SKIP: %s: BPF not usable here (need root or CAP_BPF+CAP_PERFMON)\n", __func__);
		skipped++;
		return;
	}
	probe_run(target, target);
}

static void test_probes_shared_object(void)
{
	if (!have_lib(__func__))
		return;
	if (!bpf_usable) {
		printf("SKIP: %s: BPF not usable here (need root or CAP_BPF+CAP_PERFMON)\n", __func__);
		skipped++;
		return;
	}
	probe_run(target_launcher, target_lib);
}

/* In a shared object too, the file offset is where the symbol's code is in the file. */
static void test_shared_object(void)
{
	static const char *const funcs[] = {"raft_become_candidate", "raft_append_entry", "raft_depth", "raft_opaque"};
	char err[CBIN_ERRBUF_SIZE];
	struct cbin *c = NULL;
	struct cbin_field fld;
	struct cbin_func f;
	uint64_t off;

	if (!have_lib(__func__))
		return;
	CHECKF(cbin_open(target_lib, &c, err) == 0, "%s", err);
	if (!c)
		return;
	for (size_t k = 0; k < sizeof(funcs) / sizeof(funcs[0]); k++) {
		CHECKF(cbin_func_find(c, funcs[k], &f, err) == 0, "%s", err);
		CHECK(uprobe_symbol_offset(target_lib, funcs[k], &off, err, sizeof(err)) == 0);
		CHECKF(f.file_off == off, "%s: 0x%llx, symbol 0x%llx", funcs[k], (unsigned long long)f.file_off,
		       (unsigned long long)off);
	}
	CHECK(cbin_field(c, "struct raft_server", "peers[1].match_idx", &fld, err) == 0 && fld.offset == 104);
	cbin_close(c);
}

/* The loader's checks of the stash fields. */
static void test_stash_checks(void)
{
	struct uprobe_loader *l = NULL;
	struct probe_spec s;
	char err[300];
	uint64_t off = 0;

	if (!bpf_usable) {
		printf("SKIP: %s: BPF not usable here\n", __func__);
		skipped++;
		return;
	}
	CHECK(uprobe_symbol_offset(target, "raft_opaque", &off, err, sizeof(err)) == 0);
	CHECKF(uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0, "%s", err);
	if (!l)
		return;
	memset(&s, 0, sizeof(s));
	s.nreads = 1;
	s.reads[0].kind = UPROBE_READ_VALUE;
	s.reads[0].size = 8;
	s.reads[0].src = UPROBE_SRC_STASH;
	s.reads[0].src_off = 4;
	s.stash_id = 1;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "stash value 4 not in 0..3"), "%s", uprobe_loader_error(l));
	s.reads[0].src_off = 0;
	s.stash_id = 0;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "stash_id is 0"), "%s", uprobe_loader_error(l));
	s.stash_id = 1;
	s.nstash = 1;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "both saves a stash and reads one"), "%s", uprobe_loader_error(l));
	s.reads[0].src = UPROBE_SRC_RDI;
	s.nstash = 2;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "stashes 2 reads"), "%s", uprobe_loader_error(l));
	s.nstash = 0;
	s.flags = UPROBE_SPEC_STASH_ONLY;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "stashes nothing"), "%s", uprobe_loader_error(l));
	s.flags = 0;
	s.nstash = 1;
	s.reads[0].kind = UPROBE_READ_BLOCK;
	CHECK(uprobe_attach(l, target, off, 1, &s, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "stashed read must be VALUE or MEM"), "%s", uprobe_loader_error(l));
	s.reads[0].kind = UPROBE_READ_VALUE;
	CHECKF(uprobe_attach(l, target, off, 1, &s, -1) == 0, "%s", uprobe_loader_error(l));
	uprobe_loader_close(l);
}

int main(int argc, char **argv)
{
	struct uprobe_loader *l = NULL;
	char err[300];

	target = argc > 1 ? argv[1] : getenv("C_TARGET");
	if (!target || !*target)
		target = C_TARGET_DEFAULT;
	{
		const char *slash = strrchr(target, '/');
		int dir = slash ? (int)(slash - target + 1) : 0;

		snprintf(target_lib, sizeof(target_lib), "%.*slibc_target.so", dir, target);
		snprintf(target_launcher, sizeof(target_launcher), "%.*sc_target_so", dir, target);
	}
	if (access(target, X_OK) != 0) {
		fprintf(stderr, "test_cbin: target %s: %s\n", target, strerror(errno));
		check_failed++;
		TEST_MAIN_END("test_cbin");
	}
	bpf_usable = uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0;
	if (!bpf_usable)
		printf("BPF not usable: %s\n", err);
	/* As root, a program the verifier rejects is a failure, not a skip. */
	CHECKF(bpf_usable || geteuid() != 0, "root, yet the uprobe program does not load: %s", err);
	uprobe_loader_close(l);

	RUN(test_fields_match_offsetof);
	RUN(test_functions);
	RUN(test_call_sites);
	RUN(test_errors);
	RUN(test_shared_object);
	RUN(test_probes);
	RUN(test_probes_shared_object);
	RUN(test_stash_checks);
	if (skipped)
		printf("test_cbin: %lu skipped\n", skipped);
	TEST_MAIN_END("test_cbin");
}
