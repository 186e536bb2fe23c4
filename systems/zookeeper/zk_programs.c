/* The programs and files the ZooKeeper ensemble needs (include/spectap/programs.h). */
#include "ensemble.h"

const struct spt_program zk_programs[ZK_N_PROGS + 1] = {
	[ZK_PROG_JAVA] = { "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "openjdk-17-jre-headless",
			   "the JVM the servers and the agent run in (record zookeeper)" },
	[ZK_PROG_JAR] = { "/usr/share/java/zookeeper.jar", "libzookeeper-java", "ZooKeeper's classes (record zookeeper)" },
	[ZK_PROG_SLF4J] = { "/usr/share/java/slf4j-simple.jar", "libslf4j-java", "the servers' logging (record zookeeper)" },
};
