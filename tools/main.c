/* spectap: dispatch to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#ifdef SPECTAP_CHECK_ONLY
/* `make check-only`: the checker, importers and exporters without the capture stack. */
static int not_built(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "spectap %s: this spectap was built without the capture stack (make check-only); "
			"build the whole tool with make to record or to list what recording needs\n", argv[0]);
	return CLI_USAGE;
}
#define cmd_record not_built
#define cmd_doctor not_built
#endif

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", cmd_record, "record a real cluster into a trace (etcd, zookeeper, redisraft, and the systems described as data, such as nats)" },
	{ "import", cmd_import, "convert an NDJSON trace (etcd-ndjson, sysmobench, json) to .spt" },
	{ "export", cmd_export, "write a .spt trace as NDJSON (etcd-ndjson, sysmobench, json)" },
	{ "dump", cmd_dump, "print events, one per line, with filters" },
	{ "stat", cmd_stat, "summarize a trace: events, nodes, kinds, messages, loss, damage" },
	{ "check", cmd_check, "validate windows or a mapped trace against a TLA+ spec (Transition Validation)" },
	{ "windows", cmd_windows, "cut a trace into canonical windows per action, as a mapping says" },
	{ "doctor", cmd_doctor, "list the programs spectap runs, their Debian packages, and what is missing" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: spectap COMMAND [OPTIONS] ...\n\n"
		   "spectap captures state transitions of distributed systems and checks them\n"
		   "against TLA+ specifications. Commands:\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nEvery command takes --help and --json. Exit status: 0 done, 1 failed, 2 usage.\n"
		   "Documentation: README.md and docs/ in the source tree.\n");
}

int main(int argc, char **argv)
{
	cli_set_command_line(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
				if (!strcmp(argv[2], commands[i].name)) {
					char *args[] = { argv[2], "--help", NULL };
					return commands[i].run(2, args);
				}
			}
		}
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("spectap %s\n", SPECTAP_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "spectap: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return CLI_USAGE;
}
