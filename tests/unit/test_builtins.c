/* Hand-checked tests of the native standard-module operators (replay/builtins*.c): every
 * builtin's results, printed in TLA+ notation, and every error with the words of its message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins_internal.h"
#include "check.h"
#include "ev_core.h"
#include "spectap/arena.h"
#include "spectap/value.h"

static struct spt_arena A;
static struct ev EV;

/* ---- values ---- */

#define NARGS(...) (sizeof((spt_val *[]){ __VA_ARGS__ }) / sizeof(spt_val *))
#define SET(...) spt_set(&A, (spt_val *[]){ __VA_ARGS__ }, NARGS(__VA_ARGS__))
#define TUP(...) spt_seq(&A, (spt_val *[]){ __VA_ARGS__ }, NARGS(__VA_ARGS__))

static spt_val *I(int64_t i) { return spt_int(&A, i); }
static spt_val *S(const char *s) { return spt_cstr(&A, s); }
static spt_val *B(bool b) { return spt_bool(&A, b); }
static spt_val *M(const char *name) { return spt_model(&A, name); }
static spt_val *ESET(void) { return spt_set(&A, NULL, 0); }
static spt_val *EFUN(enum spt_kind how) { return spt_empty_fun(&A, how); }

static spt_val *REC2(const char *a, spt_val *x, const char *b, spt_val *y)
{
	return spt_rec(&A, (const char *const[]){ a, b }, (spt_val *[]){ x, y }, 2);
}
static spt_val *REC1(const char *a, spt_val *x)
{
	return spt_rec(&A, (const char *const[]){ a }, (spt_val *[]){ x }, 1);
}
static spt_val *FUN2(spt_val *k1, spt_val *v1, spt_val *k2, spt_val *v2)
{
	bool dup;
	return spt_fun(&A, (spt_val *[]){ k1, k2 }, (spt_val *[]){ v1, v2 }, 2, &dup);
}
static spt_val *FUN1(spt_val *k, spt_val *v)
{
	bool dup;
	return spt_fun(&A, &k, &v, 1, &dup);
}
static spt_val *RANGE(int64_t lo, int64_t hi)
{
	spt_val *e[64];
	size_t n = 0;
	for (int64_t i = lo; i <= hi; i++)
		e[n++] = I(i);
	return spt_set(&A, e, n);
}

/* The value in TLA+ notation (static buffer, for comparisons). */
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

/* ---- calling builtins ---- */

static int last_rc;

static spt_val *call(int line, const char *mod, const char *name, uint32_t n, spt_val **args)
{
	const struct builtin *b = builtin_lookup(mod, name, n);
	CHECKF(b != NULL, "line %d: no builtin %s/%u in module %s", line, name, n, mod);
	if (!b)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!args[i]) {
			CHECKF(0, "line %d: argument %u not built", line, i);
			return NULL;
		}
	ev_clear_error(&EV);
	spt_val *out = NULL;
	last_rc = b->fn(&EV, NULL, args, n, &out);
	return last_rc == 0 ? out : NULL;
}

/* Calls and checks that the result prints as want; returns the result. */
static spt_val *ok_at(int line, const char *mod, const char *name, const char *want, uint32_t n,
		      spt_val **args)
{
	spt_val *r = call(line, mod, name, n, args);
	CHECKF(r != NULL && last_rc == 0, "line %d: %s failed: %s", line, name, EV.err.msg);
	if (!r)
		return NULL;
	const char *got = show(r);
	CHECKF(strcmp(got, want) == 0, "line %d: %s gave %s, want %s", line, name, got, want);
	return r;
}

/* Calls and checks the error: EVAL_ERR, recorded, with words in the message. */
static void err_at(int line, const char *mod, const char *name, const char *words, uint32_t n,
		   spt_val **args)
{
	spt_val *r = call(line, mod, name, n, args);
	CHECKF(r == NULL && last_rc == EVAL_ERR && EV.failed, "line %d: %s did not fail (rc %d)",
	       line, name, last_rc);
	CHECKF(strstr(EV.err.msg, words) != NULL, "line %d: %s: message \"%s\" lacks \"%s\"", line,
	       name, EV.err.msg, words);
}

#define OK(mod, name, want, ...)                                                                   \
	ok_at(__LINE__, mod, name, want, NARGS(__VA_ARGS__), (spt_val *[]){ __VA_ARGS__ })
#define ERR(mod, name, words, ...)                                                                 \
	err_at(__LINE__, mod, name, words, NARGS(__VA_ARGS__), (spt_val *[]){ __VA_ARGS__ })

#define NAT "Naturals"
#define INTS "Integers"

/* ---- tests ---- */

