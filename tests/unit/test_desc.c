/* System descriptions as data: the YAML reader, the templates and the description checker,
 * including the errors a bad description must give (file:line:col and what to change). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "desc.h"
#include "template.h"
#include "ydoc.h"

static char tmpdir[] = "/tmp/spectap-test-desc-XXXXXX";

static void test_ydoc(void)
{
	struct ydoc d;
	char err[YDOC_ERR_SIZE];
	const char *y = "a: 1\nb: [x, 'y', \"z\"]\nc:\n  d: |\n    line1\n    line2\n  e: ~\n";
	CHECK(ydoc_load_string("t.yaml", y, strlen(y), &d, err) == 0);
	CHECK(d.root && d.root->kind == YNODE_MAP && d.root->n == 3);
	struct ynode *b = ynode_get(d.root, "b"), *c = ynode_get(d.root, "c");
	CHECK(b && b->kind == YNODE_SEQ && b->n == 3 && !strcmp(b->items[2]->str, "z") && !b->items[1]->plain);
	CHECK(b && b->line == 2 && b->col == 4);
	struct ynode *dd = ynode_get(c, "d");
	CHECK(dd && !strcmp(dd->str, "line1\nline2\n") && dd->block);
	unsigned line, col;
	ydoc_scalar_pos(&d, dd, 8, &line, &col); /* the 'n' of line2's "ne" */
	CHECKF(line == 6 && col == 7, "%u:%u", line, col);
	CHECK(ynode_is_null(ynode_get(c, "e")));
	ydoc_free(&d);

	const char *dup = "a: 1\nb: 2\na: 3\n";
	CHECK(ydoc_load_string("t.yaml", dup, strlen(dup), &d, err) == -EINVAL);
	CHECKF(strstr(err, "t.yaml:3:1: key 'a' given twice"), "%s", err);
	const char *alias = "a: &x [1]\nb: *x\n";
	CHECK(ydoc_load_string("t.yaml", alias, strlen(alias), &d, err) == -EINVAL);
	CHECKF(strstr(err, "t.yaml:1:4: anchors"), "%s", err);
	const char *broken = "a: [1, 2\nb: 3\n";
	CHECK(ydoc_load_string("t.yaml", broken, strlen(broken), &d, err) == -EINVAL);
	CHECKF(!strncmp(err, "t.yaml:", 7), "%s", err);
	const char *two = "a: 1\n---\nb: 2\n";
	CHECK(ydoc_load_string("t.yaml", two, strlen(two), &d, err) == -EINVAL);
	CHECKF(strstr(err, "second YAML document"), "%s", err);
	char deep[400] = "";
	for (int i = 0; i < 100; i++)
		strcat(deep, "[");
	CHECK(ydoc_load_string("t.yaml", deep, strlen(deep), &d, err) == -EINVAL);
	CHECKF(strstr(err, "nested more than"), "%s", err);
	CHECK(ydoc_load_string("t.yaml", "", 0, &d, err) == 0 && !d.root);
	ydoc_free(&d);
}

static const char *lookup(void *ctx, long node, const char *name, size_t len)
{
	static char buf[64];
	(void)ctx;
	if (len == 4 && !strncmp(name, "node", 4) && node >= 0)
		return snprintf(buf, sizeof(buf), "n%ld", node + 1), buf;
	if (len == 9 && !strncmp(name, "port.peer", 9) && node >= 0)
		return snprintf(buf, sizeof(buf), "%ld", 2000 + node), buf;
	if (len == 4 && !strncmp(name, "body", 4))
		return "hello";
	return NULL;
}

