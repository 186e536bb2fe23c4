/* Hand-checked tests of the TLA+ evaluator (replay/eval.c with parse.c, module.c, cfg.c): every
 * construct evaluated from the spec tests/replay/eval/Eval.tla (with Eval.cfg, EvalLib.tla and
 * EvalInst.tla) and compared, printed in TLA+ notation, with the value worked out by hand; and
 * every error with its message and position. Error specs are written to a temporary directory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "check.h"
#include "interp.h"
#include "module.h"
#include "spectap/arena.h"
#include "spectap/value.h"

#define DATA "tests/replay/eval/"
#define SPEC DATA "Eval.tla"

static struct spec *S;
static struct spt_arena AR;
static struct interp IN;
static struct cfg CFG;
static char *SRC; /* Eval.tla's text, to find expected positions */

/* ---- helpers ---- */

static const char *show(spt_val *v)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	if (!f)
		return "<fmemopen failed>";
	spt_value_print(f, v);
	fclose(f);
	buf[sizeof(buf) - 1] = '\0';
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Line and column (1-based) of the first `what` on the line defining `def` in Eval.tla. */
static void where(const char *def, const char *what, uint32_t *line, uint32_t *col)
{
	*line = *col = 0;
	size_t dl = strlen(def);
	uint32_t ln = 1;
	for (const char *p = SRC; p && *p; ln++) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > dl + 3 && !strncmp(p, def, dl) && !strncmp(p + dl, " ==", 3)) {
			char tmp[512];
			snprintf(tmp, sizeof(tmp), "%.*s", (int)len, p);
			const char *at = strstr(tmp, what);
			if (at) {
				*line = ln;
				*col = (uint32_t)(at - tmp) + 1;
			}
			return;
		}
		if (!eol)
			break;
		p = eol + 1;
	}
}

static int eval_def(struct spec *s, struct interp *in, const char *name, spt_val **out)
{
	struct symbol *sym = module_lookup(spec_root(s), spec_intern(s, name, strlen(name)));
	if (!sym || sym->kind != SYM_DEF) {
		fprintf(stderr, "no definition %s\n", name);
		return -2;
	}
	ev_clear_error(&in->ev);
	return eval_call(in, sym->def, NULL, 0, out);
}

static void expect(int line, const char *name, const char *want)
{
	spt_val *v = NULL;
	int rc = eval_def(S, &IN, name, &v);
	CHECKF(rc == 0, "line %d: %s failed: %s:%u:%u: %s", line, name, IN.ev.err.pos.file ? IN.ev.err.pos.file : "?",
	       IN.ev.err.pos.line, IN.ev.err.pos.col, IN.ev.err.msg);
	if (rc)
		return;
	const char *got = show(v);
	CHECKF(!strcmp(got, want), "line %d: %s = %s, expected %s", line, name, got, want);
}
#define EXPECT(name, want) expect(__LINE__, name, want)

/* The definition fails with a message containing each of the substrings, at the position of `at`
 * (searched on the definition's line; NULL: do not check the position). */
static void expect_err(int line, const char *name, const char *at, const char *sub1, const char *sub2)
{
	spt_val *v = NULL;
	int rc = eval_def(S, &IN, name, &v);
	CHECKF(rc == EVAL_ERR, "line %d: %s did not fail (rc %d, value %s)", line, name, rc, rc ? "-" : show(v));
	if (rc != EVAL_ERR)
		return;
	const char *msg = IN.ev.err.msg;
	CHECKF(strstr(msg, sub1) != NULL, "line %d: %s: message \"%s\" lacks \"%s\"", line, name, msg, sub1);
	if (sub2)
		CHECKF(strstr(msg, sub2) != NULL, "line %d: %s: message \"%s\" lacks \"%s\"", line, name, msg, sub2);
	if (at) {
		uint32_t l, c;
		where(name, at, &l, &c);
		CHECKF(IN.ev.err.pos.line == l && IN.ev.err.pos.col == c, "line %d: %s: error at %u:%u, expected %u:%u (%s)",
		       line, name, IN.ev.err.pos.line, IN.ev.err.pos.col, l, c, at);
		CHECKF(IN.ev.err.pos.file && strstr(IN.ev.err.pos.file, "Eval.tla"), "line %d: %s: error in file %s", line,
		       name, IN.ev.err.pos.file ? IN.ev.err.pos.file : "(none)");
	}
}
#define EXPECT_ERR(name, at, sub1, sub2) expect_err(__LINE__, name, at, sub1, sub2)

