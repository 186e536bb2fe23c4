/* Tests of the Go binary reader (probes/go/gobin*.c) on Debian's /usr/bin/etcd (stripped, cgo,
 * go1.19.8) and on tests/go/sample, built here offline in several forms; the unstripped builds
 * are checked function by function against their .symtab and `go tool objdump`. Needs etcd-server
 * and golang-go; run from the repository root (or set GOBIN_TEST_SAMPLE to tests/go/sample). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cluster.h"
#include "gobin.h"

#define ETCD (etcd_programs[ETCD_PROG_ETCD].path)
#define RAFT "go.etcd.io/etcd/raft.(*raft)."

static char tmpdir[64];
static char sample_src[4096];
static bool sample_built; /* sample, sample_pie, sample_s exist in tmpdir */

static char *tmp_path(const char *name)
{
	static char p[8][256];
	static unsigned k;
	char *s = p[k++ % 8];
	snprintf(s, sizeof(p[0]), "%s/%s", tmpdir, name);
	return s;
}

static bool has(const char *hay, const char *needle) { return hay && strstr(hay, needle); }

/* Reads n bytes at file offset off. */
static bool pread_all(const char *path, uint64_t off, void *dst, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t r = pread(fd, dst, n, (off_t)off);
	close(fd);
	return r == (ssize_t)n;
}

/* The file offset of va through the SECTION headers (independent of gobin's program-header
 * mapping). */
static bool section_off(const char *path, uint64_t va, uint64_t *off)
{
	bool ok = false;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) &&
		    va >= sh.sh_addr && va - sh.sh_addr < sh.sh_size) {
			*off = sh.sh_offset + (va - sh.sh_addr);
			ok = true;
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

/* A function symbol table: name -> value, from .symtab. */
struct sym {
	char *name;
	uint64_t value, size;
};
struct symtab {
	struct sym *v;
	size_t n;
	uint64_t text_addr; /* .text section start */
};

static int cmp_sym(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

static bool load_symtab(const char *path, struct symtab *t)
{
	memset(t, 0, sizeof(*t));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr = 0;
	Elf_Scn *scn = NULL;
	if (e)
		elf_getshdrstrndx(e, &shstr);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *sn = elf_strptr(e, shstr, sh.sh_name);
		if (sn && !strcmp(sn, ".text"))
			t->text_addr = sh.sh_addr;
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_size / sh.sh_entsize;
		t->v = calloc(n, sizeof(*t->v));
		for (size_t i = 0; d && t->v && i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC && strcmp(name, "runtime.text"))
				continue;
			t->v[t->n++] = (struct sym){ strdup(name), s.st_value, s.st_size };
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	qsort(t->v, t->n, sizeof(*t->v), cmp_sym);
	return t->n > 0;
}

static const struct sym *find_sym(const struct symtab *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	return NULL;
}

/* A .symtab name as the pclntab spells it: without the ".abi0" suffix of assembly and ABI0
 * wrappers, and with every top-level [...] (generic type arguments, array lengths) as "[...]". */
static void pcln_spelling(const char *sym, char *out, size_t cap)
{
	size_t w = 0;
	int depth = 0;
	for (const char *c = sym; *c && w + 6 < cap; c++) {
		if (*c == '[') {
			if (depth++ == 0) {
				memcpy(out + w, "[...]", 5);
				w += 5;
			}
		} else if (*c == ']') {
			depth--;
		} else if (depth == 0) {
			out[w++] = *c;
		}
	}
	out[w] = '\0';
	if (w > 5 && !strcmp(out + w - 5, ".abi0"))
		out[w - 5] = '\0';
}

/* Whether a .symtab function at entry is spelled name in the pclntab. */
static bool symtab_has(const struct symtab *t, uint64_t entry, const char *name, uint64_t end)
{
	char buf[2048];
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].value != entry)
			continue;
		pcln_spelling(t->v[i].name, buf, sizeof(buf));
		if (!strcmp(buf, name) && entry + t->v[i].size <= end)
			return true;
	}
	return false;
}

