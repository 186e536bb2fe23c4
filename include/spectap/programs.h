/*
 * The external programs (and data files) spectap runs or reads, each with the Debian package
 * that provides it. Every part that runs one takes its path from a table of these, so that one
 * list says what a machine needs: scripts/deps.sh installs the packages, `spectap doctor`
 * reports what is missing, and tests/cli/test_programs.sh fails when a program is provided by
 * no package in scripts/deps.sh.
 */
#ifndef SPECTAP_PROGRAMS_H
#define SPECTAP_PROGRAMS_H

struct spt_program {
	const char *path;    /* absolute, as spectap runs it */
	const char *package; /* the Debian package that provides it; "a|b": a, or b when b is installed */
	const char *purpose; /* what spectap uses it for */
};

#endif
