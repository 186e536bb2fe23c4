/* One function per subcommand, each in its own cmd_*.c. */
#ifndef SPECTAP_COMMANDS_H
#define SPECTAP_COMMANDS_H

int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_windows(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
