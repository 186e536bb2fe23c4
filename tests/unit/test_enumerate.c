/* Successor enumeration (replay/enumerate.c) on small specs whose successor sets are known by
 * hand: every successor of an action from a state is collected and the set compared exactly
 * with the expected one, written as a TLA+ set of state tuples (variables in declaration order). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "enumerate.h"
#include "interp.h"
#include "module.h"
#include "spectap/arena.h"
#include "spectap/value.h"

static struct spt_arena A;
static struct spec *SP;
static struct interp IN;
static char DIR_[64];
static char PATH[128];

/* ---- the specs ---- */

static const char counter_tla[] =
	"---- MODULE UCounter ----\n"
	"EXTENDS Naturals\n"
	"VARIABLES x, y\n"
	"vars == <<x, y>>\n"
	"Init == x \\in 0..2 /\\ y = 0\n"
	"InitDep == x \\in {1, 2} /\\ y = x + 10\n"
	"InitPartial == x = 0\n"
	"Inc == x < 3 /\\ x' = x + 1 /\\ y' = y\n"
	"Dec == x > 0 /\\ x' = x - 1 /\\ UNCHANGED y\n"
	"Next == Inc \\/ Dec\n"
	"Pick == x' \\in {x, x + 10} /\\ y' \\in 1..2\n"
	"AssignThenGuard == x' = x + 1 /\\ x' > 1 /\\ y' = y\n"
	"ReadFirst == x' > 1 /\\ x' = 1 /\\ y' = y\n"
	"Partial == x' = x + 1\n"
	"UnchTuple == x' = 5 /\\ UNCHANGED <<y>>\n"
	"UnchVars == UNCHANGED vars\n"
	"UnchAfterOk == x' = x /\\ UNCHANGED <<x, y>>\n"
	"UnchAfterBad == x' = x + 1 /\\ UNCHANGED <<x, y>>\n"
	"ExMulti == \\E a \\in 1..2, b \\in {10, 20} : x' = a + b /\\ y' = a\n"
	"ExTuple == \\E <<a, b>> \\in {<<1, 2>>, <<3, 4>>} : x' = a /\\ y' = b\n"
	"IfAct == IF x = 0 THEN x' = 1 /\\ y' = y ELSE x' = 0 /\\ y' \\in {7, 8}\n"
	"CaseAct == CASE x = 0 -> x' = 100 /\\ y' = y\n"
	"             [] x = 1 -> x' \\in {1, 2} /\\ y' = y\n"
	"             [] OTHER -> UNCHANGED vars\n"
	"CaseNoArm == CASE x = 7 -> UNCHANGED vars\n"
	"Add(k) == x' = x + k /\\ y' = y\n"
	"CallAdd == \\E k \\in {1, 2} : Add(k)\n"
	"AddOrDouble(k) == Add(k) \\/ Add(2 * k)\n"
	"LetAct == LET d == x + 3 IN x' = d /\\ y' = d\n"
	"Stutter == [Inc]_vars\n"
	"ReAssign == x' = 1 /\\ x' = 1 /\\ y' = 0\n"
	"ReAssignBad == x' = 1 /\\ x' = 2 /\\ y' = 0\n"
	"MemAfter == x' = 3 /\\ x' \\in {1, 2, 3} /\\ y' = 0\n"
	"Disabled == FALSE /\\ x' = 0 /\\ y' = 0\n"
	"PickEmpty == x' \\in {} /\\ y' = y\n"
	"====\n";