static void test_template(void)
{
	struct tmpl_scope s = { .lookup = lookup, .node = 1, .nnodes = 3 };
	char err[TMPL_ERR_SIZE], *out;
	CHECK(tmpl_expand("x ${node} $$ ${#body} ${body}", &s, &out, err) == 0);
	CHECKF(out && !strcmp(out, "x n2 $ 5 hello"), "%s", out);
	free(out);
	CHECK(tmpl_expand("[${each:, :${node}=${port.peer}}]", &s, &out, err) == 0);
	CHECKF(out && !strcmp(out, "[n1=2000, n2=2001, n3=2002]"), "%s", out);
	free(out);
	CHECK(tmpl_expand("${port.peer@1}/${port.peer@3}", &s, &out, err) == 0);
	CHECKF(out && !strcmp(out, "2000/2002"), "%s", out);
	free(out);
	CHECK(tmpl_expand("${first|a ${node}|b ${port.peer@1}}", &s, &out, err) == 0); /* node 2 */
	CHECKF(out && !strcmp(out, "b 2000"), "%s", out);
	free(out);
	s.node = 0;
	CHECK(tmpl_expand("${first|a ${node}|b}", &s, &out, err) == 0);
	CHECKF(out && !strcmp(out, "a n1"), "%s", out);
	free(out);
	s.node = 1;
	CHECK(tmpl_expand("${port.peer@4}", &s, &out, err) == -EINVAL);
	CHECKF(strstr(err, "@ takes a node's number"), "%s", err);
	CHECK(tmpl_expand("a ${nope}", &s, &out, err) == -EINVAL && !out);
	CHECKF(strstr(err, "'nope' has no value") && strstr(err, "at byte 4"), "%s", err);
	CHECK(tmpl_expand("a $x", &s, &out, err) == -EINVAL);
	CHECK(tmpl_expand("a ${node", &s, &out, err) == -EINVAL);
	CHECKF(strstr(err, "not closed"), "%s", err);
	CHECK(tmpl_expand("", &s, &out, err) == 0 && out && !*out);
	free(out);

	const char *known[] = { "node", "port." };
	size_t off;
	CHECK(tmpl_check("${node}:${port.x} ${each:,:${node}}", known, 2, true, err, &off) == 0);
	CHECK(tmpl_check("${node} ${nodes}", known, 2, true, err, &off) == -EINVAL && off == 10);
	CHECKF(strstr(err, "unknown variable 'nodes'"), "%s", err);
	CHECK(tmpl_check("${each:,:x}", known, 2, false, err, &off) == -EINVAL);
	CHECK(tmpl_check("${port.}", known, 2, true, err, &off) == -EINVAL);
	CHECK(tmpl_check("${first|${node}|${port.x@2}}", known, 2, true, err, &off) == 0);
	CHECK(tmpl_check("${first|${nod}|x}", known, 2, true, err, &off) == -EINVAL && off == 10);
}

/* Writes text to tmpdir/NAME/system.yaml and loads it. */
static int load(const char *text, struct desc *d, char *err)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/system.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return desc_load(path, d, err);
}

#define HEAD \
	"system: demo\nbinary: true\nports: [peer, client]\n" \
	"run: [\"${binary}\", \"--name\", \"${node}\", \"--peer\", \"${port.peer}\"]\n" \
	"ready: {run: [\"true\"]}\n"

