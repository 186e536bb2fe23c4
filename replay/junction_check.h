/* Junction lists the TLA+ grammar's scanner cannot hold, found before parsing (see the .c). */
#ifndef SPECTAP_REPLAY_JUNCTION_CHECK_H
#define SPECTAP_REPLAY_JUNCTION_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct junction_issue {
	uint32_t line, col;
	const char *what;
};

/* 0, or -1 with where and what in *issue. */
int junction_check(const char *src, size_t len, struct junction_issue *issue);

#endif