/* The classic two-phase commit, with two resource managers. */
static const char tpc_tla[] =
	"---- MODULE UTwoPhase ----\n"
	"RM == {\"r1\", \"r2\"}\n"
	"VARIABLES rmState, tmState, tmPrepared, msgs\n"
	"W == \"working\"\n"
	"P(r) == [type |-> \"Prepared\", rm |-> r]\n"
	"Init == /\\ rmState = [r \\in RM |-> \"working\"]\n"
	"        /\\ tmState = \"init\"\n"
	"        /\\ tmPrepared = {}\n"
	"        /\\ msgs = {}\n"
	"TMRcvPrepared(r) == /\\ tmState = \"init\"\n"
	"                    /\\ P(r) \\in msgs\n"
	"                    /\\ tmPrepared' = tmPrepared \\cup {r}\n"
	"                    /\\ UNCHANGED <<rmState, tmState, msgs>>\n"
	"TMCommit == /\\ tmState = \"init\"\n"
	"            /\\ tmPrepared = RM\n"
	"            /\\ tmState' = \"committed\"\n"
	"            /\\ msgs' = msgs \\cup {[type |-> \"Commit\"]}\n"
	"            /\\ UNCHANGED <<rmState, tmPrepared>>\n"
	"TMAbort == /\\ tmState = \"init\"\n"
	"           /\\ tmState' = \"aborted\"\n"
	"           /\\ msgs' = msgs \\cup {[type |-> \"Abort\"]}\n"
	"           /\\ UNCHANGED <<rmState, tmPrepared>>\n"
	"RMPrepare(r) == /\\ rmState[r] = \"working\"\n"
	"                /\\ rmState' = [rmState EXCEPT ![r] = \"prepared\"]\n"
	"                /\\ msgs' = msgs \\cup {P(r)}\n"
	"                /\\ UNCHANGED <<tmState, tmPrepared>>\n"
	"RMChooseToAbort(r) == /\\ rmState[r] = \"working\"\n"
	"                      /\\ rmState' = [rmState EXCEPT ![r] = \"aborted\"]\n"
	"                      /\\ UNCHANGED <<tmState, tmPrepared, msgs>>\n"
	"RMRcvCommitMsg(r) == /\\ [type |-> \"Commit\"] \\in msgs\n"
	"                     /\\ rmState' = [rmState EXCEPT ![r] = \"committed\"]\n"
	"                     /\\ UNCHANGED <<tmState, tmPrepared, msgs>>\n"
	"RMRcvAbortMsg(r) == /\\ [type |-> \"Abort\"] \\in msgs\n"
	"                    /\\ rmState' = [rmState EXCEPT ![r] = \"aborted\"]\n"
	"                    /\\ UNCHANGED <<tmState, tmPrepared, msgs>>\n"
	"Next == \\/ TMCommit \\/ TMAbort\n"
	"        \\/ \\E r \\in RM : \\/ TMRcvPrepared(r) \\/ RMPrepare(r) \\/ RMChooseToAbort(r)\n"
	"                         \\/ RMRcvCommitMsg(r) \\/ RMRcvAbortMsg(r)\n"
	"====\n";