static void test_lookup(void)
{
	CHECK(builtin_lookup("Naturals", "+", 2) != NULL);
	CHECK(builtin_lookup("Integers", "+", 2) != NULL);
	CHECK(builtin_lookup("Integers", "-.", 1) != NULL);
	CHECK(builtin_lookup("Naturals", "-.", 1) == NULL);
	CHECK(builtin_lookup("Naturals", "-", 1) == NULL);
	CHECK(builtin_lookup("Naturals", "-", 2) != NULL);
	CHECK(builtin_lookup("Naturals", "Len", 1) == NULL);
	CHECK(builtin_lookup("Sequences", "Len", 1) != NULL);
	CHECK(builtin_lookup("Sequences", "Len", 2) == NULL);
	CHECK(builtin_lookup("Sequences", "+", 2) == NULL);
	CHECK(builtin_lookup("TLC", "Len", 1) == NULL);
	CHECK(builtin_lookup("", "\\cup", 2) != NULL);
	CHECK(builtin_lookup("Anything", "\\cup", 2) != NULL);
	CHECK(builtin_lookup("", "\\X", 3) != NULL);
	CHECK(builtin_lookup("", "\\times", 2) != NULL);
	CHECK(builtin_lookup("SequencesExt", "Len", 1) != NULL);
	CHECK(builtin_lookup("SequencesExt", "Max", 1) != NULL);
	CHECK(builtin_lookup("SequencesExt", "Range", 1) != NULL);
	CHECK(builtin_lookup("SequencesExt", ":>", 2) != NULL);
	CHECK(builtin_lookup("FiniteSetsExt", "-.", 1) != NULL);
	CHECK(builtin_lookup("FiniteSetsExt", "Cardinality", 1) != NULL);
	CHECK(builtin_lookup("Functions", "Len", 1) == NULL);
	CHECK(builtin_lookup(NULL, "Len", 1) != NULL);
	CHECK(builtin_lookup("Naturals", "Nope", 1) == NULL);
	CHECK(builtin_lookup("TLC", "Seq", 1) == NULL);
	CHECK(builtin_lookup("TLC", "Any", 0) == NULL);
	/* The table: complete entries, no (module, name, arity) twice. */
	size_t count = 0;
	for (const struct builtin *b = builtins; b->name; b++, count++) {
		CHECKF(b->module && (b->fn || b->hfn || b->code || b->unimplemented) && b->arity >= -1, "entry %s", b->name);
		for (const struct builtin *c = builtins; c < b; c++)
			CHECKF(!(strcmp(c->name, b->name) == 0 && strcmp(c->module, b->module) == 0 &&
				 c->arity == b->arity),
			       "duplicate %s", b->name);
	}
	CHECK(count > 70);
}

static void test_add_sub_mul(void)
{
	OK(NAT, "+", "5", I(2), I(3));
	OK(NAT, "+", "-1", I(-3), I(2));
	OK(NAT, "+", "9223372036854775807", I(INT64_MAX - 1), I(1));
	ERR(NAT, "+", "integer overflow in 9223372036854775807 + 1", I(INT64_MAX), I(1));
	ERR(NAT, "+", "integer overflow in -9223372036854775808 + -1", I(INT64_MIN), I(-1));
	ERR(NAT, "+", "+ applies to integers, not \"a\"", I(1), S("a"));
	ERR(NAT, "+", "+ applies to integers, not {1}", SET(I(1)), I(1));
	OK(NAT, "-", "-2", I(5), I(7));
	OK(NAT, "-", "-9223372036854775808", I(INT64_MIN + 1), I(1));
	ERR(NAT, "-", "integer overflow in -9223372036854775808 - 1", I(INT64_MIN), I(1));
	ERR(NAT, "-", "integer overflow in 0 - -9223372036854775808", I(0), I(INT64_MIN));
	ERR(NAT, "-", "- applies to integers, not TRUE", B(true), I(1));
	OK(NAT, "*", "42", I(6), I(7));
	OK(NAT, "*", "-42", I(-6), I(7));
	OK(NAT, "*", "-9223372036854775808", I(INT64_MIN), I(1));
	ERR(NAT, "*", "integer overflow in -9223372036854775808 * -1", I(INT64_MIN), I(-1));
	ERR(NAT, "*", "integer overflow in 4294967296 * 4294967296", I(4294967296), I(4294967296));
	ERR(NAT, "*", "* applies to integers, not <<>>", EFUN(SPT_SEQ), I(2));
	OK(INTS, "-.", "-5", I(5));
	OK(INTS, "-.", "9223372036854775807", I(-INT64_MAX));
	OK(INTS, "-", "3", I(-3));
	ERR(INTS, "-.", "integer overflow in -(-9223372036854775808)", I(INT64_MIN));
	ERR(INTS, "-.", "-. applies to integers, not \"x\"", S("x"));
}

static void test_div_mod(void)
{
	OK(NAT, "\\div", "3", I(7), I(2));
	OK(NAT, "\\div", "-4", I(-7), I(2));
	OK(NAT, "\\div", "-4", I(7), I(-2));
	OK(NAT, "\\div", "3", I(-7), I(-2));
	OK(NAT, "\\div", "-4", I(-8), I(2));
	OK(NAT, "\\div", "0", I(0), I(-5));
	OK(NAT, "\\div", "-9223372036854775808", I(INT64_MIN), I(1));
	OK(NAT, "\\div", "4611686018427387904", I(INT64_MIN), I(-2));
	ERR(NAT, "\\div", "\\div by zero: 5 \\div 0", I(5), I(0));
	ERR(NAT, "\\div", "integer overflow in -9223372036854775808 \\div -1", I(INT64_MIN), I(-1));
	ERR(NAT, "\\div", "\\div applies to integers, not \"2\"", I(4), S("2"));
	OK(NAT, "%", "1", I(7), I(2));
	OK(NAT, "%", "1", I(-7), I(2));
	OK(NAT, "%", "1", I(-8), I(3));
	OK(NAT, "%", "0", I(-9), I(3));
	OK(NAT, "%", "1", I(INT64_MIN), I(3));
	OK(NAT, "%", "0", I(INT64_MIN), I(1));
	OK(NAT, "%", "9223372036854775806", I(-1), I(INT64_MAX));
	ERR(NAT, "%", "% needs a positive divisor: 5 % 0", I(5), I(0));
	ERR(NAT, "%", "% needs a positive divisor: 5 % -2", I(5), I(-2));
	ERR(NAT, "%", "% applies to integers, not FALSE", B(false), I(2));
}