/* ---- temporary specs for load errors ---- */

static char TMP[256];

static void write_file(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", TMP, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		CHECKF(0, "cannot write %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

/* Loads TMP/name; returns spec_load's result, err filled. */
static int load_tmp(const char *name, struct spec **out, struct spec_error *err)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", TMP, name);
	*out = NULL;
	return spec_load(path, out, err);
}

static void expect_load_err(int line, const char *file, const char *text, uint32_t eline, uint32_t ecol,
			    const char *sub1, const char *sub2)
{
	write_file(file, text);
	struct spec *s;
	struct spec_error err;
	int rc = load_tmp(file, &s, &err);
	CHECKF(rc != 0, "line %d: %s loaded without an error", line, file);
	if (!rc) {
		spec_free(s);
		return;
	}
	CHECKF(strstr(err.msg, sub1) != NULL, "line %d: message \"%s\" lacks \"%s\"", line, err.msg, sub1);
	if (sub2)
		CHECKF(strstr(err.msg, sub2) != NULL, "line %d: message \"%s\" lacks \"%s\"", line, err.msg, sub2);
	CHECKF(err.pos.line == eline && err.pos.col == ecol, "line %d: error at %u:%u, expected %u:%u (%s)", line,
	       err.pos.line, err.pos.col, eline, ecol, err.msg);
	CHECKF(err.pos.file && strstr(err.pos.file, file), "line %d: error in file %s, expected %s", line,
	       err.pos.file ? err.pos.file : "(none)", file);
}
#define EXPECT_LOAD_ERR(file, text, l, c, s1, s2) expect_load_err(__LINE__, file, text, l, c, s1, s2)

/* ---- tests ---- */

static void test_arithmetic(void)
{
	EXPECT("Ar1", "3");
	EXPECT("Ar2", "-4"); /* \div rounds towards -infinity (TLC) */
	EXPECT("Ar2b", "-3"); /* prefix - binds looser than \div: -(7 \div 2) */
	EXPECT_ERR("Ar2c", "7 % -3", "%", NULL);
	EXPECT("Ar2d", "<<-2, -4, 3, 2, 0>>");
	EXPECT_ERR("Ar2e", "1 \\div 0", "zero", NULL);
	EXPECT("Ar3", "1");  /* % is never negative for a positive divisor */
	EXPECT("Ar4", "1");
	EXPECT("Ar5", "1024");
	EXPECT("Ar6", "8");
	EXPECT("Ar7", "{1, 2, 3, 4}");
	EXPECT("Ar8", "{}");
	EXPECT("Ar9", "<<TRUE, TRUE, FALSE, FALSE, TRUE, FALSE, TRUE>>");
	EXPECT("Ar10", "5");
	EXPECT("Ar11", "26");
	EXPECT_ERR("Overflow", "9223372036854775807 + 1", "overflow", NULL);
	EXPECT_ERR("OverflowMul", "4611686018427387904 * 2", "overflow", NULL);
}

static void test_let(void)
{
	EXPECT("Let1", "10");
	/* a = 2; b = Add(2, 10) = 14; Twice(14) = Add(14, 14) = 14 + 14 + 2 = 30 */
	EXPECT("Let2", "<<14, 30>>");
	EXPECT("Let3", "10");      /* a recursive function defined in a LET */
	EXPECT("Let4", "<<5, 10, 15>>"); /* a LET function that uses the operator's parameter */
	EXPECT("Let5", "12");
}

static void test_if_case(void)
{
	EXPECT("If1", "\"yes\"");
	EXPECT("If2", "2");
	EXPECT("Case1", "\"b\"");
	EXPECT("Case2", "\"c\"");
	EXPECT("Case3", "10");
	EXPECT_ERR("CaseNone", "CASE", "no CASE arm is true", NULL);
}