/* Raft leader election over a set of vote requests, three servers. */
static const char raft_tla[] =
	"---- MODULE URaft ----\n"
	"EXTENDS Naturals, FiniteSets\n"
	"Server == {\"s1\", \"s2\", \"s3\"}\n"
	"Nil == \"none\"\n"
	"VARIABLES currentTerm, state, votedFor, votesGranted, requests\n"
	"Init == /\\ currentTerm = [s \\in Server |-> 0]\n"
	"        /\\ state = [s \\in Server |-> \"F\"]\n"
	"        /\\ votedFor = [s \\in Server |-> Nil]\n"
	"        /\\ votesGranted = [s \\in Server |-> {}]\n"
	"        /\\ requests = {}\n"
	"Timeout(i) == /\\ state[i] \\in {\"F\", \"C\"}\n"
	"              /\\ state' = [state EXCEPT ![i] = \"C\"]\n"
	"              /\\ currentTerm' = [currentTerm EXCEPT ![i] = @ + 1]\n"
	"              /\\ votedFor' = [votedFor EXCEPT ![i] = i]\n"
	"              /\\ votesGranted' = [votesGranted EXCEPT ![i] = {i}]\n"
	"              /\\ UNCHANGED requests\n"
	"RequestVote(i, j) == /\\ state[i] = \"C\"\n"
	"                     /\\ j \\notin votesGranted[i]\n"
	"                     /\\ requests' = requests \\cup {<<i, j, currentTerm[i]>>}\n"
	"                     /\\ UNCHANGED <<currentTerm, state, votedFor, votesGranted>>\n"
	"HandleRequestVote(r) ==\n"
	"    LET i == r[1]  j == r[2]  t == r[3]\n"
	"        newer == t > currentTerm[j]\n"
	"        vf == IF newer THEN Nil ELSE votedFor[j]\n"
	"        grant == t >= currentTerm[j] /\\ vf \\in {Nil, i}\n"
	"    IN /\\ requests' = requests \\ {r}\n"
	"       /\\ currentTerm' = [currentTerm EXCEPT ![j] = IF newer THEN t ELSE @]\n"
	"       /\\ state' = [state EXCEPT ![j] = IF newer THEN \"F\" ELSE @]\n"
	"       /\\ IF grant\n"
	"          THEN /\\ votedFor' = [votedFor EXCEPT ![j] = i]\n"
	"               /\\ votesGranted' = [votesGranted EXCEPT ![i] = @ \\cup {j}]\n"
	"          ELSE /\\ votedFor' = [votedFor EXCEPT ![j] = vf]\n"
	"               /\\ UNCHANGED votesGranted\n"
	"BecomeLeader(i) == /\\ state[i] = \"C\"\n"
	"                   /\\ Cardinality(votesGranted[i]) * 2 > Cardinality(Server)\n"
	"                   /\\ state' = [state EXCEPT ![i] = \"L\"]\n"
	"                   /\\ UNCHANGED <<currentTerm, votedFor, votesGranted, requests>>\n"
	"Next == \\/ \\E i \\in Server : Timeout(i) \\/ BecomeLeader(i)\n"
	"        \\/ \\E i, j \\in Server : i # j /\\ RequestVote(i, j)\n"
	"        \\/ \\E r \\in requests : HandleRequestVote(r)\n"
	"====\n";

/* ---- helpers ---- */

static bool load(const char *name, const char *text)
{
	snprintf(PATH, sizeof(PATH), "%s/%s.tla", DIR_, name);
	FILE *f = fopen(PATH, "w");
	CHECK(f != NULL);
	if (!f)
		return false;
	fputs(text, f);
	fclose(f);
	struct spec_error err = { 0 };
	int rc = spec_load(PATH, &SP, &err);
	CHECKF(rc == 0, "%s: %s:%u:%u: %s", name, err.pos.file, err.pos.line, err.pos.col, err.msg);
	if (rc)
		return false;
	spt_arena_init(&A);
	interp_init(&IN, SP, &A);
	return true;
}

static void unload(void)
{
	interp_fini(&IN);
	spt_arena_fini(&A);
	spec_free(SP);
	SP = NULL;
	unlink(PATH);
}

static const char *show(spt_val *v)
{
	static char buf[2][8192];
	static int k;
	k ^= 1;
	FILE *f = fmemopen(buf[k], sizeof(buf[k]), "w");
	if (!f)
		return "<fmemopen failed>";
	spt_value_print(f, v);
	fclose(f);
	buf[k][sizeof(buf[k]) - 1] = '\0';
	return buf[k];
}

static uint32_t NSLOTS; /* the frame the last parsed expression needs */

static const struct ast *parse(int line, const char *text)
{
	struct ast *e = NULL;
	struct spec_error err = { 0 };
	int rc = spec_parse_expr(SP, text, "test", &e, &NSLOTS, &err);
	CHECKF(rc == 0, "line %d: cannot parse %s: %s", line, text, err.msg);
	return rc ? NULL : e;
}

/* A constant expression's value (no state variable is read). */
static spt_val *value(int line, const char *text)
{
	const struct ast *e = parse(line, text);
	if (!e)
		return NULL;
	spt_val *v = NULL;
	ev_clear_error(&IN.ev);
	int rc = eval(&IN, interp_frame_ctx(&IN, NSLOTS), e, &v);
	CHECKF(rc == 0, "line %d: cannot evaluate %s: %s", line, text, IN.ev.err.msg);
	return rc ? NULL : v;
}

