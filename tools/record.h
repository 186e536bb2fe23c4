/* spectap record SYSTEM ...: one entry point per system (tools/cmd_record.c dispatches). */
#ifndef SPECTAP_TOOLS_RECORD_H
#define SPECTAP_TOOLS_RECORD_H

/* argv[1] is the system's name; the rest are its options. */
int record_etcd(int argc, char **argv);
int record_zookeeper(int argc, char **argv);
int record_redisraft(int argc, char **argv);

#endif