static void test_choose_quantifiers(void)
{
	EXPECT("Ch1", "5");
	EXPECT("Ch2", "<<3, 2>>");
	EXPECT_ERR("ChNone", "CHOOSE", "CHOOSE found no element", NULL);
	EXPECT("Ex1", "TRUE");
	EXPECT("Ex2", "TRUE");
	EXPECT("Ex3", "TRUE");
	EXPECT("Ex4", "TRUE");
	EXPECT("Ex5", "FALSE");
	EXPECT("All1", "TRUE");
	EXPECT("All2", "FALSE");
	EXPECT("All3", "TRUE");
	EXPECT("All4", "TRUE");
	EXPECT_ERR("ExNat", "Nat :", "Nat", "infinite");
	/* Unbounded quantifiers and CHOOSE load (a cfg may override their definition) and are an
	 * error only when evaluated. */
	EXPECT_ERR("UnbEx", "\\E x : x = 1", "unbounded quantifier", "cannot be evaluated");
	EXPECT_ERR("UnbCh", "CHOOSE x : x = 1", "without a set", "cannot be evaluated");
}

static void test_sets(void)
{
	EXPECT("Set1", "{1, 2, 3}");
	EXPECT("Set2", "{3, 6, 9}");
	EXPECT("Set3", "{10, 20, 30}");
	EXPECT("Set4", "{11, 12, 21, 22}");
	EXPECT("Set5", "{<<1, \"a\">>, <<2, \"a\">>}");
	EXPECT("Set6", "<<{1, 2, 3}, {2}, {1, 3}>>");
	EXPECT("Set7", "<<TRUE, FALSE, TRUE, FALSE>>");
	EXPECT("Set8", "{{}, {1}, {2}, {1, 2}}"); /* TLC's order: smaller sets first */
	EXPECT("Set9", "{1, 2, 3}");
	EXPECT("Set10", "{\"a\", \"b\"}");
	EXPECT("Set11", "14");
	EXPECT("Set12", "{<<1, 2>>}");
}

static void test_functions(void)
{
	EXPECT("Fn1", "<<1, 4, 9>>");
	EXPECT("Fn2", "[a |-> \"a\", b |-> \"b\"]");
	EXPECT("Fn3", "(<<1, \"a\">> :> 1 @@ <<1, \"b\">> :> 1 @@ <<2, \"a\">> :> 2 @@ <<2, \"b\">> :> 2)");
	EXPECT("Fn4", "2");
	EXPECT("Fn5", "1");
	/* functions with domain 1..n are tuples */
	EXPECT("Fn6", "{<<\"x\", \"x\">>, <<\"x\", \"y\">>, <<\"y\", \"x\">>, <<\"y\", \"y\">>}");
	EXPECT("Fn7", "<<TRUE, TRUE, FALSE, FALSE>>");
	EXPECT("Fn8", "4");
	EXPECT_ERR("FnOut", "Fn1[7]", "7 is not in the domain", "<<1, 4, 9>>");
	EXPECT_ERR("FnOut2", "Fn3[3, \"a\"]", "<<3, \"a\">> is not in the domain", "<<1, \"a\">> :> 1");
	EXPECT("Fn9", "<<\"a\", \"b\">>");
	EXPECT("Fn10", "(5 :> 6)");
	EXPECT("Fn11", "120");
	EXPECT("Fn12", "2432902008176640000");
	EXPECT("Fn13", "(0 :> 0 @@ 1 :> 1 @@ 2 :> 3 @@ 3 :> 6 @@ 4 :> 10 @@ 5 :> 15 @@ 6 :> 21 @@ 7 :> 28 @@ "
		       "8 :> 36 @@ 9 :> 45 @@ 10 :> 55)");
	EXPECT_ERR("FnNeg", "fact[-1]", "-1 is not in the domain", "fact");
}

static void test_records(void)
{
	EXPECT("Rec1", "[a |-> 1, b |-> 2]");
	EXPECT("Rec2", "2");
	EXPECT("Rec3", "{[a |-> 1, b |-> \"x\"], [a |-> 2, b |-> \"x\"]}");
	EXPECT("Rec4", "<<TRUE, FALSE, FALSE>>");
	EXPECT_ERR("RecMissing", "Rec1.c", "has no field c", "[a |-> 1, b |-> 2]");
}

static void test_sequences(void)
{
	EXPECT("Seq1", "<<1, \"two\", {3}>>");
	EXPECT("Seq2", "<<3, <<1, 2>>, 7, <<8, 9>>>>");
	EXPECT("Seq3", "<<1, 2, 3>>");
	EXPECT("Seq4", "<<\"b\", \"c\">>");
	EXPECT("Seq5", "20");
	EXPECT("Seq6", "<<>>");
	EXPECT("Seq7", "<<2, 4, 6>>");
	EXPECT("Seq8", "<<>>");
}

