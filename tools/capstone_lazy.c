/* The capstone functions spectap uses, the library loaded when one is first called. Linked in,
 * libcapstone's 77,000 relocations cost every command about 7 ms at start on this VM (a third
 * of `spectap --version`), and only record's probe placement disassembles. Without the library,
 * cs_open fails (CS_ERR_MEM) and its callers say capstone cannot start. spectap is linked
 * without -lcapstone: a capstone function not defined here fails its link (add it here). */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static struct {
	cs_err (*fn_open)(cs_arch, cs_mode, csh *);
	cs_err (*fn_option)(csh, cs_opt_type, size_t);
	cs_insn *(*fn_malloc)(csh);
	void (*fn_free)(cs_insn *, size_t);
	bool (*fn_disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	cs_err (*fn_close)(csh *);
	bool (*fn_insn_group)(csh, const cs_insn *, unsigned int);
	cs_err (*fn_regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
} cs;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A function of the library (function pointers from dlsym's object pointer, as POSIX allows). */
static bool sym(void *lib, const char *name, void *fn)
{
	void *p = dlsym(lib, name);
	*(void **)fn = p;
	return p != NULL;
}

static void load(void)
{
	void *lib = dlopen("libcapstone.so." STR(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);
	loaded = lib && sym(lib, "cs_open", &cs.fn_open) && sym(lib, "cs_option", &cs.fn_option) && sym(lib, "cs_malloc", &cs.fn_malloc) &&
		 sym(lib, "cs_free", &cs.fn_free) && sym(lib, "cs_disasm_iter", &cs.fn_disasm_iter) && sym(lib, "cs_close", &cs.fn_close) &&
		 sym(lib, "cs_insn_group", &cs.fn_insn_group) && sym(lib, "cs_regs_access", &cs.fn_regs_access);
}

cs_err cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
	pthread_once(&once, load);
	return loaded ? cs.fn_open(arch, mode, handle) : CS_ERR_MEM;
}

/* The others are called only after cs_open succeeded. */
cs_err cs_option(csh handle, cs_opt_type type, size_t value) { return cs.fn_option(handle, type, value); }
cs_insn *cs_malloc(csh handle) { return cs.fn_malloc(handle); }
void cs_free(cs_insn *insn, size_t count) { cs.fn_free(insn, count); }
bool cs_disasm_iter(csh handle, const uint8_t **code, size_t *size, uint64_t *address, cs_insn *insn)
{
	return cs.fn_disasm_iter(handle, code, size, address, insn);
}
cs_err cs_close(csh *handle) { return cs.fn_close(handle); }
bool cs_insn_group(csh handle, const cs_insn *insn, unsigned int group) { return cs.fn_insn_group(handle, insn, group); }
cs_err cs_regs_access(csh handle, const cs_insn *insn, cs_regs regs_read, uint8_t *read_count, cs_regs regs_write,
		      uint8_t *write_count)
{
	return cs.fn_regs_access(handle, insn, regs_read, read_count, regs_write, write_count);
}
