/* The programs the etcd cluster runs (include/spectap/programs.h). */
#include "cluster.h"

const struct spt_program etcd_programs[ETCD_N_PROGS + 1] = {
	[ETCD_PROG_ETCD] = { "/usr/bin/etcd", "etcd-server", "the cluster's members (record etcd)" },
	[ETCD_PROG_ETCDCTL] = { "/usr/bin/etcdctl", "etcd-client", "member status and puts (record etcd)" },
};