static void test_bags_registers(void)
{
	EXPECT("Bag1", "[a |-> 2, b |-> 1]");
	EXPECT("Bag2", "3");
	EXPECT("Bag3", "1");
	EXPECT("Bag4", "<<>>");
	EXPECT("Bag5", "FALSE");
	EXPECT("Bag6", "{\"a\", \"b\"}");
	EXPECT("Bag7", "FALSE");
	EXPECT("Reg1", "TRUE");
	expect_err(__LINE__, "Reg2", "TLCGet(\"level\")", "describes TLC's model checking run", NULL);
	EXPECT("Reg3", "\"none\"");
	EXPECT("Reg4", "TRUE");
	EXPECT("Reg5", "TRUE");
	expect_err(__LINE__, "Reg6", "TLCSet(\"exit\", TRUE)", "which window validation does not have", NULL);
	expect_err(__LINE__, "Reg7", "PickSuccessor(1 > 2)", "spectap does not ask", NULL);
	expect_err(__LINE__, "Reg8", "TLCGet(\"s:never\")", "TLCGet(\"s:never\"): nothing was TLCSet there", NULL);
	EXPECT("Rel1", "<<TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE>>");
	EXPECT("Rel2", "<<TRUE, FALSE, FALSE, TRUE, FALSE, TRUE, FALSE, TRUE>>");
	expect_err(__LINE__, "Rel3", NULL, "IsReflexive: the relation gives 5", "not a Boolean");
	EXPECT("Sqx1", "<<<<1, 2, 3>>, <<3, 2, 1>>, <<2, 1>>, <<1, 2>>, <<1, 3>>, <<1>>, 5, 1, 3>>");
	EXPECT("Sqx2", "<<{<<>>, <<1>>, <<1, 2>>}, {<<>>, <<2>>, <<1, 2>>}, TRUE, TRUE, 3>>");
}

static void test_except(void)
{
	EXPECT("Ex_1", "<<1, 104, 9>>");
	EXPECT("Ex_2", "<<0, 2, 30>>");
	EXPECT("Ex_3", "[a |-> 2, b |-> 0]");
	EXPECT("Ex_4", "<<<<[f |-> 1, g |-> 0], [f |-> 2, g |-> 9]>>, <<[f |-> 9, g |-> 0], [f |-> 4, g |-> 0]>>>>");
	EXPECT("Ex_5", "[a |-> [b |-> <<1, 5>>]]");
	EXPECT("Ex_6", "<<1, 4, 9>>");
	EXPECT("Ex_7", "<<6, 4, 9>>"); /* updates apply in order: 1 -> 5 -> 6 */
	EXPECT("Ex_8", "<<<<1, 2, 3>>, <<20, 3, 3>>>>"); /* f itself unchanged by the copy updated in place */
	EXPECT("Ex_9", "<<[a |-> <<1>>, b |-> 2], [a |-> <<3>>, b |-> 4]>>");
}

static void test_strings_model_values(void)
{
	EXPECT("Str1", "\"hello\"");
	EXPECT("Str2", "<<TRUE, FALSE, \"a\\\"b\">>");
	EXPECT("Str3", "{\"a\", \"b\"}");
	EXPECT("Mv1", "<<A, B>>");
	EXPECT("Mv2", "<<TRUE, FALSE, FALSE>>");
	EXPECT("Mv3", "{p1, p2}");
	EXPECT("Mv4", "4");
}

static void test_membership(void)
{
	EXPECT("Mem1", "<<TRUE, FALSE, TRUE, FALSE>>");
	EXPECT("Mem2", "<<TRUE, FALSE, TRUE, FALSE>>");
	EXPECT("Mem3", "<<TRUE, FALSE, TRUE, FALSE>>");
	EXPECT("Mem4", "<<TRUE, FALSE, TRUE, FALSE>>");
	EXPECT("Mem5", "<<TRUE, TRUE>>");
	EXPECT("Mem6", "{FALSE, TRUE}");
	EXPECT("Mem7", "FALSE");
	EXPECT("Mem8", "<<TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, TRUE, TRUE>>");
	EXPECT("Mem9", "TRUE");
}

