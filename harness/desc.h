/* desc: a system described as data (docs/adding-a-system.md): systems/<name>/system.yaml read
 * and checked into these structures. It knows no particular system. Every string that is a
 * template (harness/template.h) is checked for unknown placeholders when the file is read, so a
 * typo is an error with its file, line and column before anything starts. */
#ifndef SPECTAP_HARNESS_DESC_H
#define SPECTAP_HARNESS_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DESC_ERR_SIZE 1024
#define DESC_MAX_PORTS 8
#define DESC_MAX_READS 24
#define DESC_NODE_NAME_SIZE 32 /* a node's name, its NUL included */

/* A position in the description, for messages about a value found wrong later (at run time). */
struct desc_pos {
	unsigned line, col;
};

struct desc_strv { /* a command line or any list of templates */
	char **v;
	size_t n;
	struct desc_pos pos;
};

struct desc_file { /* a file written for each node before it starts */
	char *path;     /* template, relative to the run's directory */
	char *text;     /* template */
	struct desc_pos pos;
};

/* One way to ask a node something: an HTTP GET (host:port/path), a text sent over TCP (the
 * answer: what comes back until the server closes, or expect arrives), or a command. */
struct desc_query {
	char *http;            /* template "host:port/path", or NULL */
	char *tcp, *send;      /* template "host:port" and what to send (template), or NULL */
	struct desc_strv run;  /* a command, when http and tcp are NULL */
	char *expect;          /* the answer must contain this (NULL: any answer) */
	struct desc_pos pos;
};

/* One request of a load over TCP: send (template), then read until expect or fail appears. */
struct desc_load {
	char *tcp;             /* template host:port of the node the load talks to */
	char *hello;           /* sent once per connection (template), or NULL */
	char **var_names;      /* variables defined per operation (templates), usable as ${name} */
	char **var_values;
	size_t nvars;
	char *send;            /* template: one operation */
	char *expect;          /* an operation is acknowledged when this arrives */
	char *fail;            /* ... and failed when this arrives in its answer (or NULL) */
	unsigned timeout_ms;   /* per operation */
	struct desc_strv run;  /* or: a command that performs ${ops} operations (its stdout's last
				  line a JSON summary with "acked"), when tcp is NULL */
	struct desc_pos pos;
};

enum desc_site { DESC_AT_ENTRY, DESC_AT_RETURN };

struct desc_read {
	char *name; /* the field name the events module sees */
	char *expr; /* the language's expression (Go: param.field.field, len(...)) */
	struct desc_pos pos;
};

struct desc_probe {
	char *func;       /* the function, as the language names it */
	char *name;       /* the probe's name in the events module */
	enum desc_site at;
	struct desc_read reads[DESC_MAX_READS];
	size_t nreads;
	struct desc_pos pos;
};

enum desc_lang { DESC_LANG_NONE, DESC_LANG_GO, DESC_LANG_C };

enum desc_step_kind {
	STEP_START,     /* start every node and wait until each is ready */
	STEP_WAIT,      /* wait for a leader (what = "leader"; new: another than the last one struck) */
	STEP_LOAD,      /* count operations of the load */
	STEP_KILL,      /* SIGKILL target */
	STEP_PAUSE,     /* SIGSTOP target for ms, then SIGCONT; held (ms 0): until a resume step */
	STEP_RESUME,    /* SIGCONT every node a held pause stopped */
	STEP_RESTART,   /* start target again (after a kill: its data kept) */
	STEP_QUIET,     /* wait until no event arrived for ms (at most timeout) */
	STEP_SLEEP,     /* ms, plainly */
	STEP_PARTITION, /* cut target off the network (every node in its own namespace; harness/netns.h) */
	STEP_HEAL,      /* reconnect every node a partition cut off */
	STEP_FAULT,     /* a seeded fault of faults on a seeded running node for ms, then undone */
};

/* The faults a STEP_FAULT picks from. */
enum { FAULT_KILL = 1, FAULT_PAUSE = 2, FAULT_PARTITION = 4 };