static void test_pow(void)
{
	OK(NAT, "^", "1024", I(2), I(10));
	OK(NAT, "^", "1", I(3), I(0));
	OK(NAT, "^", "0", I(0), I(5));
	OK(NAT, "^", "-1", I(-1), I(3));
	OK(NAT, "^", "1", I(-1), I(INT64_MAX - 1));
	OK(NAT, "^", "1", I(1), I(1000000000000));
	OK(NAT, "^", "4611686018427387904", I(2), I(62));
	OK(NAT, "^", "-9223372036854775808", I(-2), I(63));
	OK(NAT, "^", "1000000000000000000", I(10), I(18));
	OK(NAT, "^", "-27", I(-3), I(3));
	ERR(NAT, "^", "integer overflow in 2 ^ 63", I(2), I(63));
	ERR(NAT, "^", "integer overflow in -2 ^ 64", I(-2), I(64));
	ERR(NAT, "^", "integer overflow in 10 ^ 19", I(10), I(19));
	ERR(NAT, "^", "integer overflow in 3 ^ 1000", I(3), I(1000));
	ERR(NAT, "^", "negative exponent in 2 ^ -1", I(2), I(-1));
	ERR(NAT, "^", "0 ^ 0 is undefined", I(0), I(0));
	ERR(NAT, "^", "^ applies to integers, not {}", ESET(), I(1));
}

static void test_compare_and_interval(void)
{
	OK(NAT, "<", "TRUE", I(1), I(2));
	OK(NAT, "<", "FALSE", I(2), I(2));
	OK(NAT, ">", "FALSE", I(3), I(4));
	OK(NAT, ">", "TRUE", I(INT64_MAX), I(INT64_MIN));
	OK(NAT, "<=", "TRUE", I(2), I(2));
	OK(NAT, "=<", "FALSE", I(3), I(2));
	OK(NAT, "\\leq", "TRUE", I(-3), I(2));
	OK(NAT, ">=", "TRUE", I(2), I(2));
	OK(NAT, "\\geq", "FALSE", I(1), I(2));
	ERR(NAT, "<", "< applies to integers, not \"a\"", S("a"), I(1));
	ERR(NAT, "\\geq", ">= applies to integers, not m", I(1), M("m"));
	OK(NAT, "..", "{1, 2, 3}", I(1), I(3));
	OK(NAT, "..", "{-1, 0, 1}", I(-1), I(1));
	OK(NAT, "..", "{5}", I(5), I(5));
	OK(NAT, "..", "{}", I(3), I(1));
	OK(NAT, "..", "{}", I(INT64_MAX), I(INT64_MIN));
	OK(NAT, "..", "{9223372036854775806, 9223372036854775807}", I(INT64_MAX - 1), I(INT64_MAX));
	spt_val *big = OK(NAT, "..", "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50}", I(1), I(50));
	CHECK(big && big->n == 50);
	spt_val *mil = call(__LINE__, NAT, "..", 2, (spt_val *[]){ I(0), I(1048575) });
	CHECK(mil && mil->n == 1048576 && mil->u.elems[1048575]->u.i == 1048575);
	ERR(NAT, "..", "1..1048577 is too large to enumerate", I(1), I(1048577));
	ERR(NAT, "..", "-9223372036854775808..9223372036854775807 is too large", I(INT64_MIN),
	    I(INT64_MAX));
	ERR(NAT, "..", ".. applies to integers, not \"1\"", S("1"), I(3));
}

static void test_set_algebra(void)
{
	OK("", "\\cup", "{1, 2, 3}", SET(I(1), I(2)), SET(I(2), I(3)));
	OK("", "\\union", "{}", ESET(), ESET());
	OK("", "\\cup", "{1, \"a\"}", ESET(), SET(S("a"), I(1)));
	OK("", "\\cap", "{2}", SET(I(1), I(2)), SET(I(2), I(3)));
	OK("", "\\intersect", "{}", SET(I(1)), SET(I(2)));
	OK("", "\\", "{1}", SET(I(1), I(2)), SET(I(2), I(3)));
	OK("", "\\setminus", "{1, 2}", SET(I(1), I(2)), ESET());
	OK("", "\\", "{}", ESET(), SET(I(1)));
	ERR("", "\\cup", "the second argument of \\cup must be a set, not 1", SET(I(1)), I(1));
	ERR("", "\\cap", "the first argument of \\cap must be a set, not <<1>>", TUP(I(1)), ESET());
	ERR("", "\\", "the first argument of \\ must be a set", S("ab"), ESET());
	OK("", "\\subseteq", "TRUE", SET(I(1)), SET(I(1), I(2)));
	OK("", "\\subseteq", "FALSE", SET(I(1), I(3)), SET(I(1), I(2)));
	OK("", "\\subseteq", "TRUE", ESET(), ESET());
	OK("", "\\subseteq", "FALSE", SET(I(3)), SET(I(1), I(2)));
	OK("", "\\subseteq", "TRUE", SET(I(1), I(2)), SET(I(1), I(2)));
	ERR("", "\\subseteq", "the second argument of \\subseteq must be a set, not 3", ESET(), I(3));
}