static void free_symtab(struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

/* A function with no RET and no tail jump must not fall off its end: its last instruction is an
 * unconditional transfer (the morestack "jmp entry", a loop, int3/ud2 after a no-return call),
 * or the NOP the runtime's assembly puts after a no-return call. */
static bool known_noreturn(const struct gobin_sites *s)
{
	static const char *const ends[] = { "jmp", "ud2", "int3", "int", "hlt", "call" };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (!strcmp(s->last_mnemonic, ends[i]))
			return true;
	/* runtime assembly: CALL of a no-return function, then a NOP (runtime.goexit) */
	return !strcmp(s->last_mnemonic, "nop") && s->ncall > 0;
}

/* ---- etcd ---- */

static void test_etcd_open(void)
{
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	int rc = gobin_open(ETCD, &g, err);
	CHECKF(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(!strcmp(gobin_pclntab_layout(g), "go1.18"));
	CHECK(gobin_pclntab_from_section(g));
	/* facts.md: runtime.text is 0x4023e0, 0x100 past .text (cgo code comes first) */
	CHECKF(gobin_text_start(g) == 0x4023e0, "text start 0x%llx",
	       (unsigned long long)gobin_text_start(g));
	CHECKF(!strcmp(gobin_go_version(g), "go1.19.8"), "go version %s", gobin_go_version(g));
	/* Debian builds etcd in GOPATH mode: a "path" line and build settings, no "mod" line */
	CHECK(has(gobin_main_path(g), "go.etcd.io/etcd"));
	CHECK(gobin_main_module(g) == NULL && gobin_dep_count(g) == 0);
	CHECK(has(gobin_build_setting(g, "CGO_ENABLED"), "1"));
	CHECK(has(gobin_build_setting(g, "GOARCH"), "amd64"));
	CHECK(has(gobin_build_setting(g, "-compiler"), "gc"));
	CHECK(gobin_build_setting(g, "nonexistent") == NULL);
	size_t n = gobin_func_count(g), raft = 0;
	struct gobin_func f;
	for (size_t i = 0; i < n; i++)
		if (gobin_func_at(g, i, &f) == 0 && strstr(f.name, "raft"))
			raft++;
	CHECKF(n == 26837, "%zu functions", n);
	CHECKF(raft == 631, "%zu raft functions", raft);
	CHECK(gobin_func_at(g, n, &f) == -ERANGE);
	printf("    etcd: %s, %zu functions, %zu with \"raft\", runtime.text 0x%llx, main path %s\n",
	       gobin_go_version(g), n, raft, (unsigned long long)gobin_text_start(g),
	       gobin_main_path(g));
	gobin_close(g);
}

static void check_raft_func(struct gobin *g, const char *method)
{
	char name[256], err[GOBIN_ERRBUF_SIZE];
	snprintf(name, sizeof(name), RAFT "%s", method);
	struct gobin_func f;
	int rc = gobin_func_find(g, name, &f, err);
	CHECKF(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(!strcmp(f.name, name));
	CHECK(f.entry < f.end && f.end - f.entry < 65536);
	/* machine code at the file offset == the code at the address through the section headers */
	uint8_t a[32], b[32], c[32];
	uint64_t soff = 0;
	CHECK(section_off(ETCD, f.entry, &soff));
	CHECKF(soff == f.file_off, "%s: section offset 0x%llx, gobin 0x%llx", name,
	       (unsigned long long)soff, (unsigned long long)f.file_off);
	CHECK(pread_all(ETCD, f.file_off, a, sizeof(a)));
	CHECK(pread_all(ETCD, soff, b, sizeof(b)));
	CHECK(gobin_read(g, f.entry, c, sizeof(c)) == 0);
	CHECK(!memcmp(a, b, sizeof(a)) && !memcmp(a, c, sizeof(a)));
	/* a Go prologue: the stack-bound check against g (R14) */
	struct gobin_sites s;
	rc = gobin_sites(g, &f, &s, err);
	CHECKF(rc == 0, "%s", err);
	if (rc)
		return;
	CHECKF(!strncmp(s.entry_text, "lea r12, [rsp - ", 16) ||
		       !strcmp(s.entry_text, "cmp rsp, qword ptr [r14 + 0x10]"),
	       "%s starts with %s", name, s.entry_text);
	CHECK(s.entry_kind == GOBIN_SITE_OTHER && s.entry_off == f.file_off && s.entry_len > 0);
	/* The stack check's jbe: right after the cmp (4 bytes), after lea (8) + cmp when there is one. */
	uint64_t jbe_at = f.entry + (!strncmp(s.entry_text, "lea", 3) ? 12 : 4);
	uint8_t jbe[2] = { 0, 0 };
	CHECKF(s.entry_branch_va == jbe_at && s.entry_branch_off == f.file_off + (jbe_at - f.entry), "%s: jbe at 0x%llx",
	       name, (unsigned long long)s.entry_branch_va);
	CHECK(pread_all(ETCD, s.entry_branch_off, jbe, 2) && (jbe[0] == 0x76 || (jbe[0] == 0x0f && jbe[1] == 0x86)));
	CHECKF(s.nret >= 1, "%s has no RET", name);
	for (size_t i = 0; i < s.nret; i++) {
		uint8_t op = 0;
		CHECK(pread_all(ETCD, s.ret_off[i], &op, 1) && op == 0xc3);
		CHECK(s.ret_va[i] > f.entry && s.ret_va[i] < f.end);
		CHECK(s.ret_off[i] - f.file_off == s.ret_va[i] - f.entry);
	}
	struct gobin_func h;
	CHECK(gobin_func_by_addr(g, f.entry + 1, &h) == 0 && h.entry == f.entry);
	CHECK(gobin_func_by_addr(g, f.end - 1, &h) == 0 && h.entry == f.entry);
	printf("    %-55s entry 0x%llx file 0x%llx %-5s (%s) RETs %zu\n", name,
	       (unsigned long long)f.entry, (unsigned long long)f.file_off,
	       gobin_site_kind_name(s.entry_kind), s.entry_mnemonic, s.nret);
	gobin_sites_free(&s);
}

static void test_etcd_raft_functions(void)
{
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	if (gobin_open(ETCD, &g, err)) {
		CHECKF(0, "%s", err);
		return;
	}
	check_raft_func(g, "becomeLeader");
	check_raft_func(g, "Step");
	check_raft_func(g, "becomeFollower");
	check_raft_func(g, "becomeCandidate");
	struct gobin_func f;
	int rc = gobin_func_find(g, RAFT "noSuchMethod", &f, err);
	CHECK(rc == -ENOENT);
	CHECKF(has(err, ETCD) && has(err, "noSuchMethod") && has(err, "no function named"), "%s",
	       err);
	CHECK(gobin_func_by_addr(g, 0x10, &f) == -ENOENT);
	/* generic instances share a "[...]" name: ambiguous, and said so */
	rc = gobin_func_find(g, "type..eq.[...]interface {}", &f, err);
	CHECKF(rc == -ENOTUNIQ && has(err, "gobin_func_find_all"), "%d %s", rc, err);
	CHECK(gobin_func_find_all(g, "type..eq.[...]interface {}", NULL, 0) > 1);
	gobin_close(g);
}

/* Every function: sorted, in the executable segment, findable by name, and with a RET, a tail
 * jump, or a no-return ending. */
static void test_etcd_all_functions(void)
{
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	if (gobin_open(ETCD, &g, err)) {
		CHECKF(0, "%s", err);
		return;
	}
	size_t n = gobin_func_count(g), bad_order = 0, bad_find = 0, bad_sites = 0, bad_end = 0;
	size_t nret = 0, ntail = 0, nnoret = 0, nbad_fn = 0, nbad_go = 0, kinds[4] = { 0 };
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		struct gobin_func f, h;
		gobin_func_at(g, i, &f);
		if (f.entry < prev || f.end < f.entry || !f.name[0])
			bad_order++;
		prev = f.end;
		struct gobin_func all[16];
		size_t k = gobin_func_find_all(g, f.name, all, 16), hit = 0;
		for (size_t j = 0; j < k && j < 16; j++)
			hit += all[j].entry == f.entry && !strcmp(all[j].name, f.name);
		if (hit != 1 && k <= 16)
			bad_find++;
		if (k == 1 && (gobin_func_find(g, f.name, &h, NULL) || h.entry != f.entry))
			bad_find++;
		if (f.end == f.entry)
			continue;
		struct gobin_sites s;
		if (gobin_sites(g, &f, &s, err)) {
			if (bad_sites++ < 5)
				fprintf(stderr, "%s\n", err);
			continue;
		}
		kinds[s.entry_kind]++;
		if (s.nbad) {
			nbad_fn++;
			nbad_go += !strncmp(f.name, "go.etcd.io/", 11);
		}
		if (s.nret)
			nret++;
		else if (s.ntail)
			ntail++;
		else if (known_noreturn(&s))
			nnoret++;
		else if (bad_end++ < 5)
			fprintf(stderr, "%s: no RET, ends with %s\n", f.name, s.last_mnemonic);
		gobin_sites_free(&s);
	}
	CHECK(bad_order == 0);
	CHECK(bad_find == 0);
	CHECK(bad_sites == 0);
	CHECKF(bad_end == 0, "%zu functions neither return nor end in a transfer", bad_end);
	CHECK(nbad_go == 0 && nbad_fn <= 5);
	CHECK(nret + ntail + nnoret + bad_end + bad_sites <= n && nret > n * 9 / 10);
	printf("    etcd: %zu with RET, %zu leave by tail jump only, %zu never return; entry kinds: "
	       "nop5 %zu, nop1 %zu, push rbp %zu, other %zu; %zu assembly functions capstone "
	       "could not fully decode\n",
	       nret, ntail, nnoret, kinds[0], kinds[1], kinds[2], kinds[3], nbad_fn);
	gobin_close(g);
}

/* ---- errors ---- */

static void test_errors(void)
{
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = (struct gobin *)&err; /* must be reset to NULL */
	int rc = gobin_open("/nonexistent/etcd", &g, err);
	CHECK(rc == -ENOENT && g == NULL);
	CHECKF(has(err, "/nonexistent/etcd") && has(err, "cannot open"), "%s", err);

	const char *txt = tmp_path("notelf.txt");
	FILE *fp = fopen(txt, "w");
	if (fp) {
		fputs("this is a text file, long enough to hold an ELF header but it is not one.\n",
		      fp);
		fclose(fp);
	}
	rc = gobin_open(txt, &g, err);
	CHECK(rc == -ENOEXEC);
	CHECKF(has(err, txt) && has(err, "not an ELF file"), "%s", err);

	const char *empty = tmp_path("empty");
	fp = fopen(empty, "w");
	if (fp)
		fclose(fp);
	rc = gobin_open(empty, &g, err);
	CHECKF(rc == -ENOEXEC && has(err, "not an ELF file"), "%s", err);
	rc = gobin_open(tmpdir, &g, err);
	CHECKF(rc == -ENOEXEC && has(err, "not a regular file"), "%s", err);

	rc = gobin_open("/bin/true", &g, err);
	CHECK(rc == -ENOEXEC);
	CHECKF(has(err, "/bin/true") && has(err, "not a Go binary"), "%s", err);
	CHECK(gobin_open("/bin/true", &g, NULL) == -ENOEXEC); /* errbuf is optional */
}

/* ---- our own Go program ---- */

static bool run(const char *cmd)
{
	int st = system(cmd);
	return st == 0;
}

/* Builds tests/go/sample three ways: plain (with .symtab), PIE, and -ldflags=-s. */
static void build_sample(void)
{
	const char *src = getenv("GOBIN_TEST_SAMPLE") ? getenv("GOBIN_TEST_SAMPLE") : "tests/go/sample";
	if (!realpath(src, sample_src)) {
		CHECKF(0, "%s not found: run from the repository root", src);
		return;
	}
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && if [ -z \"${GOCACHE:-}\" ] && [ -z \"${HOME:-}\" ]; then "
		 "export GOCACHE=/tmp/spectap-gocache; fi && "
		 "export GO111MODULE=off GOPATH='%s/gopath' GOPROXY=off GOFLAGS= CGO_ENABLED=1 && "
		 "go build -o '%s/sample' . && go build -buildmode=pie -o '%s/sample_pie' . && "
		 "go build -ldflags=-s -o '%s/sample_s' . && '%s/sample' >/dev/null",
		 sample_src, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	sample_built = run(cmd);
	CHECKF(sample_built, "go build of %s failed (golang-go installed?)", sample_src);
}

/* Every pclntab function of path against .symtab: same name, same entry; runtime.text matches. */
static void check_against_symtab(const char *path)
{
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	struct symtab t;
	if (gobin_open(path, &g, err)) {
		CHECKF(0, "%s", err);
		return;
	}
	CHECKF(load_symtab(path, &t), "%s has no .symtab", path);
	const struct sym *rt = find_sym(&t, "runtime.text");
	CHECK(rt && rt->value == gobin_text_start(g));
	CHECKF(t.text_addr != gobin_text_start(g), "cgo code should come before runtime.text");
	size_t n = gobin_func_count(g), wrong = 0, wrappers = 0;
	for (size_t i = 0; i < n; i++) {
		struct gobin_func f;
		gobin_func_at(g, i, &f);
		uint64_t off;
		wrappers += f.wrapper;
		if (!symtab_has(&t, f.entry, f.name, f.end) || !section_off(path, f.entry, &off) ||
		    off != f.file_off) {
			if (wrong++ < 5)
				fprintf(stderr, "%s: no .symtab function %s at 0x%llx\n", path, f.name,
					(unsigned long long)f.entry);
		}
	}
	CHECKF(wrong == 0, "%s: %zu of %zu functions not in .symtab at their entry", path, wrong, n);
	/* an ABI wrapper shares its function's name: find() returns the function, not the
	 * wrapper; .symtab names the assembly body runtime.reflectcall.abi0 */
	struct gobin_func f, all[4];
	CHECK(gobin_func_find_all(g, "runtime.reflectcall", all, 4) == 2);
	CHECK(gobin_func_find(g, "runtime.reflectcall", &f, err) == 0 && !f.wrapper);
	const struct sym *body = find_sym(&t, "runtime.reflectcall.abi0");
	CHECK(body && body->value == f.entry);
	CHECK(wrappers > 0);
	printf("    %s: %zu functions, all at their .symtab address (runtime.text 0x%llx, "
	       ".text 0x%llx)\n",
	       strrchr(path, '/') + 1, n, (unsigned long long)gobin_text_start(g),
	       (unsigned long long)t.text_addr);
	free_symtab(&t);
	gobin_close(g);
}

static void test_sample_symtab(void)
{
	if (!sample_built)
		return;
	check_against_symtab(tmp_path("sample"));
	check_against_symtab(tmp_path("sample_pie"));
}

/* `go tool objdump -s '^main\.'`: every TEXT symbol's first instruction address. */
static void test_sample_objdump(void)
{
	if (!sample_built)
		return;
	char cmd[512], err[GOBIN_ERRBUF_SIZE];
	snprintf(cmd, sizeof(cmd), "go tool objdump -s '^main\\.' '%s'", tmp_path("sample"));
	FILE *p = popen(cmd, "r");
	struct gobin *g = NULL;
	int rc = gobin_open(tmp_path("sample"), &g, err);
	CHECKF(rc == 0, "%s", err);
	if (!p || rc) {
		if (p)
			pclose(p);
		gobin_close(g);
		return;
	}
	char line[1024], name[1024] = "";
	size_t seen = 0, ok = 0;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "TEXT ", 5)) {
			char *end = strstr(line, "(SB)");
			if (end) {
				*end = '\0';
				snprintf(name, sizeof(name), "%s", line + 5);
			}
			continue;
		}
		char *hex = strstr(line, "\t0x");
		if (!name[0] || !hex)
			continue;
		uint64_t addr = strtoull(hex + 1, NULL, 16);
		char spelled[1024];
		struct gobin_func all[4];
		pcln_spelling(name, spelled, sizeof(spelled));
		size_t k = gobin_func_find_all(g, spelled, all, 4), hit = 0;
		for (size_t j = 0; j < k && j < 4; j++)
			hit += all[j].entry == addr;
		seen++;
		if (hit == 1)
			ok++;
		else
			fprintf(stderr, "objdump: %s at 0x%llx not found\n", name,
				(unsigned long long)addr);
		name[0] = '\0';
	}
	CHECK(pclose(p) == 0);
	CHECKF(seen >= 5 && ok == seen, "%zu of %zu objdump entries match", ok, seen);
	printf("    go tool objdump: %zu main.* functions, %zu at the same entry\n", seen, ok);
	gobin_close(g);
}