static void test_operators(void)
{
	EXPECT("Op1", "6");
	EXPECT("Op2", "42");
	EXPECT("Op3", "42");
	EXPECT("Op4", "42");
	EXPECT("Op5", "103");
	EXPECT("Op6", "6");
	EXPECT("Op7", "2");
	EXPECT("Op8", "12");
	EXPECT("Rec_1", "720");
	EXPECT("Rec_2", "116");
	EXPECT_ERR("RecDeep", NULL, "nested too deeply", NULL);
	/* after a runaway recursion the evaluator still works */
	EXPECT("Rec_1", "720");
}

static void test_modules(void)
{
	EXPECT("Ext1", "12");
	EXPECT("Ext2", "7");
	CHECK(module_lookup(spec_root(S), spec_intern(S, "Hidden", 6)) == NULL); /* LOCAL is not exported */
	EXPECT("Inst1", "10");
	EXPECT("Inst2", "15");
	EXPECT("Inst3", "12");
	EXPECT("Inst4", "600");
}

static void test_load_errors(void)
{
	EXPECT_LOAD_ERR("Syn.tla", "---- MODULE Syn ----\nEXTENDS Naturals\nFoo == 1 + ]\nBar == 2\n====\n", 3, 12,
			"syntax error", NULL);
	EXPECT_LOAD_ERR("Real.tla", "---- MODULE Real ----\nX == 1 +  1.5\n====\n", 2, 11, "real numbers", "not supported");
	/* Names are checked when a module is loaded, as SANY does, in every branch. */
	EXPECT_LOAD_ERR("Undef.tla", "---- MODULE Undef ----\nEXTENDS Naturals\nVARIABLE x\nA == IF x = 0 THEN x' = 1 ELSE x' = x + Undefinedd\n====\n",
			4, 41, "unknown name Undefinedd", NULL);
	EXPECT_LOAD_ERR("Arity.tla", "---- MODULE Arity ----\nF(a) == a\nX == F(1, 2)\n====\n", 3, 6, "F takes 1 argument, 2 given", NULL);
	EXPECT_LOAD_ERR("Prime2.tla", "---- MODULE Prime2 ----\nVARIABLE x\nX == (x')' = 1\n====\n", 3, 6,
			"a primed expression inside a primed expression", NULL);
	EXPECT_LOAD_ERR("LetUndef.tla", "---- MODULE LetUndef ----\nX == LET a == 1 IN b\n====\n", 2, 20, "unknown name b", NULL);
	EXPECT_LOAD_ERR("Miss.tla", "---- MODULE Miss ----\nEXTENDS Naturals, NoSuchModule\nX == 1\n====\n", 2, 19,
			"NoSuchModule", NULL);
	EXPECT_LOAD_ERR("Twice.tla", "---- MODULE Twice ----\nX == 1\nX == 2\n====\n", 3, 1, "defined twice", NULL);
	EXPECT_LOAD_ERR("Name.tla", "---- MODULE Other ----\nX == 1\n====\n", 1, 13, "holds module Other", NULL);
}

static void cfg_err(int line, const char *text, uint32_t eline, uint32_t ecol, const char *sub)
{
	write_file("Bad.cfg", text);
	char path[512];
	snprintf(path, sizeof(path), "%s/Bad.cfg", TMP);
	struct cfg c;
	struct spec_error err;
	memset(&err, 0, sizeof(err));
	int rc = cfg_load(S, path, &c, &err);
	CHECKF(rc != 0, "line %d: the bad cfg loaded", line);
	if (!rc) {
		cfg_free(&c);
		return;
	}
	CHECKF(strstr(err.msg, sub) != NULL, "line %d: message \"%s\" lacks \"%s\"", line, err.msg, sub);
	CHECKF(err.pos.line == eline && err.pos.col == ecol, "line %d: error at %u:%u, expected %u:%u (%s)", line,
	       err.pos.line, err.pos.col, eline, ecol, err.msg);
	CHECKF(err.pos.file && !strcmp(err.pos.file, path), "line %d: error in %s", line, err.pos.file ? err.pos.file : "?");
}