static void test_desc_ok(void)
{
	struct desc d;
	char err[DESC_ERR_SIZE];
	int r = load(HEAD "files:\n  \"${node}.conf\": |\n    peers: ${each:,:${node}}\n"
			  "scenarios:\n  s1: [start, {wait: leader}, {kill: leader}, {pause: n2, for: 2s}, {restart: last},"
			  " {quiet: 500ms, timeout: 5s}]\n  s2: [start, {pause: follower}, {pause: n3}, {resume: paused}]\n"
			  "  s3: [start, {partition: leader}, {wait: new-leader}, {heal: partitioned}, {wait: all}]\n"
			  "  s4: [start, {fault: random, for: 2s}, {fault: random, of: [kill, pause], for: 500ms}]\n"
			  "  s5: [start, {fault: random, of: [pause], for: 1s}]\n",
		     &d, err);
	CHECKF(r == 0, "%s", err);
	if (r)
		return;
	CHECK(!strcmp(d.name, "demo") && d.nports == 2 && d.nfiles == 1 && d.nodes_default == 3);
	CHECK(!strcmp(d.node_name, "n${i}") && d.run.n == 5);
	const struct desc_scenario *sc = desc_scenario(&d, "s1");
	CHECK(sc && sc->n == 6);
	if (sc && sc->n == 6) {
		CHECK(sc->steps[1].kind == STEP_WAIT && !sc->steps[1].new_leader);
		CHECK(sc->steps[2].kind == STEP_KILL && sc->steps[2].target == TARGET_LEADER);
		CHECK(sc->steps[3].kind == STEP_PAUSE && sc->steps[3].target == TARGET_NODE && sc->steps[3].node == 1 &&
		      sc->steps[3].ms == 2000);
		CHECK(sc->steps[4].target == TARGET_LAST);
		CHECK(sc->steps[5].kind == STEP_QUIET && sc->steps[5].ms == 500 && sc->steps[5].timeout_ms == 5000);
	}
	sc = desc_scenario(&d, "s2");
	CHECK(sc && sc->n == 4);
	if (sc && sc->n == 4) {
		CHECK(sc->steps[1].kind == STEP_PAUSE && sc->steps[1].hold && sc->steps[1].target == TARGET_FOLLOWER);
		CHECK(sc->steps[2].kind == STEP_PAUSE && sc->steps[2].hold && sc->steps[2].node == 2);
		CHECK(sc->steps[3].kind == STEP_RESUME);
		CHECK(!sc->steps[0].hold);
	}
	CHECK(!desc_scenario(&d, "s1")->partitions && !desc_scenario(&d, "s2")->partitions);
	sc = desc_scenario(&d, "s4"); /* a random fault that may partition runs the nodes in namespaces */
	CHECK(sc && sc->n == 3 && sc->partitions && sc->steps[1].kind == STEP_FAULT &&
	      sc->steps[1].faults == (FAULT_KILL | FAULT_PAUSE | FAULT_PARTITION) && sc->steps[1].ms == 2000 &&
	      sc->steps[2].faults == (FAULT_KILL | FAULT_PAUSE) && sc->steps[2].ms == 500);
	CHECK(!desc_scenario(&d, "s5")->partitions);
	sc = desc_scenario(&d, "s3");
	CHECK(sc && sc->n == 5 && sc->partitions);
	if (sc && sc->n == 5) { /* a scenario with a partition runs its nodes in namespaces */
		CHECK(sc->steps[1].kind == STEP_PARTITION && sc->steps[1].target == TARGET_LEADER);
		CHECK(sc->steps[2].kind == STEP_WAIT && sc->steps[2].new_leader && !sc->steps[2].all_agree);
		CHECK(sc->steps[3].kind == STEP_HEAL);
		CHECK(sc->steps[4].kind == STEP_WAIT && sc->steps[4].all_agree && !sc->steps[4].new_leader);
	}
	desc_free(&d);

	/* A node is struck by its nodes.name too. */
	r = load(HEAD "nodes: {name: \"r${i}\"}\nscenarios: {s: [start, {kill: r2}, {restart: n3}]}\n", &d, err);
	CHECKF(r == 0, "%s", err);
	if (!r) {
		sc = desc_scenario(&d, "s");
		CHECK(sc && sc->n == 3 && sc->steps[1].target == TARGET_NODE && sc->steps[1].node == 1 &&
		      sc->steps[2].node == 2);
		char name[32];
		CHECK(desc_node_name(&d, 1, name, sizeof(name)) == 0 && !strcmp(name, "r2"));
		desc_free(&d);
	}

	/* The bundled descriptions load. */
	char path[4096];
	CHECK(desc_find("nats", path, sizeof(path), err, sizeof(err)) == 0 || !access("systems", F_OK) == 0);
	r = desc_load("systems/nats/system.yaml", &d, err);
	CHECKF(r == 0, "%s", err);
	if (!r)
		desc_free(&d);
}