/* Which node a fault strikes. */
enum desc_target { TARGET_LEADER, TARGET_FOLLOWER, TARGET_NODE, TARGET_LAST };

struct desc_step {
	enum desc_step_kind kind;
	enum desc_target target;
	unsigned node;        /* TARGET_NODE: 0-based */
	uint64_t count;       /* LOAD */
	unsigned ms;          /* PAUSE, QUIET, SLEEP */
	unsigned timeout_ms;  /* WAIT, QUIET */
	bool new_leader;      /* WAIT */
	bool all_agree;       /* WAIT: every node it can reach names the same leader */
	bool hold;            /* PAUSE: until a resume step */
	unsigned faults;      /* FAULT: FAULT_* bits */
	struct desc_pos pos;
};

struct desc_scenario {
	char *name;
	char *about;
	struct desc_step *steps;
	size_t n;
	bool partitions;      /* has a partition step: its nodes run in network namespaces */
	struct desc_pos pos;
};

struct desc {
	char *path;           /* the system.yaml read */
	char *dir;            /* its directory: events and specs are found beside it */
	char *name, *about;
	char *binary;         /* default path of the program */
	char *package;        /* the Debian package that installs it, for messages */
	struct desc_strv version_run;
	char *version_match;  /* a POSIX extended regex whose group 1 is the version */
	unsigned nodes_default, nodes_min, nodes_max;
	char *node_name;      /* template with ${i}: default "n${i}" */
	char *ports[DESC_MAX_PORTS];
	size_t nports;
	struct desc_file *files;
	size_t nfiles;
	struct desc_strv run; /* the per-node command line */
	char **env;           /* templates KEY=VALUE added to the nodes' environment */
	size_t nenv;
	struct desc_query ready;
	unsigned ready_timeout_ms;
	struct desc_query status;  /* each node's own view at the end */
	char *status_leader;       /* JSON path (a.b.c) of the leader's node name in status */
	char *status_leader_if;    /* or: the text of the answer of the node that leads */
	char *status_field;        /* the field of a node's state in the trace that must name the
				    * same leader at the end (status.state) */
	struct desc_load load;
	bool has_load;
	enum desc_lang lang;
	char *go_package, *go_path; /* DESC_LANG_GO */
	char *go_debian;            /* the Debian package of its source (probes.go.debian), or NULL */
	struct desc_probe *probes;
	size_t nprobes;
	char *events;              /* the events module, relative to dir */
	char *spec, *map, *cfg;    /* spec: the spec, mapping and cfg checked by default (--until-covered),
				    * relative to dir; NULL when not given */
	char *sysmobench;          /* dialects.sysmobench: the module that writes export --to sysmobench,
				    * relative to dir; NULL: the generic envelope */
	struct desc_scenario *scenarios;
	size_t nscenarios;
};

/* Reads and checks path. 0, or -EINVAL/-ENOENT/-ENOMEM with "file:line:col: what" in err. */
int desc_load(const char *path, struct desc *d, char *err);
void desc_free(struct desc *d);
const struct desc_scenario *desc_scenario(const struct desc *d, const char *name);
/* The scenarios' names, comma-separated, into buf. */
void desc_scenario_names(const struct desc *d, char *buf, size_t size);

/* Node node's name (0-based) from nodes.name (n${i} by default): the name the cluster, the
 * scenarios and the trace all use. 0, -ENAMETOOLONG past size (checked when read, for
 * DESC_NODE_NAME_SIZE), or -ENOMEM. */
int desc_node_name(const struct desc *d, unsigned node, char *name, size_t size);

/* The directory that holds the descriptions (the first of desc_find's places that exists), into
 * dir; -ENOENT when none does. */
int desc_dir(char *dir, size_t size);

/* Where `spectap record NAME` finds NAME's description: $SPECTAP_SYSTEMS/NAME/system.yaml, then
 * systems/NAME/system.yaml beside spectap's build (the source tree), then ./systems. path gets
 * the first that exists; -ENOENT (with the places tried in err) when none does. */
int desc_find(const char *name, char *path, size_t size, char *err, size_t errsize);

#endif
