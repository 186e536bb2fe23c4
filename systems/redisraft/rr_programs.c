/* The programs a RedisRaft cluster runs (include/spectap/programs.h). */
#include "rr_cluster.h"

const struct spt_program rr_programs[RR_N_PROGS + 1] = {
	[RR_PROG_SERVER] = { "/usr/bin/redis-server", "redis-server", "the nodes, with the user's module (record redisraft)" },
	[RR_PROG_CLI] = { "/usr/bin/redis-cli", "redis-tools", "raft commands, INFO raft and writes (record redisraft)" },
};
