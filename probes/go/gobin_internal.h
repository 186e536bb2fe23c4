/* Shared between the gobin sources (not part of the API): the opened binary. */
#ifndef SPECTAP_GOBIN_INTERNAL_H
#define SPECTAP_GOBIN_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gobin.h"

struct gobin_seg {
	uint64_t vaddr, off, filesz, memsz;
	uint32_t flags;
};

struct gobin_setting {
	const char *key, *value;
};

struct gobin {
	char *path;
	const uint8_t *map; /* the whole file, read-only */
	size_t size;
	int elf_type; /* ET_EXEC or ET_DYN */

	struct gobin_seg *segs;
	size_t nsegs;

	/* .gopclntab */
	const uint8_t *pcln;
	size_t pcln_len;
	uint64_t pcln_va;
	bool pcln_from_section;
	const char *layout;
	uint64_t text_start;
	struct gobin_func *funcs; /* nfunc, address order */
	size_t nfunc;
	size_t *by_name; /* indexes into funcs, sorted by name */

	/* .go.buildinfo */
	char *go_version;
	char *modinfo; /* raw text */
	char *modtext; /* a copy of modinfo cut into NUL-terminated fields */
	const char *main_path; /* the "path" line */
	struct gobin_module main_mod;
	bool has_main;
	struct gobin_module *deps;
	size_t ndeps;
	struct gobin_setting *settings;
	size_t nsettings;
};

/* Formats "<path>: <message>" into errbuf (when not NULL) and returns -err (err > 0). */
int gobin_fail(char *errbuf, const char *path, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Parses the .go.buildinfo blob (buildinfo.c); fills go_version and the module fields. */
int gobin_parse_buildinfo(struct gobin *g, const uint8_t *p, size_t n, char *errbuf);

/* A function's code in the file image, checked to lie in one file-backed segment; its file
 * offset is f->file_off. 0, or -ERANGE with a message. */
int gobin_func_code(const struct gobin *g, const struct gobin_func *f, const uint8_t **code, size_t *len,
		    char *errbuf);

#endif