/* Each bad description and the position and words its error must have. */
static void test_desc_errors(void)
{
	static const struct { const char *text, *want; } cases[] = {
		{ HEAD "scenarios: {s: [start]}\nbogus: 1\n", "system.yaml:7:1: the description: unknown key 'bogus'" },
		{ "binary: true\nrun: [x]\nready: {run: [x]}\nscenarios: {s: [start]}\n",
		  "'system' is missing" },
		{ HEAD "scenarios: {s: [start, {load: 3}]}\n", "6:31: load: the description has no load" },
		{ HEAD "scenarios: {s: [{wait: leader}]}\n", "6:17: scenario s: the first step must be start" },
		{ HEAD "scenarios: {s: [start, {kill: captain}]}\n", "6:31: 'captain' is not leader, follower" },
		{ HEAD "scenarios: {s: [start, {pause: n1}]}\n",
		  "6:24: scenario s: this pause has no 'for' and no {resume: paused} follows it" },
		{ HEAD "scenarios: {s: [start, {resume: paused}]}\n", "6:24: scenario s: resume, but no pause without 'for'" },
		{ HEAD "scenarios: {s: [start, {pause: n1}, {resume: n1}]}\n", "resume: paused (every node" },
		{ HEAD "scenarios: {s: [start, {quiet: 3 weeks}]}\n", "is not a duration" },
		{ HEAD "scenarios: {s: [start, {partition: n2}]}\n",
		  "6:24: scenario s: this partition is not healed: add {heal: partitioned}" },
		{ HEAD "scenarios: {s: [start, {heal: partitioned}]}\n", "6:24: scenario s: heal, but no partition before it" },
		{ HEAD "scenarios: {s: [start, {partition: n2}, {heal: n2}]}\n", "6:48: heal: partitioned (every node" },
		{ HEAD "scenarios: {s: [start, {partition: majority}]}\n", "'majority' is not leader, follower" },
		{ HEAD "scenarios: {s: [start, {kill: r2}]}\n", "'r2' is not leader, follower" },
		{ HEAD "scenarios: {s: [start, {fault: random}]}\n", "fault: say how long it lasts" },
		{ HEAD "scenarios: {s: [start, {fault: any, for: 1s}]}\n", "fault: random (a fault picked by the seed" },
		{ HEAD "scenarios: {s: [start, {fault: random, of: [explode], for: 1s}]}\n", "of: kill, pause or partition" },
		{ HEAD "nodes: {name: \"a-node-name-of-more-than-31-bytes-${i}\"}\nscenarios: {s: [start]}\n",
		  "nodes.name: node 1's name is longer than 31 bytes" },
		{ HEAD "nodes: {min: 10, default: 10, max: 12}\nscenarios: {s: [start, {partition: n1}, {heal: partitioned}]}\n",
		  "scenario s partitions: at most 9 nodes run in network namespaces, and nodes.min is 10" },
		{ HEAD "scenarios: {s: [start, {wait: everyone}]}\n", "wait: leader, new-leader (another than the node last "
		  "struck) or all" },
		{ "system: x\nbinary: /b\nports: [peer]\nrun: [\"${port.client}\"]\nready: {run: [x]}\nscenarios: {s: [start]}\n",
		  "4:7: run: unknown variable 'port.client'" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {run: [x]}\nfiles:\n  a.conf: |\n    ok\n    bad ${nod}\n"
		  "scenarios: {s: [start]}\n",
		  "8:11: files: unknown variable 'nod'" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {http: \"h:1\"}\nscenarios: {s: [start]}\n",
		  "is not host:port/path" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {run: [x]}\nversion: {run: [x], match: \"v[0-9]+\"}\n"
		  "scenarios: {s: [start]}\n",
		  "needs a group" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {run: [x]}\nprobes: {go: {package: p}, functions: [{func: f, name: a},"
		  " {func: g, name: a}]}\nevents: E.tla\nscenarios: {s: [start]}\n",
		  "probe name 'a' is used twice" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {run: [x]}\nprobes: {go: {package: p}, functions: [{func: f, name: a,"
		  " at: middle}]}\nevents: E.tla\nscenarios: {s: [start]}\n",
		  "at: 'middle' is not entry or return" },
		{ "system: x\nbinary: /b\nrun: [x]\nready: {run: [x]}\nfiles: {\"../x\": y}\nscenarios: {s: [start]}\n",
		  "must be a path inside" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct desc d;
		char err[DESC_ERR_SIZE];
		int r = load(cases[i].text, &d, err);
		CHECKF(r == -EINVAL && strstr(err, cases[i].want), "case %zu: %d '%s' (want '%s')", i, r, err, cases[i].want);
		if (!r)
			desc_free(&d);
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return perror("mkdtemp"), 1;
	RUN(test_ydoc);
	RUN(test_template);
	RUN(test_desc_ok);
	RUN(test_desc_errors);
	char path[256];
	snprintf(path, sizeof(path), "%s/system.yaml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	TEST_MAIN_END("test_desc");
}