/* Sets the current state from a tuple, one value per variable. */
static void set_state(int line, const char *tuple)
{
	for (uint32_t i = 0; i < IN.n_vars; i++)
		IN.cur[i] = NULL;
	spt_val *t = value(line, tuple);
	CHECKF(t && t->kind == SPT_SEQ && t->n == IN.n_vars, "line %d: %s is not a state", line, tuple);
	if (!t || t->kind != SPT_SEQ || t->n != IN.n_vars)
		return;
	for (uint32_t i = 0; i < IN.n_vars; i++)
		IN.cur[i] = (spt_val *)t->u.elems[i];
}

struct coll {
	spt_val *items[512];
	uint32_t n;
};

static int collect(struct interp *in, void *arg)
{
	struct coll *c = arg;
	if (c->n == 512)
		return 99;
	c->items[c->n++] = spt_seq(&A, in->next, in->n_vars);
	return 0;
}

/* Enumerates action (an expression) from the current state; the set of successors, or NULL on
 * an error (message in IN.ev). *rc gets enumerate's return value. */
static spt_val *successors(int line, const char *action, int *rc, bool init)
{
	const struct ast *e = parse(line, action);
	*rc = -100;
	if (!e)
		return NULL;
	struct coll c = { .n = 0 };
	memset(IN.next, 0, IN.n_vars * sizeof(*IN.next));
	ev_clear_error(&IN.ev);
	IN.init_mode = init;
	*rc = enumerate(&IN, interp_frame_ctx(&IN, NSLOTS), e, collect, &c);
	IN.init_mode = false;
	for (uint32_t i = 0; i < IN.n_vars; i++)
		CHECKF(IN.next[i] == NULL, "line %d: %s: next[%u] left assigned after enumeration", line, action, i);
	if (*rc)
		return NULL;
	return spt_set(&A, c.items, c.n);
}

static void expect_succ_(int line, const char *action, const char *expected, bool init)
{
	int rc;
	spt_val *got = successors(line, action, &rc, init);
	CHECKF(rc == 0, "line %d: %s: enumerate returned %d: %s:%u:%u: %s", line, action, rc,
	       IN.ev.err.pos.file ? IN.ev.err.pos.file : "?", IN.ev.err.pos.line, IN.ev.err.pos.col, IN.ev.err.msg);
	spt_val *want = value(line, expected);
	if (!got || !want)
		return;
	CHECKF(spt_value_eq(got, want), "line %d: %s:\n    got      %s\n    expected %s", line, action, show(got),
	       show(want));
}
#define EXPECT_SUCC(action, expected) expect_succ_(__LINE__, action, expected, false)
#define EXPECT_INIT(action, expected) expect_succ_(__LINE__, action, expected, true)
#define STATE(tuple) set_state(__LINE__, tuple)

static void expect_error_(int line, const char *action, const char *words, bool init)
{
	int rc;
	successors(line, action, &rc, init);
	CHECKF(rc == EVAL_ERR, "line %d: %s: expected an error with \"%s\", got %d", line, action, words, rc);
	if (rc == EVAL_ERR)
		CHECKF(strstr(IN.ev.err.msg, words) != NULL, "line %d: %s: error \"%s\" lacks \"%s\"", line, action,
		       IN.ev.err.msg, words);
}
#define EXPECT_ERROR(action, words) expect_error_(__LINE__, action, words, false)
#define EXPECT_INIT_ERROR(action, words) expect_error_(__LINE__, action, words, true)

/* ---- counter ---- */

static void test_counter_basic(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<1, 5>>");
	EXPECT_SUCC("Inc", "{<<2, 5>>}");
	EXPECT_SUCC("Dec", "{<<0, 5>>}");
	EXPECT_SUCC("Next", "{<<2, 5>>, <<0, 5>>}");
	STATE("<<3, 5>>");
	EXPECT_SUCC("Inc", "{}");
	EXPECT_SUCC("Next", "{<<2, 5>>}");
	STATE("<<0, 0>>");
	EXPECT_SUCC("Dec", "{}");
	EXPECT_SUCC("Disabled", "{}");
	unload();
}