static void test_subset_union(void)
{
	OK("", "SUBSET", "{{}}", ESET());
	OK("", "SUBSET", "{{}, {1}, {2}, {1, 2}}", SET(I(1), I(2)));
	spt_val *p = call(__LINE__, "", "SUBSET", 1, (spt_val *[]){ RANGE(1, 10) });
	CHECK(p && p->n == 1024);
	ERR("", "SUBSET", "SUBSET of a set of 21 elements is too large to enumerate", RANGE(1, 21));
	ERR("", "SUBSET", "SUBSET applies to a set, not 3", I(3));
	OK("", "UNION", "{1, 2, 3}", SET(SET(I(1)), SET(I(2), I(3))));
	OK("", "UNION", "{}", ESET());
	OK("", "UNION", "{}", SET(ESET()));
	OK("", "UNION", "{1, 2}", SET(SET(I(1), I(2)), SET(I(2))));
	ERR("", "UNION", "UNION applies to a set of sets, not {1, {2}}", SET(I(1), SET(I(2))));
	ERR("", "UNION", "UNION applies to a set, not <<{1}>>", TUP(SET(I(1))));
}

static void test_domain(void)
{
	OK("", "DOMAIN", "{1, 2}", TUP(S("a"), S("b")));
	OK("", "DOMAIN", "{\"a\", \"b\"}", REC2("a", I(1), "b", I(2)));
	OK("", "DOMAIN", "{}", EFUN(SPT_SEQ));
	OK("", "DOMAIN", "{}", EFUN(SPT_REC));
	OK("", "DOMAIN", "{}", EFUN(SPT_FUN));
	OK("", "DOMAIN", "{2, 5}", FUN2(I(2), I(1), I(5), I(1)));
	ERR("", "DOMAIN", "DOMAIN applies to a function, not 1", I(1));
	ERR("", "DOMAIN", "DOMAIN applies to a function, not {}", ESET());
}

static void test_membership(void)
{
	OK("", "\\in", "TRUE", I(1), SET(I(1), I(2)));
	OK("", "\\in", "FALSE", I(3), SET(I(1), I(2)));
	OK("", "\\notin", "TRUE", I(3), SET(I(1), I(2)));
	OK("", "\\notin", "FALSE", I(2), SET(I(1), I(2)));
	OK("", "\\in", "FALSE", I(1), ESET());
	OK("", "\\in", "TRUE", TUP(I(1)), SET(TUP(I(1)), EFUN(SPT_REC)));
	OK("", "\\in", "TRUE", EFUN(SPT_REC), SET(EFUN(SPT_SEQ)));
	OK("", "\\in", "FALSE", SET(I(1)), SET(SET(I(2))));
	/* Model values compare with anything. */
	OK("", "\\in", "FALSE", M("m"), SET(I(1)));
	OK("", "\\in", "FALSE", I(1), SET(M("m")));
	OK("", "\\in", "TRUE", I(1), SET(I(1), M("m")));
	OK("", "\\in", "FALSE", I(2), SET(I(1), M("m")));
	OK("", "\\in", "TRUE", M("m"), SET(I(1), M("m")));
	/* TLC cannot compare 1 with "a". */
	ERR("", "\\in", "\\in: cannot compare 1 with \"a\"", I(1), SET(S("a")));
	ERR("", "\\notin", "\\notin: cannot compare \"x\" with 1", S("x"), SET(I(1), M("m")));
	ERR("", "\\in", "\\in: cannot compare <<1>> with {}", TUP(I(1)), SET(ESET(), M("m")));
	ERR("", "\\in", "the second argument of \\in must be a set, not 5", I(1), I(5));
}

static void test_times(void)
{
	OK("", "\\times", "{<<1, \"a\">>, <<2, \"a\">>}", SET(I(1), I(2)), SET(S("a")));
	OK("", "\\X",
	   "{<<1, \"a\", TRUE>>, <<1, \"b\", TRUE>>, <<2, \"a\", TRUE>>, <<2, \"b\", TRUE>>}",
	   SET(I(1), I(2)), SET(S("a"), S("b")), SET(B(true)));
	OK("", "\\times", "{}", ESET(), SET(I(1)));
	OK("", "\\times", "{}", SET(I(1)), SET(I(2)), ESET());
	spt_val *r = call(__LINE__, "", "\\times", 3,
			  (spt_val *[]){ RANGE(1, 4), RANGE(1, 3), RANGE(1, 2) });
	CHECK(r && r->n == 24);
	spt_val *k = RANGE(1, 32); /* 32^5 = 2^25 tuples */
	ERR("", "\\times", "\\times of 5 sets is too large to enumerate", k, k, k, k, k);
	OK("", "\\times", "{}", k, k, k, k, k, ESET());
	ERR("", "\\times", "the second argument of \\times must be a set, not 1", SET(I(1)), I(1));
}

