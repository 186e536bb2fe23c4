/* spectap record SYSTEM: a real cluster of SYSTEM, captured into one trace. */
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "record.h"

static const char usage[] =
	"usage: spectap record SYSTEM --scenario NAME -o OUT.spt [options]\n"
	"\n"
	"Starts a real cluster of SYSTEM on this machine, captures its state transitions while a\n"
	"scenario runs, stops everything and writes one trace. Needs root.\n"
	"\n"
	"  etcd        Debian's /usr/bin/etcd, probed with eBPF uprobes (spectap record etcd --help);\n"
	"              with --described, from its description (systems/etcd/system.yaml) instead\n"
	"  zookeeper   Debian's ZooKeeper with spectap's JVMTI agent (spectap record zookeeper --help)\n"
	"  redisraft   a RedisRaft module you built with debug info, in Debian's redis-server, probed\n"
	"              through DWARF (spectap record redisraft --help)\n"
	"  NAME        a system described as data in systems/NAME/system.yaml (nats: Debian's\n"
	"              nats-server; docs/adding-a-system.md; spectap record NAME --help)\n"
	"\n"
	"  --described  record SYSTEM from its description even where a recorder in C exists\n";

int cmd_record(int argc, char **argv)
{
	struct cli c = { .cmd = "record", .usage = usage };
	/* --described: the description's path, whatever the system (the C recorders move onto it). */
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--described")) {
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv)); /* argv[argc] too */
			return record_described(argc - 1, argv);
		}
	if (argc >= 2 && !strcmp(argv[1], "etcd"))
		return record_etcd(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "zookeeper"))
		return record_zookeeper(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "redisraft"))
		return record_redisraft(argc, argv);
	cli_begin(&c, argc, argv);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return cli_help(&c);
	if (argc < 2 || argv[1][0] == '-')
		return cli_usage_error(&c, "the system to record comes first (etcd, zookeeper, redisraft, or one "
					   "described in systems/NAME/system.yaml)");
	return record_described(argc, argv);
}