static void test_counter_init(void)
{
	if (!load("UCounter", counter_tla))
		return;
	EXPECT_INIT("Init", "{<<0, 0>>, <<1, 0>>, <<2, 0>>}");
	EXPECT_INIT("InitDep", "{<<1, 11>>, <<2, 12>>}");
	EXPECT_INIT_ERROR("InitPartial", "Init does not assign y");
	unload();
}

static void test_counter_branching(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<1, 5>>");
	EXPECT_SUCC("Pick", "{<<1, 1>>, <<1, 2>>, <<11, 1>>, <<11, 2>>}");
	EXPECT_SUCC("PickEmpty", "{}");
	EXPECT_SUCC("ExMulti", "{<<11, 1>>, <<21, 1>>, <<12, 2>>, <<22, 2>>}");
	EXPECT_SUCC("ExTuple", "{<<1, 2>>, <<3, 4>>}");
	EXPECT_SUCC("\\E a \\in {} : x' = a /\\ y' = a", "{}");
	unload();
}

static void test_counter_assign_then_guard(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<1, 5>>");
	EXPECT_SUCC("AssignThenGuard", "{<<2, 5>>}");
	EXPECT_SUCC("ReAssign", "{<<1, 0>>}");
	EXPECT_SUCC("ReAssignBad", "{}");
	EXPECT_SUCC("MemAfter", "{<<3, 0>>}");
	STATE("<<0, 5>>");
	EXPECT_SUCC("AssignThenGuard", "{}");
	unload();
}

static void test_counter_errors(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<1, 5>>");
	EXPECT_ERROR("Partial", "the action does not assign y'");
	EXPECT_ERROR("ReadFirst", "x' is used before it is assigned");
	EXPECT_ERROR("CaseNoArm", "no CASE arm is true");
	EXPECT_ERROR("x' \\in Nat /\\ y' = y", "finite set");
	/* A disabled branch does not need to assign everything; an enabled one does. */
	EXPECT_ERROR("\\/ FALSE /\\ x' = 1 \\/ x' = 2", "the action does not assign y'");
	unload();
}

static void test_counter_unchanged(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<1, 5>>");
	EXPECT_SUCC("UnchTuple", "{<<5, 5>>}");
	EXPECT_SUCC("UnchVars", "{<<1, 5>>}");
	EXPECT_SUCC("UNCHANGED <<x, y>>", "{<<1, 5>>}");
	EXPECT_SUCC("UNCHANGED <<<<x>>, y>>", "{<<1, 5>>}");
	EXPECT_SUCC("UNCHANGED vars /\\ x' = 2", "{}");
	EXPECT_SUCC("UNCHANGED vars /\\ x' = 1", "{<<1, 5>>}");
	/* <<A>>_v: only the steps of A that change v */
	EXPECT_SUCC("<<UnchVars>>_vars", "{}");
	EXPECT_SUCC("<<x' \\in {1, 2} /\\ y' = y>>_vars", "{<<2, 5>>}");
	EXPECT_SUCC("<<x' \\in {1, 2} /\\ y' = y>>_y", "{}");
	EXPECT_SUCC("LET v == <<x, y>> IN UNCHANGED v", "{<<1, 5>>}");
	EXPECT_SUCC("LET v == <<y>> IN x' = 2 /\\ UNCHANGED v", "{<<2, 5>>}");
	EXPECT_SUCC("UnchAfterOk", "{<<1, 5>>}");
	EXPECT_SUCC("UnchAfterBad", "{}");
	EXPECT_SUCC("Stutter", "{<<2, 5>>, <<1, 5>>}");
	STATE("<<3, 5>>");
	EXPECT_SUCC("Stutter", "{<<3, 5>>}");
	unload();
}

