/* Minimal test harness: CHECK records a failure and goes on; each test file ends with
 * TEST_MAIN_END, which prints "<file>: N passed, N failed" and exits non-zero on failure. */
#ifndef SPECTAP_TEST_CHECK_H
#define SPECTAP_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static unsigned long check_passed, check_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
		}                                                                                  \
	} while (0)

#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Runs one test function and names it in the output. */
#define RUN(fn)                                                                                    \
	do {                                                                                       \
		unsigned long f0 = check_failed;                                                   \
		fn();                                                                              \
		printf("  %-40s %s\n", #fn, check_failed == f0 ? "ok" : "FAILED");                \
	} while (0)

#define TEST_MAIN_END(name)                                                                        \
	do {                                                                                       \
		printf("%s: %lu passed, %lu failed\n", name, check_passed, check_failed);          \
		return check_failed ? 1 : 0;                                                       \
	} while (0)

#endif