static void test_sample_functions(void)
{
	if (!sample_built)
		return;
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	if (gobin_open(tmp_path("sample"), &g, err)) {
		CHECKF(0, "%s", err);
		return;
	}
	FILE *p = popen("go env GOVERSION", "r");
	char ver[64] = "";
	if (p) {
		if (!fgets(ver, sizeof(ver), p))
			ver[0] = '\0';
		pclose(p);
	}
	ver[strcspn(ver, "\n")] = '\0';
	CHECKF(!strcmp(gobin_go_version(g), ver), "%s vs go env %s", gobin_go_version(g), ver);
	CHECK(has(gobin_main_path(g), "tests/go/sample"));
	CHECK(has(gobin_build_setting(g, "CGO_ENABLED"), "1"));
	static const char *const names[] = { "main.main", "main.add", "main.(*counter).incr",
					     "main.classify", "main.fail" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct gobin_func f;
		struct gobin_sites s;
		int rc = gobin_func_find(g, names[i], &f, err);
		CHECKF(rc == 0, "%s", err);
		if (rc || gobin_sites(g, &f, &s, err)) {
			CHECKF(0, "%s", err);
			continue;
		}
		if (!strcmp(names[i], "main.fail"))
			CHECKF(s.nret == 0 && s.ncall >= 1 && known_noreturn(&s), "fail: %zu RETs",
			       s.nret);
		else
			CHECKF(s.nret >= 1, "%s: no RET", names[i]);
		if (!strcmp(names[i], "main.classify")) /* three return statements */
			CHECKF(s.nret == 3, "classify: %zu RETs", s.nret);
		for (size_t k = 0; k < s.nret; k++) {
			uint8_t op = 0;
			CHECK(pread_all(tmp_path("sample"), s.ret_off[k], &op, 1) && op == 0xc3);
		}
		printf("    %-22s entry 0x%llx file 0x%llx first \"%s\" (%s), RETs %zu\n", names[i],
		       (unsigned long long)f.entry, (unsigned long long)f.file_off, s.entry_text,
		       gobin_site_kind_name(s.entry_kind), s.nret);
		gobin_sites_free(&s);
	}
	gobin_close(g);

	/* stripped of .symtab: the table and the functions are still there */
	if (gobin_open(tmp_path("sample_s"), &g, err)) {
		CHECKF(0, "%s", err);
		return;
	}
	struct gobin_func f;
	CHECK(gobin_func_find(g, "main.classify", &f, NULL) == 0);
	CHECK(!strcmp(gobin_go_version(g), ver));
	gobin_close(g);
}