static void test_equality(void)
{
	OK("", "=", "TRUE", I(1), I(1));
	OK("", "=", "FALSE", I(1), I(2));
	OK("", "=", "TRUE", SET(I(1), I(2)), SET(I(2), I(1)));
	OK("", "=", "TRUE", EFUN(SPT_SEQ), EFUN(SPT_REC));
	OK("", "=", "TRUE", EFUN(SPT_FUN), EFUN(SPT_REC));
	OK("", "=", "FALSE", SET(I(1)), SET(I(1), I(2)));
	OK("", "=", "FALSE", REC1("a", I(1)), REC1("b", I(1)));
	OK("", "=", "FALSE", TUP(I(1)), TUP(I(1), I(2)));
	OK("", "=", "FALSE", M("m"), I(1));
	OK("", "=", "FALSE", I(1), M("m"));
	OK("", "=", "TRUE", M("m"), M("m"));
	OK("", "=", "FALSE", M("m"), M("n"));
	OK("", "=", "FALSE", TUP(M("m")), TUP(S("x")));
	OK("", "#", "TRUE", I(1), I(2));
	OK("", "/=", "FALSE", S("a"), S("a"));
	ERR("", "=", "=: cannot compare 1 with \"a\"", I(1), S("a"));
	ERR("", "=", "=: cannot compare TRUE with 1", B(true), I(1));
	ERR("", "=", "=: cannot compare 1 with \"1\"", TUP(I(1)), TUP(S("1")));
	ERR("", "=", "=: cannot compare 2 with \"x\"", REC1("a", TUP(I(2))), REC1("a", TUP(S("x"))));
	ERR("", "=", "=: cannot compare <<1, 2>> with [a |-> 1, b |-> 2]", TUP(I(1), I(2)),
	    REC2("a", I(1), "b", I(2)));
	ERR("", "#", "#: cannot compare {1} with 1", SET(I(1)), I(1));
	ERR("", "/=", "#: cannot compare 1 with {}", I(1), ESET()); /* /= is # */
}

static void test_booleans(void)
{
	OK("", "\\lnot", "FALSE", B(true));
	OK("", "~", "TRUE", B(false));
	OK("", "\\neg", "FALSE", B(true));
	ERR("", "\\lnot", "\\lnot applies to Booleans, not 1", I(1));
	OK("", "\\equiv", "FALSE", B(true), B(false));
	OK("", "<=>", "TRUE", B(false), B(false));
	OK("", "\\equiv", "TRUE", B(true), B(true));
	ERR("", "\\equiv", "the second argument of \\equiv must be a Boolean, not 1", B(true), I(1));
}

static void test_finite_sets(void)
{
	OK("FiniteSets", "Cardinality", "3", SET(I(1), I(2), I(3)));
	OK("FiniteSets", "Cardinality", "0", ESET());
	OK("FiniteSets", "Cardinality", "2", SET(I(1), I(2), I(1)));
	ERR("FiniteSets", "Cardinality", "Cardinality applies to a set, not <<1>>", TUP(I(1)));
	OK("FiniteSets", "IsFiniteSet", "TRUE", SET(I(1)));
	OK("FiniteSets", "IsFiniteSet", "TRUE", ESET());
	ERR("FiniteSets", "IsFiniteSet", "IsFiniteSet applies to a set, not 1", I(1));
	OK("FiniteSetsExt", "Max", "3", SET(I(3), I(1), I(2)));
	OK("FiniteSetsExt", "Min", "-5", SET(I(3), I(-5), I(2)));
	OK("FiniteSetsExt", "Max", "7", SET(I(7)));
	ERR("FiniteSetsExt", "Max", "Max of the empty set", ESET());
	ERR("FiniteSetsExt", "Min", "Min of the empty set", ESET());
	ERR("FiniteSetsExt", "Max", "Max applies to a set of integers, not {1, \"a\"}",
	    SET(I(1), S("a")));
	ERR("FiniteSetsExt", "Min", "Min applies to a set, not 1", I(1));
	OK("FiniteSetsExt", "SumSet", "6", SET(I(1), I(2), I(3)));
	OK("FiniteSetsExt", "SumSet", "0", ESET());
	OK("FiniteSetsExt", "SumSet", "-1", SET(I(INT64_MIN), I(INT64_MAX)));
	ERR("FiniteSetsExt", "SumSet", "integer overflow in SumSet({1, 9223372036854775807})",
	    SET(I(INT64_MAX), I(1)));
	ERR("FiniteSetsExt", "SumSet", "SumSet applies to a set of integers", SET(TUP(I(1))));
}