static void test_counter_if_case_let_calls(void)
{
	if (!load("UCounter", counter_tla))
		return;
	STATE("<<0, 5>>");
	EXPECT_SUCC("IfAct", "{<<1, 5>>}");
	EXPECT_SUCC("CaseAct", "{<<100, 5>>}");
	EXPECT_SUCC("LetAct", "{<<3, 3>>}");
	STATE("<<1, 5>>");
	EXPECT_SUCC("IfAct", "{<<0, 7>>, <<0, 8>>}");
	EXPECT_SUCC("CaseAct", "{<<1, 5>>, <<2, 5>>}");
	EXPECT_SUCC("CallAdd", "{<<2, 5>>, <<3, 5>>}");
	EXPECT_SUCC("AddOrDouble(3)", "{<<4, 5>>, <<7, 5>>}");
	EXPECT_SUCC("\\E k \\in {1, 5} : AddOrDouble(k)", "{<<2, 5>>, <<3, 5>>, <<6, 5>>, <<11, 5>>}");
	STATE("<<2, 5>>");
	EXPECT_SUCC("CaseAct", "{<<2, 5>>}");
	unload();
}

/* ---- two-phase commit ---- */

static void test_two_phase(void)
{
	if (!load("UTwoPhase", tpc_tla))
		return;
	/* state: <<rmState, tmState, tmPrepared, msgs>> */
	EXPECT_INIT("Init", "{<<[r1 |-> W, r2 |-> W], \"init\", {}, {}>>}");
	STATE("<<[r1 |-> W, r2 |-> W], \"init\", {}, {}>>");
	EXPECT_SUCC("Next", "{<<[r1 |-> W, r2 |-> W], \"aborted\", {}, {[type |-> \"Abort\"]}>>,"
			    " <<[r1 |-> \"prepared\", r2 |-> W], \"init\", {}, {P(\"r1\")}>>,"
			    " <<[r1 |-> W, r2 |-> \"prepared\"], \"init\", {}, {P(\"r2\")}>>,"
			    " <<[r1 |-> \"aborted\", r2 |-> W], \"init\", {}, {}>>,"
			    " <<[r1 |-> W, r2 |-> \"aborted\"], \"init\", {}, {}>>}");
	EXPECT_SUCC("TMCommit", "{}");
	EXPECT_SUCC("\\E r \\in RM : TMRcvPrepared(r)", "{}");

	STATE("<<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"init\", {\"r1\"}, {P(\"r1\"), P(\"r2\")}>>");
	EXPECT_SUCC("Next", "{<<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"init\", {\"r1\"}, {P(\"r1\"), P(\"r2\")}>>,"
			    " <<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"init\", {\"r1\", \"r2\"}, {P(\"r1\"), P(\"r2\")}>>,"
			    " <<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"aborted\", {\"r1\"},"
			    "   {P(\"r1\"), P(\"r2\"), [type |-> \"Abort\"]}>>}");

	STATE("<<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"init\", {\"r1\", \"r2\"}, {P(\"r1\"), P(\"r2\")}>>");
	EXPECT_SUCC("TMCommit", "{<<[r1 |-> \"prepared\", r2 |-> \"prepared\"], \"committed\", {\"r1\", \"r2\"},"
				"   {P(\"r1\"), P(\"r2\"), [type |-> \"Commit\"]}>>}");

	STATE("<<[r1 |-> \"committed\", r2 |-> \"prepared\"], \"committed\", {\"r1\", \"r2\"},"
	      " {P(\"r1\"), P(\"r2\"), [type |-> \"Commit\"]}>>");
	EXPECT_SUCC("Next", "{<<[r1 |-> \"committed\", r2 |-> \"prepared\"], \"committed\", {\"r1\", \"r2\"},"
			    "   {P(\"r1\"), P(\"r2\"), [type |-> \"Commit\"]}>>,"
			    " <<[r1 |-> \"committed\", r2 |-> \"committed\"], \"committed\", {\"r1\", \"r2\"},"
			    "   {P(\"r1\"), P(\"r2\"), [type |-> \"Commit\"]}>>}");
	EXPECT_SUCC("RMRcvAbortMsg(\"r1\")", "{}");
	unload();
}

/* ---- Raft leader election ---- */