static void test_cfg(void)
{
	/* the good one */
	CHECK(CFG.n_consts == 4);
	cfg_err(__LINE__, "CONSTANTS\n  N = 3\n  M 4\n", 3, 5, "'=' or '<-' expected after the constant M");
	cfg_err(__LINE__, "INIT Init\nFOO Bar\n", 2, 4, "a keyword");
	cfg_err(__LINE__, "CONSTANT N = \"abc\n", 1, 14, "unterminated string");
	cfg_err(__LINE__, "CONSTANT S = {1, 2\nINIT Init\n", 2, 1, "',' or '}' expected");

	/* every keyword TLC reads, lists across lines, nested sets */
	write_file("Full.cfg", "\\* comment\nCONSTANTS N = 3\n  S = {{1, 2}, {}}\n  P <- [Mod] Q\n"
			       "SPECIFICATION Spec\nINVARIANT A B\nINVARIANTS\n  C\nPROPERTY L1\nPROPERTIES L2\n"
			       "CONSTRAINT K1\nACTION_CONSTRAINT K2 K3\nVIEW V\nSYMMETRY Sym\nALIAS Al\n"
			       "CHECK_DEADLOCK FALSE\nPOSTCONDITION Post\n");
	char path[512];
	snprintf(path, sizeof(path), "%s/Full.cfg", TMP);
	struct cfg c;
	struct spec_error err;
	memset(&err, 0, sizeof(err));
	int rc = cfg_load(S, path, &c, &err);
	CHECKF(rc == 0, "Full.cfg: %s", err.msg);
	if (rc)
		return;
	CHECK(c.n_consts == 3);
	CHECK(c.n_consts == 3 && !strcmp(c.consts[2].op, "Q") && !strcmp(c.consts[2].module, "Mod"));
	CHECK(c.n_consts == 3 && c.consts[1].value->kind == SPT_SET && c.consts[1].value->n == 2);
	CHECK(c.spec && !strcmp(c.spec, "Spec") && c.spec_line == 5);
	CHECK(c.n_invariants == 3 && !strcmp(c.invariants[2], "C") && c.invariant_lines[2] == 8);
	CHECK(c.properties.n == 2 && !strcmp(c.properties.names[1], "L2"));
	CHECK(c.constraints.n == 1 && c.action_constraints.n == 2 && !strcmp(c.action_constraints.names[1], "K3"));
	CHECK(c.view && !strcmp(c.view, "V") && c.symmetry && !strcmp(c.symmetry, "Sym") && c.alias && !strcmp(c.alias, "Al"));
	CHECK(c.check_deadlock == 0);
	CHECK(c.postconditions.n == 1 && c.postconditions.lines[0] == 17);
	cfg_free(&c);
	cfg_err(__LINE__, "CHECK_DEADLOCK maybe\n", 1, 16, "TRUE or FALSE");
}

/* ---- setup ---- */

static int set_constants(void)
{
	struct spec_error err;
	memset(&err, 0, sizeof(err));
	if (cfg_load(S, DATA "Eval.cfg", &CFG, &err)) {
		fprintf(stderr, "%s:%u:%u: %s\n", err.pos.file, err.pos.line, err.pos.col, err.msg);
		return -1;
	}
	uint32_t n, *arity;
	const char *const *names = spec_constants(S, &arity, &n);
	for (uint32_t i = 0; i < CFG.n_consts; i++)
		for (uint32_t j = 0; j < n; j++)
			if (names[j] == CFG.consts[i].name)
				IN.consts[j] = CFG.consts[i].value;
	return 0;
}

int main(void)
{
	struct spec_error err;
	memset(&err, 0, sizeof(err));
	if (spec_load(SPEC, &S, &err)) {
		fprintf(stderr, "%s:%u:%u: %s\n", err.pos.file ? err.pos.file : "?", err.pos.line, err.pos.col, err.msg);
		CHECK(0);
		TEST_MAIN_END("test_eval");
	}
	SRC = slurp(SPEC);
	spt_arena_init(&AR);
	interp_init(&IN, S, &AR);
	CHECK(set_constants() == 0);
	snprintf(TMP, sizeof(TMP), "/tmp/spectap-test-eval-XXXXXX");
	CHECK(mkdtemp(TMP) != NULL);

	RUN(test_arithmetic);
	RUN(test_let);
	RUN(test_if_case);
	RUN(test_choose_quantifiers);
	RUN(test_sets);
	RUN(test_functions);
	RUN(test_records);
	RUN(test_sequences);
	RUN(test_bags_registers);
	RUN(test_except);
	RUN(test_strings_model_values);
	RUN(test_membership);
	RUN(test_operators);
	RUN(test_modules);
	RUN(test_load_errors);
	RUN(test_cfg);

	cfg_free(&CFG);
	interp_fini(&IN);
	spt_arena_fini(&AR);
	spec_free(S);
	free(SRC);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", TMP);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", TMP);
	TEST_MAIN_END("test_eval");
}
