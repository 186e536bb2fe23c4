/* The program the harness's network namespaces run (include/spectap/programs.h). */
#include "netns.h"

const struct spt_program netns_programs[NETNS_N_PROGS] = {
	{ "/usr/sbin/ip", "iproute2", "network namespaces for partitions (record etcd, a description's partition steps)" },
};