static void test_len_head_tail(void)
{
	OK("Sequences", "Len", "2", TUP(I(1), I(2)));
	OK("Sequences", "Len", "0", EFUN(SPT_SEQ));
	OK("Sequences", "Len", "0", EFUN(SPT_REC));
	OK("Sequences", "Len", "0", EFUN(SPT_FUN));
	OK("Sequences", "Len", "3", S("abc"));
	ERR("Sequences", "Len", "Len applies to a sequence, not {1, 2}", SET(I(1), I(2)));
	ERR("Sequences", "Len", "Len applies to a sequence, not [a |-> 1]", REC1("a", I(1)));
	ERR("Sequences", "Len", "Len applies to a sequence, not (2 :> 1 @@ 3 :> 1)",
	    FUN2(I(2), I(1), I(3), I(1)));
	OK("Sequences", "Head", "1", TUP(I(1), I(2)));
	ERR("Sequences", "Head", "Head of the empty sequence", EFUN(SPT_SEQ));
	ERR("Sequences", "Head", "Head of the empty sequence", EFUN(SPT_REC));
	ERR("Sequences", "Head", "Head applies to a sequence, not \"ab\"", S("ab"));
	OK("Sequences", "Tail", "<<2, 3>>", TUP(I(1), I(2), I(3)));
	spt_val *t = OK("Sequences", "Tail", "<<>>", TUP(I(1)));
	CHECK(t && spt_value_eq(t, EFUN(SPT_REC)));
	OK("Sequences", "Tail", "\"b\"", S("ab"));
	ERR("Sequences", "Tail", "Tail of the empty sequence", EFUN(SPT_FUN));
	ERR("Sequences", "Tail", "Tail of the empty string", S(""));
	ERR("Sequences", "Tail", "Tail applies to a sequence, not 3", I(3));
}

static void test_append_concat(void)
{
	OK("Sequences", "Append", "<<1, 2>>", TUP(I(1)), I(2));
	spt_val *a = OK("Sequences", "Append", "<<{}>>", EFUN(SPT_REC), ESET());
	CHECK(a && a->kind == SPT_SEQ);
	ERR("Sequences", "Append", "the first argument of Append must be a sequence, not 1", I(1),
	    I(2));
	OK("Sequences", "\\o", "<<1, 2, 3>>", TUP(I(1)), TUP(I(2), I(3)));
	OK("Sequences", "\\circ", "<<1>>", TUP(I(1)), EFUN(SPT_SEQ));
	spt_val *e = OK("Sequences", "\\o", "<<>>", EFUN(SPT_REC), EFUN(SPT_FUN));
	CHECK(e && spt_value_eq(e, EFUN(SPT_SEQ)));
	OK("Sequences", "\\o", "\"abcd\"", S("ab"), S("cd"));
	OK("Sequences", "\\o", "\"\"", S(""), S(""));
	ERR("Sequences", "\\o", "the second argument of \\o must be a string, not <<1>>", S("ab"),
	    TUP(I(1)));
	ERR("Sequences", "\\o", "the second argument of \\o must be a sequence, not \"ab\"",
	    TUP(I(1)), S("ab"));
	ERR("Sequences", "\\o", "the first argument of \\o must be a sequence, not {}", ESET(),
	    TUP(I(1)));
}

static void test_subseq(void)
{
	spt_val *s = TUP(I(1), I(2), I(3));
	OK("Sequences", "SubSeq", "<<2, 3>>", s, I(2), I(3));
	OK("Sequences", "SubSeq", "<<1>>", s, I(1), I(1));
	OK("Sequences", "SubSeq", "<<1, 2, 3>>", s, I(1), I(3));
	OK("Sequences", "SubSeq", "<<>>", s, I(3), I(2));
	OK("Sequences", "SubSeq", "<<>>", s, I(5), I(1)); /* m > n wins over the range check */
	OK("Sequences", "SubSeq", "<<>>", s, I(INT64_MAX), I(INT64_MIN));
	OK("Sequences", "SubSeq", "<<>>", EFUN(SPT_REC), I(1), I(0));
	ERR("Sequences", "SubSeq", "SubSeq(<<1, 2, 3>>, 0, 1): index out of 1..3", s, I(0), I(1));
	ERR("Sequences", "SubSeq", "SubSeq(<<1, 2, 3>>, 1, 4): index out of 1..3", s, I(1), I(4));
	ERR("Sequences", "SubSeq", "SubSeq(<<1, 2, 3>>, 4, 4)", s, I(4), I(4));
	ERR("Sequences", "SubSeq", "SubSeq(<<>>, 1, 1): index out of 1..0", EFUN(SPT_SEQ), I(1),
	    I(1));
	OK("Sequences", "SubSeq", "\"ell\"", S("hello"), I(2), I(4));
	OK("Sequences", "SubSeq", "\"\"", S("abc"), I(3), I(2));
	ERR("Sequences", "SubSeq", "SubSeq(\"abc\", 2, 4)", S("abc"), I(2), I(4));
	ERR("Sequences", "SubSeq", "the second argument of SubSeq must be an integer, not \"a\"", s,
	    S("a"), I(1));
	ERR("Sequences", "SubSeq", "the third argument of SubSeq must be an integer", s, I(1),
	    ESET());
	ERR("Sequences", "SubSeq", "the first argument of SubSeq must be a sequence, not {1}",
	    SET(I(1)), I(1), I(1));
}