/* Copies src to dst, applying fn to the bytes. */
static bool copy_patched(const char *src, const char *dst, void (*fn)(uint8_t *, size_t))
{
	FILE *in = fopen(src, "rb");
	if (!in)
		return false;
	fseek(in, 0, SEEK_END);
	long n = ftell(in);
	fseek(in, 0, SEEK_SET);
	uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
	bool ok = b && fread(b, 1, (size_t)n, in) == (size_t)n;
	fclose(in);
	if (ok) {
		fn(b, (size_t)n);
		FILE *out = fopen(dst, "wb");
		ok = out && fwrite(b, 1, (size_t)n, out) == (size_t)n;
		if (out)
			ok = fclose(out) == 0 && ok;
	}
	free(b);
	return ok;
}

static void drop_section_headers(uint8_t *b, size_t n)
{
	Elf64_Ehdr *h = (Elf64_Ehdr *)b;
	if (n < sizeof(*h))
		return;
	h->e_shoff = 0;
	h->e_shnum = 0;
	h->e_shstrndx = 0;
}

static uint8_t *find_bytes(uint8_t *b, size_t n, const void *pat, size_t len)
{
	return memmem(b, n, pat, len);
}

static void old_pclntab_magic(uint8_t *b, size_t n)
{
	static const uint8_t magic[8] = { 0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	uint8_t *p = find_bytes(b, n, magic, 8);
	if (p)
		p[0] = 0xfa; /* Go 1.16-1.17 */
	drop_section_headers(b, n);
}

static void old_buildinfo(uint8_t *b, size_t n)
{
	uint8_t *p = find_bytes(b, n, "\xff Go buildinf:", 14);
	if (p)
		p[15] = 0; /* flags: pointer format */
}

/* With no section headers at all, both tables are found by their magic, with the same result. */
/* gobin_spilled_at: the receiver (rax, spill slot rsp+8) at every RET of a method that saves
 * it before any path can return, and not at the RET of the path that returns before it does. */
static void test_sample_spills(void)
{
	if (!sample_built)
		return;
	char err[GOBIN_ERRBUF_SIZE];
	struct gobin *g = NULL;
	CHECKF(gobin_open(tmp_path("sample"), &g, err) == 0, "%s", err);
	if (!g)
		return;
	static const char *const names[] = { "main.(*counter).saved", "main.(*counter).savedLate" };
	for (int k = 0; k < 2; k++) {
		struct gobin_func f;
		struct gobin_sites s;
		bool ok[32] = { 0 }, tail[32] = { 0 };
		CHECKF(gobin_func_find(g, names[k], &f, err) == 0, "%s", err);
		if (gobin_sites(g, &f, &s, err)) {
			CHECKF(0, "%s", err);
			continue;
		}
		CHECK(s.nret >= 1 && s.nret < 32 && s.ntail < 32);
		CHECKF(gobin_spilled_at(g, &f, &s, 0, 8, ok, tail, err) == 0, "%s", err);
		size_t saved = 0;
		for (size_t i = 0; i < s.nret && i < 32; i++)
			saved += ok[i];
		if (k == 0)
			CHECKF(saved == s.nret, "%s: %zu of %zu RET sites see the receiver saved", names[k], saved, s.nret);
		else
			CHECKF(saved >= 1 && saved < s.nret, "%s: %zu of %zu RET sites see the receiver saved (the early "
			       "return must not)", names[k], saved, s.nret);
		/* Another register (rbx, the argument) is not saved at rsp+8. */
		CHECK(gobin_spilled_at(g, &f, &s, 3, 8, ok, tail, err) == 0 && !ok[0]);
		gobin_sites_free(&s);
	}
	gobin_close(g);
}

static void test_sample_no_sections(void)
{
	if (!sample_built)
		return;
	char err[GOBIN_ERRBUF_SIZE];
	const char *orig = tmp_path("sample"), *bare = tmp_path("sample_bare");
	CHECK(copy_patched(orig, bare, drop_section_headers));
	struct gobin *a = NULL, *b = NULL;
	int rc = gobin_open(orig, &a, err);
	CHECKF(rc == 0, "%s", err);
	int rc2 = gobin_open(bare, &b, err);
	CHECKF(rc2 == 0, "%s", err);
	if (!rc && !rc2) {
		CHECK(gobin_pclntab_from_section(a) && !gobin_pclntab_from_section(b));
		CHECK(gobin_func_count(a) == gobin_func_count(b));
		CHECK(gobin_text_start(a) == gobin_text_start(b));
		size_t diff = 0;
		for (size_t i = 0; i < gobin_func_count(a) && i < gobin_func_count(b); i++) {
			struct gobin_func fa, fb;
			gobin_func_at(a, i, &fa);
			gobin_func_at(b, i, &fb);
			diff += strcmp(fa.name, fb.name) || fa.entry != fb.entry || fa.end != fb.end ||
				fa.file_off != fb.file_off;
		}
		CHECK(diff == 0);
		CHECK(!strcmp(gobin_go_version(a), gobin_go_version(b)));
		CHECK(!strcmp(gobin_modinfo(a), gobin_modinfo(b)));
	}
	gobin_close(a);
	gobin_close(b);

	/* a pre-1.18 pclntab magic and a pre-1.18 buildinfo are refused by name */
	const char *old = tmp_path("sample_old");
	CHECK(copy_patched(orig, old, old_pclntab_magic));
	rc = gobin_open(old, &a, err);
	CHECKF(rc == -ENOTSUP && has(err, "older than Go 1.18") && has(err, "0xfffffffa"), "%s",
	       err);
	CHECK(copy_patched(orig, old, old_buildinfo));
	rc = gobin_open(old, &a, err);
	CHECKF(rc == -ENOTSUP && has(err, "before 1.18") && has(err, ".go.buildinfo"), "%s", err);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_gobin.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_etcd_open);
	RUN(test_etcd_raft_functions);
	RUN(test_etcd_all_functions);
	RUN(test_errors);
	RUN(build_sample);
	RUN(test_sample_symtab);
	RUN(test_sample_objdump);
	RUN(test_sample_functions);
	RUN(test_sample_no_sections);
	RUN(test_sample_spills);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	TEST_MAIN_END("test_gobin");
}