static void test_raft_election(void)
{
	if (!load("URaft", raft_tla))
		return;
	/* state: <<currentTerm, state, votedFor, votesGranted, requests>> */
	EXPECT_INIT("Init", "{<<[s1 |-> 0, s2 |-> 0, s3 |-> 0], [s1 |-> \"F\", s2 |-> \"F\", s3 |-> \"F\"],"
			    " [s1 |-> Nil, s2 |-> Nil, s3 |-> Nil], [s1 |-> {}, s2 |-> {}, s3 |-> {}], {}>>}");
	STATE("<<[s1 |-> 0, s2 |-> 0, s3 |-> 0], [s1 |-> \"F\", s2 |-> \"F\", s3 |-> \"F\"],"
	      " [s1 |-> Nil, s2 |-> Nil, s3 |-> Nil], [s1 |-> {}, s2 |-> {}, s3 |-> {}], {}>>");
	EXPECT_SUCC("Next", "{<<[s1 |-> 1, s2 |-> 0, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
			    "   [s1 |-> \"s1\", s2 |-> Nil, s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {}], {}>>,"
			    " <<[s1 |-> 0, s2 |-> 1, s3 |-> 0], [s1 |-> \"F\", s2 |-> \"C\", s3 |-> \"F\"],"
			    "   [s1 |-> Nil, s2 |-> \"s2\", s3 |-> Nil], [s1 |-> {}, s2 |-> {\"s2\"}, s3 |-> {}], {}>>,"
			    " <<[s1 |-> 0, s2 |-> 0, s3 |-> 1], [s1 |-> \"F\", s2 |-> \"F\", s3 |-> \"C\"],"
			    "   [s1 |-> Nil, s2 |-> Nil, s3 |-> \"s3\"], [s1 |-> {}, s2 |-> {}, s3 |-> {\"s3\"}], {}>>}");

	/* s1 is a candidate of term 1; s2 already follows term 1 and voted for s3. */
	const char *st = "<<[s1 |-> 1, s2 |-> 1, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
			 " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {}],"
			 " {<<\"s1\", \"s2\", 1>>, <<\"s1\", \"s3\", 1>>}>>";
	STATE(st);
	EXPECT_SUCC("\\E i \\in Server : BecomeLeader(i)", "{}");
	EXPECT_SUCC("\\E i, j \\in Server : i # j /\\ RequestVote(i, j)",
		    "{<<[s1 |-> 1, s2 |-> 1, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {}],"
		    " {<<\"s1\", \"s2\", 1>>, <<\"s1\", \"s3\", 1>>}>>}");
	EXPECT_SUCC("\\E r \\in requests : HandleRequestVote(r)",
		    /* s2 refuses (already voted for s3 in term 1) */
		    "{<<[s1 |-> 1, s2 |-> 1, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {}],"
		    " {<<\"s1\", \"s3\", 1>>}>>,"
		    /* s3 moves to term 1 and grants */
		    " <<[s1 |-> 1, s2 |-> 1, s3 |-> 1], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {}, s3 |-> {}],"
		    " {<<\"s1\", \"s2\", 1>>}>>}");
	EXPECT_SUCC("\\E i \\in Server : Timeout(i)",
		    "{<<[s1 |-> 2, s2 |-> 1, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {}],"
		    " {<<\"s1\", \"s2\", 1>>, <<\"s1\", \"s3\", 1>>}>>,"
		    " <<[s1 |-> 1, s2 |-> 2, s3 |-> 0], [s1 |-> \"C\", s2 |-> \"C\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> Nil], [s1 |-> {\"s1\"}, s2 |-> {\"s2\"}, s3 |-> {}],"
		    " {<<\"s1\", \"s2\", 1>>, <<\"s1\", \"s3\", 1>>}>>,"
		    " <<[s1 |-> 1, s2 |-> 1, s3 |-> 1], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"C\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> \"s3\"], [s1 |-> {\"s1\"}, s2 |-> {}, s3 |-> {\"s3\"}],"
		    " {<<\"s1\", \"s2\", 1>>, <<\"s1\", \"s3\", 1>>}>>}");

	/* s1 has two votes: it may become leader; s3 (a candidate of term 0... no: follower) */
	STATE("<<[s1 |-> 1, s2 |-> 1, s3 |-> 1], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
	      " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {}, s3 |-> {}], {}>>");
	EXPECT_SUCC("\\E i \\in Server : BecomeLeader(i)",
		    "{<<[s1 |-> 1, s2 |-> 1, s3 |-> 1], [s1 |-> \"L\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {}, s3 |-> {}], {}>>}");
	/* RequestVote only to the one server that has not voted for s1 */
	EXPECT_SUCC("\\E i, j \\in Server : i # j /\\ RequestVote(i, j)",
		    "{<<[s1 |-> 1, s2 |-> 1, s3 |-> 1], [s1 |-> \"C\", s2 |-> \"F\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s3\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {}, s3 |-> {}],"
		    " {<<\"s1\", \"s2\", 1>>}>>}");
	/* A newer term's request makes a leader step down and grant. */
	STATE("<<[s1 |-> 1, s2 |-> 2, s3 |-> 1], [s1 |-> \"L\", s2 |-> \"C\", s3 |-> \"F\"],"
	      " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\"}, s3 |-> {}],"
	      " {<<\"s2\", \"s1\", 2>>}>>");
	EXPECT_SUCC("Next",
		    /* HandleRequestVote: s1 to term 2, follower, votes s2 */
		    "{<<[s1 |-> 2, s2 |-> 2, s3 |-> 1], [s1 |-> \"F\", s2 |-> \"C\", s3 |-> \"F\"],"
		    " [s1 |-> \"s2\", s2 |-> \"s2\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\", \"s1\"}, s3 |-> {}],"
		    " {}>>,"
		    /* RequestVote(s2, s1) again: the same request, a stutter */
		    " <<[s1 |-> 1, s2 |-> 2, s3 |-> 1], [s1 |-> \"L\", s2 |-> \"C\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\"}, s3 |-> {}],"
		    " {<<\"s2\", \"s1\", 2>>}>>,"
		    /* RequestVote(s2, s3) */
		    " <<[s1 |-> 1, s2 |-> 2, s3 |-> 1], [s1 |-> \"L\", s2 |-> \"C\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\"}, s3 |-> {}],"
		    " {<<\"s2\", \"s1\", 2>>, <<\"s2\", \"s3\", 2>>}>>,"
		    /* Timeout(s2): term 3 */
		    " <<[s1 |-> 1, s2 |-> 3, s3 |-> 1], [s1 |-> \"L\", s2 |-> \"C\", s3 |-> \"F\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> \"s1\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\"}, s3 |-> {}],"
		    " {<<\"s2\", \"s1\", 2>>}>>,"
		    /* Timeout(s3): term 2 */
		    " <<[s1 |-> 1, s2 |-> 2, s3 |-> 2], [s1 |-> \"L\", s2 |-> \"C\", s3 |-> \"C\"],"
		    " [s1 |-> \"s1\", s2 |-> \"s2\", s3 |-> \"s3\"], [s1 |-> {\"s1\", \"s3\"}, s2 |-> {\"s2\"}, s3 |-> {\"s3\"}],"
		    " {<<\"s2\", \"s1\", 2>>}>>"
		    /* BecomeLeader(s1) is disabled (already leader); s1 cannot time out as a leader */
		    "}");
	unload();
}

int main(void)
{
	snprintf(DIR_, sizeof(DIR_), "/tmp/spectap-enum-XXXXXX");
	if (!mkdtemp(DIR_)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_counter_basic);
	RUN(test_counter_init);
	RUN(test_counter_branching);
	RUN(test_counter_assign_then_guard);
	RUN(test_counter_errors);
	RUN(test_counter_unchanged);
	RUN(test_counter_if_case_let_calls);
	RUN(test_two_phase);
	RUN(test_raft_election);
	rmdir(DIR_);
	TEST_MAIN_END("test_enumerate");
}