static void test_sequences_ext(void)
{
	const char *X = "SequencesExt";
	OK(X, "ToSet", "{1, 2}", TUP(I(1), I(1), I(2)));
	OK(X, "ToSet", "{}", EFUN(SPT_REC));
	ERR(X, "ToSet", "ToSet applies to a sequence, not {1}", SET(I(1)));
	OK(X, "Reverse", "<<3, 2, 1>>", TUP(I(1), I(2), I(3)));
	OK(X, "Reverse", "<<>>", EFUN(SPT_FUN));
	OK(X, "Last", "2", TUP(I(1), I(2)));
	ERR(X, "Last", "Last of the empty sequence", EFUN(SPT_SEQ));
	OK(X, "Front", "<<1>>", TUP(I(1), I(2)));
	OK(X, "Front", "<<>>", TUP(I(1)));
	OK(X, "Front", "<<>>", EFUN(SPT_SEQ));
	ERR(X, "Front", "Front applies to a sequence, not 1", I(1));
	OK(X, "Cons", "<<0, 1>>", I(0), TUP(I(1)));
	OK(X, "Cons", "<<0>>", I(0), EFUN(SPT_REC));
	ERR(X, "Cons", "the second argument of Cons must be a sequence, not 1", I(0), I(1));
	OK(X, "Snoc", "<<1, 2>>", I(2), TUP(I(1)));
	OK(X, "IsPrefix", "TRUE", TUP(I(1)), TUP(I(1), I(2)));
	OK(X, "IsPrefix", "FALSE", TUP(I(2)), TUP(I(1), I(2)));
	OK(X, "IsPrefix", "TRUE", EFUN(SPT_SEQ), EFUN(SPT_REC));
	OK(X, "IsPrefix", "FALSE", TUP(I(1), I(2), I(3)), TUP(I(1), I(2)));
	OK(X, "IsPrefix", "TRUE", TUP(I(1), I(2)), TUP(I(1), I(2)));
	OK(X, "IsStrictPrefix", "FALSE", TUP(I(1), I(2)), TUP(I(1), I(2)));
	OK(X, "IsStrictPrefix", "TRUE", TUP(I(1)), TUP(I(1), I(2)));
	OK(X, "IsSuffix", "TRUE", TUP(I(2)), TUP(I(1), I(2)));
	OK(X, "IsSuffix", "FALSE", TUP(I(1)), TUP(I(1), I(2)));
	OK(X, "IsStrictSuffix", "FALSE", TUP(I(1), I(2)), TUP(I(1), I(2)));
	OK(X, "IsStrictSuffix", "TRUE", EFUN(SPT_SEQ), TUP(I(1)));
	ERR(X, "IsPrefix", "IsPrefix: cannot compare \"a\" with 1", TUP(S("a")), TUP(I(1)));
	ERR(X, "IsPrefix", "the second argument of IsPrefix must be a sequence", TUP(I(1)), ESET());
	OK(X, "Contains", "TRUE", TUP(I(1), I(2)), I(2));
	OK(X, "Contains", "FALSE", TUP(I(1), I(2)), I(3));
	OK(X, "Contains", "FALSE", EFUN(SPT_SEQ), I(1));
	ERR(X, "Contains", "Contains: cannot compare 1 with \"1\"", TUP(I(1)), S("1"));
	OK(X, "SetToSeq", "<<1, 2, 3>>", SET(I(3), I(1), I(2)));
	OK(X, "SetToSeq", "<<>>", ESET());
	/* TLC cannot order a set mixing kinds (tests/cli/test_tlc_order.sh: TLC's order) */
	ERR(X, "SetToSeq", "SetToSeq: TLC cannot compare a string with an integer: \"b\" and 1", SET(S("b"), I(1)));
	ERR(X, "SetToSeq", "SetToSeq applies to a set, not <<1>>", TUP(I(1)));
}

static void test_functions(void)
{
	const char *X = "Functions";
	OK(X, "Range", "{1, 2}", TUP(I(1), I(1), I(2)));
	OK(X, "Range", "{1}", REC2("a", I(1), "b", I(1)));
	OK(X, "Range", "{}", EFUN(SPT_REC));
	ERR(X, "Range", "Range applies to a function, not 1", I(1));
	OK(X, "Restrict", "[a |-> 1]", REC2("a", I(1), "b", I(2)), SET(S("a")));
	OK(X, "Restrict", "<<5, 6>>", TUP(I(5), I(6), I(7)), SET(I(1), I(2)));
	OK(X, "Restrict", "(2 :> 6 @@ 3 :> 7)", TUP(I(5), I(6), I(7)), SET(I(2), I(3)));
	OK(X, "Restrict", "<<>>", TUP(I(5)), ESET());
	ERR(X, "Restrict", "Restrict: 2 is not in the domain of <<5>>", TUP(I(5)), SET(I(2)));
	ERR(X, "Restrict", "the second argument of Restrict must be a set", TUP(I(5)), I(1));
	OK(X, "IsInjective", "TRUE", TUP(I(1), I(2)));
	OK(X, "IsInjective", "FALSE", TUP(I(1), I(1)));
	OK(X, "IsInjective", "TRUE", EFUN(SPT_SEQ));
	OK(X, "Injective", "FALSE", REC2("a", I(1), "b", I(1)));
	ERR(X, "IsInjective", "IsInjective applies to a function, not {}", ESET());
}

