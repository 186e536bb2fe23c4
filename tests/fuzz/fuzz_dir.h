/*
 * A fuzz target's own directory under /tmp for the files it writes: made at the first input,
 * removed with the files it names when the fuzzer exits (libFuzzer exits through exit()).
 */
#ifndef SPECTAP_FUZZ_DIR_H
#define SPECTAP_FUZZ_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[64];
static const char *const *fuzz_dir_files;

/* out := the directory's file name. */
static inline void fuzz_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", fuzz_dir, name);
}

static void fuzz_dir_remove(void)
{
	char path[128];
	for (const char *const *f = fuzz_dir_files; *f; f++) {
		fuzz_path(path, sizeof(path), *f);
		unlink(path);
	}
	rmdir(fuzz_dir);
}

/* Makes /tmp/TARGET.XXXXXX the first time it is called (files: what to remove at exit,
 * NULL-terminated); true that first time. */
static inline bool fuzz_dir_make(const char *target, const char *const *files)
{
	if (fuzz_dir[0])
		return false;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/%s.XXXXXX", target);
	if (!mkdtemp(fuzz_dir))
		abort();
	fuzz_dir_files = files;
	atexit(fuzz_dir_remove);
	return true;
}

/* Writes head, data and tail to the directory's file name. */
static inline void fuzz_write(const char *name, const char *head, const void *data, size_t size, const char *tail)
{
	char path[128];
	fuzz_path(path, sizeof(path), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fputs(head, f);
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fputs(tail, f);
	fclose(f);
}

#endif