static void test_one_point_merge(void)
{
	spt_val *f = OK("TLC", ":>", "<<\"a\">>", I(1), S("a"));
	CHECK(f && f->kind == SPT_SEQ && spt_value_eq(f, TUP(S("a"))));
	OK("TLC", ":>", "(2 :> \"a\")", I(2), S("a"));
	spt_val *r = OK("TLC", ":>", "[x |-> 1]", S("x"), I(1));
	CHECK(r && r->kind == SPT_REC && spt_value_eq(r, REC1("x", I(1))));
	OK("TLC", ":>", "({1} :> 2)", SET(I(1)), I(2));
	/* The left function's pairs win. */
	OK("TLC", "@@", "<<\"a\", \"c\">>", TUP(S("a")), FUN2(I(1), S("b"), I(2), S("c")));
	OK("TLC", "@@", "<<\"p\", \"x\">>", FUN1(I(2), S("x")), TUP(S("p"), S("q")));
	OK("TLC", "@@", "(1 :> \"p\" @@ 5 :> \"y\")", FUN1(I(5), S("y")), TUP(S("p")));
	OK("TLC", "@@", "[a |-> 1, b |-> 3]", REC1("a", I(1)), REC2("a", I(2), "b", I(3)));
	OK("TLC", "@@", "(1 :> 1 @@ \"a\" :> 2)", TUP(I(1)), REC1("a", I(2)));
	OK("TLC", "@@", "<<>>", EFUN(SPT_SEQ), EFUN(SPT_REC));
	OK("TLC", "@@", "<<7>>", EFUN(SPT_REC), TUP(I(7)));
	ERR("TLC", "@@", "the first argument of @@ must be a function, not 1", I(1), TUP(I(1)));
	ERR("TLC", "@@", "the second argument of @@ must be a function, not {}", TUP(I(1)), ESET());
}

static void test_print_assert_tostring(void)
{
	char *text = NULL;
	size_t len = 0;
	bi_print_stream = open_memstream(&text, &len);
	OK("TLC", "Print", "5", S("hi"), I(5));
	OK("TLC", "PrintT", "TRUE", TUP(I(1), S("a")));
	fclose(bi_print_stream);
	bi_print_stream = NULL;
	CHECKF(text && strcmp(text, "\"hi\"\n<<1, \"a\">>\n") == 0, "printed %s", text);
	free(text);
	OK("TLC", "Assert", "TRUE", B(true), S("never"));
	ERR("TLC", "Assert", "Assert failed: boom", B(false), S("boom"));
	ERR("TLC", "Assert", "Assert failed: <<1>>", B(false), TUP(I(1)));
	ERR("TLC", "Assert", "the first argument of Assert must be a Boolean, not 1", I(1), S("x"));
	OK("TLC", "ToString", "\"<<1, \\\"a\\\">>\"", TUP(I(1), S("a")));
	spt_val *s = OK("TLC", "ToString", "\"\\\"a\\\"\"", S("a"));
	CHECK(s && s->kind == SPT_STR && strcmp(s->u.s, "\"a\"") == 0);
	OK("TLC", "ToString", "\"{}\"", ESET());
	OK("TLC", "ToString", "\"-3\"", I(-3));
	OK("TLC", "TLCEval", "{1}", SET(I(1)));
}

static void test_permutations(void)
{
	OK("TLC", "Permutations", "{<<1, 2>>, <<2, 1>>}", SET(I(1), I(2)));
	OK("TLC", "Permutations", "{<<>>}", ESET());
	OK("TLC", "Permutations", "{<<1>>}", SET(I(1)));
	OK("TLC", "Permutations", "{[a |-> \"a\", b |-> \"b\"], [a |-> \"b\", b |-> \"a\"]}",
	   SET(S("a"), S("b")));
	OK("TLC", "Permutations", "{(1 :> 1 @@ 3 :> 3), (1 :> 3 @@ 3 :> 1)}", SET(I(1), I(3)));
	spt_val *p3 = call(__LINE__, "TLC", "Permutations", 1, (spt_val *[]){ RANGE(1, 3) });
	CHECK(p3 && p3->n == 6);
	CHECK(p3 && spt_set_find(p3, TUP(I(3), I(1), I(2))) >= 0);
	spt_val *p8 = call(__LINE__, "TLC", "Permutations", 1, (spt_val *[]){ RANGE(1, 8) });
	CHECK(p8 && p8->n == 40320);
	ERR("TLC", "Permutations", "Permutations of a set of 9 elements is too large to enumerate",
	    RANGE(1, 9));
	ERR("TLC", "Permutations", "Permutations applies to a set, not <<1>>", TUP(I(1)));
}

int main(void)
{
	spt_arena_init(&A);
	ev_init(&EV, &A);
	RUN(test_lookup);
	RUN(test_add_sub_mul);
	RUN(test_div_mod);
	RUN(test_pow);
	RUN(test_compare_and_interval);
	RUN(test_set_algebra);
	RUN(test_subset_union);
	RUN(test_domain);
	RUN(test_membership);
	RUN(test_times);
	RUN(test_equality);
	RUN(test_booleans);
	RUN(test_finite_sets);
	RUN(test_len_head_tail);
	RUN(test_append_concat);
	RUN(test_subseq);
	RUN(test_sequences_ext);
	RUN(test_functions);
	RUN(test_one_point_merge);
	RUN(test_print_assert_tostring);
	RUN(test_permutations);
	ev_fini(&EV);
	spt_arena_fini(&A);
	TEST_MAIN_END("test_builtins");
}
