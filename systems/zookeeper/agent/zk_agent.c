/*
 * libspectap_zk_agent.so: a JVMTI agent that records each step of ZooKeeper's Fast Leader
 * Election, with the node's state after the step, from Debian's unmodified ZooKeeper 3.8.0.
 *
 *   java -agentpath:/path/libspectap_zk_agent.so=node=1,out=/tmp/zk1.ndjson ... QuorumPeerMain
 *
 * Options (comma-separated): out=PATH (file sink: one {"event":...} line per record; without
 * it, the emit API of include/spectap/emit.h), emit (the emit API as well as out=), node=ID (the node name in records; default: the
 * server's myid), verbose (print every resolved hook at start and each hook's cost at exit),
 * locals=live|jvmti (how locals are read, below), hook.<id>=<line> (move a hook to another
 * source line; see hooks.h). See systems/zookeeper/README.md.
 *
 * How it works:
 *   - Agent_OnLoad asks for the capabilities (breakpoints, locals, bytecodes, constant pool,
 *     line numbers), opens the sink and waits for VMInit.
 *   - VMInit loads (without initializing) every class of hooks.h through the system class loader
 *     and links it, resolves every hook to a method and bytecode location, every field to a
 *     jfieldID and every named local to a slot, and sets the breakpoints. Anything
 *     missing stops the JVM (Runtime.halt(1)) with a message naming it, before ZooKeeper's main
 *     runs: the agent never traces less than it promises.
 *   - Each hit reads what the step needs (fields with JNI, logicalclock with AtomicLong.get(),
 *     recvset by walking the HashMap's table, the few locals not cached through
 *     java.lang.LiveStackFrame's walker: on OpenJDK 17 a JVMTI GetLocal* is a safepoint, the
 *     walker reads the thread's own frames without one), then under one lock updates the
 *     node's shadow state and writes one record with the state after the step.
 *
 * State: logicalclock, proposedLeader/Zxid/Epoch are the election thread's (read live at every
 * hook in FastLeaderElection on that thread; it is their only writer); state, currentEpoch and
 * acceptedEpoch change only at their writes (hooked); recvset and outofelection (locals of
 * lookForLeader) are read at every hook that changes them. Records of other threads (the
 * WorkerReceiver, sends from it, QuorumPeer writes) carry the shadow: the state as of the last step
 * recorded, which is the state after their own step, since they change none of it.
 *
 * The agent changes no bytecode and no value; JNI calls that could throw are checked and no
 * exception is left pending.
 */
#include <errno.h>
#include <inttypes.h>
#include <jni.h>
#include <jvmti.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "classfile.h"
#include "hooks.h"
#include "jsonw.h"
#include "sink.h"

#define AGENT "spectap zk agent"
#define MAX_SITES 128
#define MAX_OVERRIDES 16
#define MAX_VOTES 256

/* ---- options ---- */

static struct {
	char out[4096];
	char node[64];
	bool verbose;
	bool jvmti_locals; /* locals=jvmti: read locals with GetLocal* only */
	bool emit;         /* emit: the emit API too, beside out=PATH */
	struct {
		int hook;
		int line;
	} ov[MAX_OVERRIDES];
	int nov;
} g_opt;

/* ---- resolved hooks ---- */

struct site {
	const struct zk_hook *h;
	uint64_t hits, ns; /* how often it was hit and the time its work took (under g_lock) */
	jmethodID m;
	jlocation loc;
	int line;
	jint slot[ZK_HOOK_LOCALS];
	char type[ZK_HOOK_LOCALS]; /* 'J', 'I', 'Z' or 'L' */
	char where[200];           /* "FastLeaderElection.lookForLeader:1042@866" */
};

static jvmtiEnv *g_jvmti;
static jrawMonitorID g_lock;
static volatile int g_live; /* hooks armed and the VM not dead */
static struct site g_sites[MAX_SITES];
static size_t g_nsites;
static jfieldID g_fid[ZF_COUNT];
static jclass g_class[ZC_COUNT];
static struct {
	jclass hashmap;
	jfieldID hm_table, node_key, node_value, node_next, long_value, enum_name;
	jmethodID al_get;
	/* Reading locals without a safepoint: java.lang.LiveStackFrame's stack walker (JDK
	 * internal) fills each frame's locals from the walking thread itself, into a
	 * java.util.stream.SpinedBuffer (a Consumer of the JDK: no class of ours). */
	bool live;
	jobject walker;                  /* global ref */
	jclass spined;                   /* global ref */
	jmethodID spined_init, spined_get, for_each, get_locals;
	jmethodID slot_size, slot_int, slot_long; /* LiveStackFrame$PrimitiveSlot */
	jfieldID bb_hb, bb_offset;                /* java.nio.ByteBuffer's array and offset */
} g_j;

/* ---- the node's shadow state and the record being written (under g_lock) ---- */

static struct {
	int64_t logicalclock, pleader, pzxid, pepoch, cur_epoch, acc_epoch;
	char state[16];
	struct jw recvset, ooe; /* JSON objects */
	bool handled;           /* this loop iteration's notification has its handle record */
	bool inner_pending;     /* the finalize wait polled a notification not yet accounted for */
	uint64_t seq;
	uint64_t records, unbuilt; /* written; lost for want of memory */
	uint64_t errors;           /* JVMTI/JNI reads that failed (values written as 0) */
	uint64_t hits, hit_ns;     /* callbacks and the time spent in them */
} g_s;
static struct jw g_rec;
static struct zk_rec_hdr g_hdr;
static struct zk_sink g_sink, g_sink2; /* g_sink2: the emit sink beside out= (option emit) */
static bool g_sink_open, g_sink2_open;

static void lock(void) { (*g_jvmti)->RawMonitorEnter(g_jvmti, g_lock); }
static void unlock(void) { (*g_jvmti)->RawMonitorExit(g_jvmti, g_lock); }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- start-up failures ---- */

static void say(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", AGENT, buf);
	fflush(stderr);
}

/* Stops the JVM before ZooKeeper runs: Runtime.halt(1) (the VM's own exit path), or _exit. */
static void halt_vm(JNIEnv *jni)
{
	if (jni) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		jclass rt = (*jni)->FindClass(jni, "java/lang/Runtime");
		jmethodID get = rt ? (*jni)->GetStaticMethodID(jni, rt, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
		jobject r = get ? (*jni)->CallStaticObjectMethod(jni, rt, get) : NULL;
		jmethodID halt = rt ? (*jni)->GetMethodID(jni, rt, "halt", "(I)V") : NULL;
		if (r && halt)
			(*jni)->CallVoidMethod(jni, r, halt, 1);
	}
	_exit(1);
}

static char g_why[2048];

static int why(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_why, sizeof g_why, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *jvmti_err(jvmtiError e)
{
	char *name = NULL;
	static char buf[64];
	if ((*g_jvmti)->GetErrorName(g_jvmti, e, &name) == JVMTI_ERROR_NONE && name) {
		snprintf(buf, sizeof buf, "%s", name);
		(*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)name);
	} else {
		snprintf(buf, sizeof buf, "JVMTI error %d", (int)e);
	}
	return buf;
}

static void dealloc(void *p)
{
	if (p)
		(*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)p);
}

/* ---- resolution at VMInit ---- */

static int load_class(JNIEnv *jni, enum zk_class c)
{
	const char *name = zk_class_names[c];
	jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
	jclass ldr = (*jni)->FindClass(jni, "java/lang/ClassLoader");
	jmethodID forname = cls ? (*jni)->GetStaticMethodID(jni, cls, "forName",
		"(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;") : NULL;
	jmethodID sys = ldr ? (*jni)->GetStaticMethodID(jni, ldr, "getSystemClassLoader",
		"()Ljava/lang/ClassLoader;") : NULL;
	jmethodID fields = cls ? (*jni)->GetMethodID(jni, cls, "getDeclaredFields",
		"()[Ljava/lang/reflect/Field;") : NULL;
	if (!forname || !sys || !fields) {
		(*jni)->ExceptionClear(jni);
		return why("java.lang.Class.forName or ClassLoader.getSystemClassLoader not found");
	}
	jobject loader = (*jni)->CallStaticObjectMethod(jni, ldr, sys);
	char dotted[256];
	snprintf(dotted, sizeof dotted, "%s", name);
	for (char *p = dotted; *p; p++)
		if (*p == '/')
			*p = '.';
	jstring s = (*jni)->NewStringUTF(jni, dotted);
	jobject k = s && !(*jni)->ExceptionCheck(jni)
			    ? (*jni)->CallStaticObjectMethod(jni, cls, forname, s, JNI_FALSE, loader)
			    : NULL;
	if ((*jni)->ExceptionCheck(jni) || !k) {
		(*jni)->ExceptionClear(jni);
		return why("class %s is not in the class path (is this ZooKeeper 3.8.0? the java "
			   "command needs -cp /usr/share/java/zookeeper.jar)", dotted);
	}
	/* Loaded, not initialized (no static initializer runs early). Hooks need it prepared:
	 * Class.getDeclaredFields() links it, still without initializing it. */
	jint st = 0;
	(*g_jvmti)->GetClassStatus(g_jvmti, k, &st);
	if (!(st & JVMTI_CLASS_STATUS_PREPARED)) {
		jobject arr = (*jni)->CallObjectMethod(jni, k, fields);
		if ((*jni)->ExceptionCheck(jni)) {
			(*jni)->ExceptionClear(jni);
			return why("class %s could not be linked", dotted);
		}
		(*jni)->DeleteLocalRef(jni, arr);
		(*g_jvmti)->GetClassStatus(g_jvmti, k, &st);
		if (!(st & JVMTI_CLASS_STATUS_PREPARED))
			return why("class %s is loaded but not prepared (status 0x%x)", dotted, (unsigned)st);
	}
	if (st & JVMTI_CLASS_STATUS_INITIALIZED)
		say("note: class %s was already initialized at VM start", dotted);
	g_class[c] = (*jni)->NewGlobalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, s);
	(*jni)->DeleteLocalRef(jni, loader);
	return g_class[c] ? 0 : why("out of memory (global reference)");
}

static int resolve_fields(void)
{
	for (int c = 0; c < ZC_COUNT; c++) {
		jint n = 0;
		jfieldID *fs = NULL;
		jvmtiError e = (*g_jvmti)->GetClassFields(g_jvmti, g_class[c], &n, &fs);
		if (e != JVMTI_ERROR_NONE)
			return why("fields of %s: %s", zk_class_names[c], jvmti_err(e));
		for (jint i = 0; i < n; i++) {
			char *name = NULL, *sig = NULL;
			if ((*g_jvmti)->GetFieldName(g_jvmti, g_class[c], fs[i], &name, &sig, NULL) !=
			    JVMTI_ERROR_NONE)
				continue;
			for (int f = 0; f < ZF_COUNT; f++)
				if ((int)zk_fields[f].cls == c && !strcmp(zk_fields[f].name, name) &&
				    !strcmp(zk_fields[f].sig, sig))
					g_fid[f] = fs[i];
			dealloc(name);
			dealloc(sig);
		}
		dealloc(fs);
	}
	for (int f = 0; f < ZF_COUNT; f++)
		if (!g_fid[f])
			return why("class %s has no field %s %s (is this ZooKeeper 3.8.0?)",
				   zk_class_names[zk_fields[f].cls], zk_fields[f].sig, zk_fields[f].name);
	return 0;
}

/* Sets g_j.live when LiveStackFrame's walker is there (OpenJDK 9 and later); else locals are
 * read with GetLocal* (a safepoint each on OpenJDK 17). The option locals=jvmti forces that. */
static void live_init(JNIEnv *jni)
{
	if (g_opt.jvmti_locals)
		return;
	jclass lsf = (*jni)->FindClass(jni, "java/lang/LiveStackFrame");
	jclass sw = (*jni)->FindClass(jni, "java/lang/StackWalker");
	jclass sb = (*jni)->FindClass(jni, "java/util/stream/SpinedBuffer");
	jclass info = (*jni)->FindClass(jni, "java/lang/LiveStackFrameInfo");
	jmethodID gsw = lsf ? (*jni)->GetStaticMethodID(jni, lsf, "getStackWalker",
							"()Ljava/lang/StackWalker;") : NULL;
	if ((*jni)->ExceptionCheck(jni) || !gsw || !sw || !sb || !info)
		goto no;
	g_j.for_each = (*jni)->GetMethodID(jni, sw, "forEach", "(Ljava/util/function/Consumer;)V");
	g_j.spined_init = (*jni)->GetMethodID(jni, sb, "<init>", "()V");
	g_j.spined_get = (*jni)->GetMethodID(jni, sb, "get", "(J)Ljava/lang/Object;");
	g_j.get_locals = (*jni)->GetMethodID(jni, info, "getLocals", "()[Ljava/lang/Object;");
	jclass ps = (*jni)->FindClass(jni, "java/lang/LiveStackFrame$PrimitiveSlot");
	if ((*jni)->ExceptionCheck(jni) || !ps)
		goto no;
	g_j.slot_size = (*jni)->GetMethodID(jni, ps, "size", "()I");
	g_j.slot_int = (*jni)->GetMethodID(jni, ps, "intValue", "()I");
	g_j.slot_long = (*jni)->GetMethodID(jni, ps, "longValue", "()J");
	if ((*jni)->ExceptionCheck(jni) || !g_j.for_each || !g_j.spined_init || !g_j.spined_get ||
	    !g_j.get_locals || !g_j.slot_size || !g_j.slot_int || !g_j.slot_long)
		goto no;
	jobject w = (*jni)->CallStaticObjectMethod(jni, lsf, gsw);
	if ((*jni)->ExceptionCheck(jni) || !w)
		goto no;
	g_j.walker = (*jni)->NewGlobalRef(jni, w);
	g_j.spined = (*jni)->NewGlobalRef(jni, sb);
	g_j.live = g_j.walker && g_j.spined;
	return;
no:
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	say("note: java.lang.LiveStackFrame not usable: locals are read with GetLocal* (slower)");
}

static int resolve_jdk(JNIEnv *jni)
{
	jclass al = (*jni)->FindClass(jni, "java/util/concurrent/atomic/AtomicLong");
	jclass hm = (*jni)->FindClass(jni, "java/util/HashMap");
	jclass node = (*jni)->FindClass(jni, "java/util/HashMap$Node");
	jclass lng = (*jni)->FindClass(jni, "java/lang/Long");
	jclass en = (*jni)->FindClass(jni, "java/lang/Enum");
	if (!al || !hm || !node || !lng || !en) {
		(*jni)->ExceptionClear(jni);
		return why("JDK classes AtomicLong, HashMap, HashMap$Node, Long or Enum not found");
	}
	g_j.al_get = (*jni)->GetMethodID(jni, al, "get", "()J");
	g_j.hm_table = (*jni)->GetFieldID(jni, hm, "table", "[Ljava/util/HashMap$Node;");
	g_j.node_key = (*jni)->GetFieldID(jni, node, "key", "Ljava/lang/Object;");
	g_j.node_value = (*jni)->GetFieldID(jni, node, "value", "Ljava/lang/Object;");
	g_j.node_next = (*jni)->GetFieldID(jni, node, "next", "Ljava/util/HashMap$Node;");
	g_j.long_value = (*jni)->GetFieldID(jni, lng, "value", "J");
	g_j.enum_name = (*jni)->GetFieldID(jni, en, "name", "Ljava/lang/String;");
	jclass bb = (*jni)->FindClass(jni, "java/nio/ByteBuffer");
	g_j.bb_hb = bb ? (*jni)->GetFieldID(jni, bb, "hb", "[B") : NULL;
	g_j.bb_offset = bb ? (*jni)->GetFieldID(jni, bb, "offset", "I") : NULL;
	if ((*jni)->ExceptionCheck(jni) || !g_j.al_get || !g_j.hm_table || !g_j.node_key ||
	    !g_j.node_value || !g_j.node_next || !g_j.long_value || !g_j.enum_name || !g_j.bb_hb ||
	    !g_j.bb_offset) {
		(*jni)->ExceptionClear(jni);
		return why("JDK internals not as expected (AtomicLong.get, HashMap.table, "
			   "HashMap$Node.key/value/next, Long.value, Enum.name, ByteBuffer.hb/offset): "
			   "is this OpenJDK 17?");
	}
	g_j.hashmap = (*jni)->NewGlobalRef(jni, hm);
	live_init(jni);
	return 0;
}

static jmethodID find_method(enum zk_class c, const char *name, const char *sig)
{
	jint n = 0;
	jmethodID *ms = NULL, found = NULL;
	if ((*g_jvmti)->GetClassMethods(g_jvmti, g_class[c], &n, &ms) != JVMTI_ERROR_NONE)
		return NULL;
	for (jint i = 0; i < n && !found; i++) {
		char *mn = NULL, *ms_sig = NULL;
		if ((*g_jvmti)->GetMethodName(g_jvmti, ms[i], &mn, &ms_sig, NULL) != JVMTI_ERROR_NONE)
			continue;
		if (!strcmp(mn, name) && !strcmp(ms_sig, sig))
			found = ms[i];
		dealloc(mn);
		dealloc(ms_sig);
	}
	dealloc(ms);
	return found;
}

static int hook_line(size_t hi)
{
	for (int k = 0; k < g_opt.nov; k++)
		if (g_opt.ov[k].hook == (int)hi)
			return g_opt.ov[k].line;
	return zk_hooks[hi].line;
}

static int add_site(const struct zk_hook *h, jmethodID m, jlocation loc, int line)
{
	if (g_nsites >= MAX_SITES)
		return why("more than %d hook sites", MAX_SITES);
	struct site *s = &g_sites[g_nsites++];
	memset(s, 0, sizeof *s);
	s->h = h;
	s->m = m;
	s->loc = loc;
	s->line = line;
	char *mname = NULL;
	if ((*g_jvmti)->GetMethodName(g_jvmti, m, &mname, NULL, NULL) != JVMTI_ERROR_NONE)
		mname = NULL;
	snprintf(s->where, sizeof s->where, "%s.%s:%d@%lld", zk_class_short(h->cls),
		 mname ? mname : "?", line, (long long)loc);
	dealloc(mname);
	return 0;
}

/* The locals of site s by name, live at its location. */
static int resolve_locals(struct site *s, const char *what)
{
	const struct zk_hook *h = s->h;
	if (!h->locals[0])
		return 0;
	jint n = 0;
	jvmtiLocalVariableEntry *t = NULL;
	jvmtiError e = (*g_jvmti)->GetLocalVariableTable(g_jvmti, s->m, &n, &t);
	if (e != JVMTI_ERROR_NONE)
		return why("%s: no local variable table (%s)", what, jvmti_err(e));
	int rc = 0;
	for (int k = 0; k < ZK_HOOK_LOCALS && h->locals[k] && rc == 0; k++) {
		int found = -1;
		for (jint i = 0; i < n; i++)
			if (!strcmp(t[i].name, h->locals[k]) && t[i].start_location <= s->loc &&
			    s->loc < t[i].start_location + t[i].length)
				found = i;
		if (found < 0) {
			rc = why("%s: no local '%s' live at bytecode %lld", what, h->locals[k],
				 (long long)s->loc);
			break;
		}
		s->slot[k] = t[found].slot;
		char ty = t[found].signature[0];
		s->type[k] = ty == '[' ? 'L' : ty;
		if (ty != 'J' && ty != 'I' && ty != 'Z' && ty != 'L' && ty != '[')
			rc = why("%s: local '%s' has an unexpected type %s", what, h->locals[k],
				 t[found].signature);
	}
	for (jint i = 0; i < n; i++) {
		dealloc(t[i].name);
		dealloc(t[i].signature);
		dealloc(t[i].generic_signature);
	}
	dealloc(t);
	return rc;
}

/* The source line of bytecode index loc (the entry with the greatest start <= loc), or 0. */
static int line_of(jmethodID m, jlocation loc)
{
	jint n = 0;
	jvmtiLineNumberEntry *t = NULL;
	int line = 0;
	jlocation best = -1;
	if ((*g_jvmti)->GetLineNumberTable(g_jvmti, m, &n, &t) != JVMTI_ERROR_NONE)
		return 0;
	for (jint i = 0; i < n; i++)
		if (t[i].start_location <= loc && t[i].start_location > best) {
			best = t[i].start_location;
			line = t[i].line_number;
		}
	dealloc(t);
	return line;
}

/* PUTFIELD: every putfield of the field, in every method of the class. */
static int resolve_putfield_hook(const struct zk_hook *h)
{
	jint nm = 0, cpn = 0, cpb = 0;
	jmethodID *ms = NULL;
	unsigned char *cp = NULL;
	struct cf_pool pool = {0};
	int rc = 0, found = 0;
	char perr[256];
	jvmtiError e = (*g_jvmti)->GetClassMethods(g_jvmti, g_class[h->cls], &nm, &ms);
	if (e != JVMTI_ERROR_NONE)
		return why("hook %s: methods of %s: %s", h->id, zk_class_names[h->cls], jvmti_err(e));
	if ((e = (*g_jvmti)->GetConstantPool(g_jvmti, g_class[h->cls], &cpn, &cpb, &cp)) !=
	    JVMTI_ERROR_NONE) {
		rc = why("hook %s: constant pool of %s: %s", h->id, zk_class_names[h->cls],
			 jvmti_err(e));
		goto out;
	}
	if (cf_pool_parse(&pool, cpn, cp, (size_t)cpb, perr, sizeof perr) < 0) {
		rc = why("hook %s: constant pool of %s: %s", h->id, zk_class_names[h->cls], perr);
		goto out;
	}
	for (jint i = 0; i < nm && rc == 0; i++) {
		jint clen = 0, mods = 0;
		unsigned char *code = NULL;
		if ((*g_jvmti)->GetBytecodes(g_jvmti, ms[i], &clen, &code) != JVMTI_ERROR_NONE)
			continue; /* abstract or native */
		(*g_jvmti)->GetMethodModifiers(g_jvmti, ms[i], &mods);
		for (jint at = 0; at < clen && rc == 0;) {
			int len = cf_insn_len(code, (size_t)clen, (size_t)at);
			if (len <= 0) {
				rc = why("hook %s: cannot decode the bytecode of a method of %s at %d", h->id,
					 zk_class_names[h->cls], (int)at);
				break;
			}
			struct cf_str owner, name, desc;
			if (code[at] == CF_OP_PUTFIELD &&
			    cf_pool_member(&pool, code[at + 1] << 8 | code[at + 2], &owner, &name, &desc) == 0 &&
			    cf_str_eq(owner, h->call_owner) && cf_str_eq(name, h->call_name)) {
				if (mods & 0x0008) { /* ACC_STATIC: no `this` to read the value from */
					rc = why("hook %s: a static method of %s writes %s", h->id,
						 zk_class_names[h->cls], h->call_name);
					break;
				}
				rc = add_site(h, ms[i], at + len, line_of(ms[i], at));
				found++;
			}
			at += len;
		}
		dealloc(code);
	}
	if (rc == 0 && !found)
		rc = why("hook %s: no method of %s writes its field %s (is this ZooKeeper 3.8.0?)", h->id,
			 zk_class_names[h->cls], h->call_name);
out:
	cf_pool_free(&pool);
	dealloc(ms);
	dealloc(cp);
	return rc;
}

static int resolve_hook(size_t hi)
{
	const struct zk_hook *h = &zk_hooks[hi];
	if (h->anchor == ZA_PUTFIELD)
		return resolve_putfield_hook(h);
	int line = hook_line(hi);
	char what[512];
	snprintf(what, sizeof what, "hook %s: %s.%s%s line %d", h->id, zk_class_names[h->cls],
		 h->method, h->sig, line);
	jmethodID m = find_method(h->cls, h->method, h->sig);
	if (!m)
		return why("hook %s: class %s has no method %s%s", h->id, zk_class_names[h->cls],
			   h->method, h->sig);
	jint nl = 0, clen = 0, cpn = 0, cpb = 0;
	jvmtiLineNumberEntry *lt = NULL;
	unsigned char *code = NULL, *cp = NULL;
	struct cf_pool pool = {0};
	int rc = 0;
	jvmtiError e = (*g_jvmti)->GetLineNumberTable(g_jvmti, m, &nl, &lt);
	if (e != JVMTI_ERROR_NONE) {
		rc = why("%s: no line number table (%s)", what, jvmti_err(e));
		goto out;
	}
	if ((e = (*g_jvmti)->GetBytecodes(g_jvmti, m, &clen, &code)) != JVMTI_ERROR_NONE) {
		rc = why("%s: bytecodes not available (%s)", what, jvmti_err(e));
		goto out;
	}
	if ((e = (*g_jvmti)->GetConstantPool(g_jvmti, g_class[h->cls], &cpn, &cpb, &cp)) !=
	    JVMTI_ERROR_NONE) {
		rc = why("%s: constant pool not available (%s)", what, jvmti_err(e));
		goto out;
	}
	char perr[256];
	if (cf_pool_parse(&pool, cpn, cp, (size_t)cpb, perr, sizeof perr) < 0) {
		rc = why("%s: constant pool of %s: %s", what, zk_class_names[h->cls], perr);
		goto out;
	}
	/* The line's code: every [start, next start) range of its entries. */
	jlocation first = -1;
	int found = 0, nsites = 0;
	for (jint i = 0; i < nl && rc == 0; i++) {
		if (lt[i].line_number != line)
			continue;
		jlocation start = lt[i].start_location, end = clen;
		for (jint j = 0; j < nl; j++)
			if (lt[j].start_location > start && lt[j].start_location < end)
				end = lt[j].start_location;
		if (first < 0 || start < first)
			first = start;
		if (!cf_insn_boundary(code, (size_t)clen, (size_t)start)) {
			rc = why("%s: line starts inside an instruction (bytecode %lld)", what,
				 (long long)start);
			break;
		}
		for (jlocation at = start; at < end;) {
			int len = cf_insn_len(code, (size_t)clen, (size_t)at);
			if (len <= 0) {
				rc = why("%s: cannot decode the bytecode at %lld (opcode 0x%02x)", what,
					 (long long)at, code[at]);
				break;
			}
			unsigned char op = code[at];
			if (h->call_owner && cf_is_invoke(op)) {
				struct cf_str owner, name, desc;
				int idx = code[at + 1] << 8 | code[at + 2];
				if (cf_pool_member(&pool, idx, &owner, &name, &desc) == 0 &&
				    cf_str_eq(owner, h->call_owner) && cf_str_eq(name, h->call_name)) {
					found++;
					if (found == 1 && h->anchor != ZA_LINE) {
						jlocation loc = h->anchor == ZA_AT_CALL ? at : at + len;
						rc = add_site(h, m, loc, line);
						nsites++;
					}
				}
			}
			if (h->anchor == ZA_RETURN && cf_is_return(op)) {
				rc = add_site(h, m, at, line);
				nsites++;
				found++;
			}
			at += len;
		}
	}
	if (rc < 0)
		goto out;
	if (first < 0) {
		rc = why("%s: the method has no line %d (this agent knows Debian's ZooKeeper 3.8.0; "
			 "another version needs its hooks in systems/zookeeper/agent/hooks.c)",
			 what, line);
		goto out;
	}
	if (h->anchor == ZA_LINE && (!h->call_owner || found == 1)) {
		rc = add_site(h, m, first, line);
		nsites = 1;
	} else if (h->call_owner && found != 1) {
		rc = why("%s: the line calls %s.%s %d times, not once (another ZooKeeper version?)",
			 what, h->call_owner, h->call_name, found);
		if (found > 1)
			g_nsites -= (size_t)nsites; /* the site added for the first one */
	} else if (h->anchor == ZA_RETURN && found == 0) {
		rc = why("%s: no return instruction on that line (another ZooKeeper version?)", what);
	}
	for (size_t k = g_nsites - (size_t)nsites; rc == 0 && k < g_nsites; k++)
		rc = resolve_locals(&g_sites[k], what);
out:
	cf_pool_free(&pool);
	dealloc(lt);
	dealloc(code);
	dealloc(cp);
	return rc;
}

static int arm(void)
{
	for (size_t i = 0; i < g_nsites; i++) {
		struct site *s = &g_sites[i];
		if (s->h->anchor == ZA_AT_CALL)
			continue;
		bool dup = false;
		for (size_t k = 0; k < i; k++)
			dup |= g_sites[k].m == s->m && g_sites[k].loc == s->loc &&
			       g_sites[k].h->anchor != ZA_AT_CALL;
		if (dup)
			continue;
		jvmtiError e = (*g_jvmti)->SetBreakpoint(g_jvmti, s->m, s->loc);
		if (e != JVMTI_ERROR_NONE)
			return why("hook %s: SetBreakpoint at %s: %s", s->h->id, s->where, jvmti_err(e));
	}
	return 0;
}

/* ---- reading ZooKeeper's objects (in callbacks) ---- */

struct hit {
	JNIEnv *jni;
	jthread th;
	const struct site *s;
	jobjectArray locals; /* the hooked frame's locals by slot (LiveStackFrame), once read */
	bool walked;
};

/* The hooked frame's locals, walked once per hit; NULL when the walker is not usable. */
static jobjectArray live_locals(struct hit *h)
{
	JNIEnv *jni = h->jni;
	if (h->walked)
		return h->locals;
	h->walked = true;
	if (!g_j.live)
		return NULL;
	jobject buf = (*jni)->NewObject(jni, g_j.spined, g_j.spined_init);
	if (buf)
		(*jni)->CallVoidMethod(jni, g_j.walker, g_j.for_each, buf);
	jobject frame = buf && !(*jni)->ExceptionCheck(jni)
				? (*jni)->CallObjectMethod(jni, buf, g_j.spined_get, (jlong)0)
				: NULL;
	jobjectArray loc = frame && !(*jni)->ExceptionCheck(jni)
				   ? (*jni)->CallObjectMethod(jni, frame, g_j.get_locals)
				   : NULL;
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		g_s.errors++;
		loc = NULL;
	}
	h->locals = loc;
	return loc;
}

static jobject local_obj(struct hit *h, int k)
{
	jobject o = NULL;
	jobjectArray loc = live_locals(h);
	if (loc) {
		jint slot = h->s->slot[k];
		if (slot < (*h->jni)->GetArrayLength(h->jni, loc))
			return (*h->jni)->GetObjectArrayElement(h->jni, loc, slot);
		g_s.errors++;
		return NULL;
	}
	if ((*g_jvmti)->GetLocalObject(g_jvmti, h->th, 0, h->s->slot[k], &o) != JVMTI_ERROR_NONE) {
		g_s.errors++;
		return NULL;
	}
	return o;
}

static int64_t local_long(struct hit *h, int k)
{
	jlong v = 0;
	if ((*g_jvmti)->GetLocalLong(g_jvmti, h->th, 0, h->s->slot[k], &v) != JVMTI_ERROR_NONE)
		g_s.errors++;
	return (int64_t)v;
}

static int64_t local_int(struct hit *h, int k)
{
	jint v = 0;
	jobjectArray loc = live_locals(h);
	JNIEnv *jni = h->jni;
	if (loc && h->s->slot[k] < (*jni)->GetArrayLength(jni, loc)) {
		/* A PrimitiveSlot: 4 bytes, or (64-bit VMs) the slot's whole 8-byte word. */
		jobject ps = (*jni)->GetObjectArrayElement(jni, loc, h->s->slot[k]);
		jint size = ps ? (*jni)->CallIntMethod(jni, ps, g_j.slot_size) : 0;
		if (size == 4)
			v = (*jni)->CallIntMethod(jni, ps, g_j.slot_int);
		else if (size == 8)
			v = (jint)(*jni)->CallLongMethod(jni, ps, g_j.slot_long);
		if ((*jni)->ExceptionCheck(jni)) {
			(*jni)->ExceptionClear(jni);
			size = 0;
		}
		if (ps)
			(*jni)->DeleteLocalRef(jni, ps);
		if (size == 4 || size == 8)
			return (int64_t)v;
		g_s.errors++;
		return 0;
	}
	if ((*g_jvmti)->GetLocalInt(g_jvmti, h->th, 0, h->s->slot[k], &v) != JVMTI_ERROR_NONE)
		g_s.errors++;
	return (int64_t)v;
}

static jobject this_obj(struct hit *h)
{
	jobject o = NULL;
	jobjectArray loc = live_locals(h);
	if (loc && (*h->jni)->GetArrayLength(h->jni, loc) > 0)
		return (*h->jni)->GetObjectArrayElement(h->jni, loc, 0);
	if ((*g_jvmti)->GetLocalObject(g_jvmti, h->th, 0, 0, &o) != JVMTI_ERROR_NONE) {
		g_s.errors++;
		return NULL;
	}
	return o;
}

static int64_t lfield(JNIEnv *jni, jobject o, enum zk_field f)
{
	return o ? (int64_t)(*jni)->GetLongField(jni, o, g_fid[f]) : 0;
}

/* An enum constant's name ("LOOKING"), "null" for none. */
static void enum_name(JNIEnv *jni, jobject e, char *buf, size_t size)
{
	snprintf(buf, size, "null");
	if (!e)
		return;
	jstring s = (*jni)->GetObjectField(jni, e, g_j.enum_name);
	if (!s)
		return;
	jsize n = (*jni)->GetStringLength(jni, s);
	if (n > 0 && (size_t)n < size) {
		(*jni)->GetStringUTFRegion(jni, s, 0, n, buf);
		buf[n] = '\0';
	}
	(*jni)->DeleteLocalRef(jni, s);
}

static void state_of(JNIEnv *jni, jobject o, enum zk_field f, char *buf, size_t size)
{
	jobject e = o ? (*jni)->GetObjectField(jni, o, g_fid[f]) : NULL;
	enum_name(jni, e, buf, size);
	if (e)
		(*jni)->DeleteLocalRef(jni, e);
}

/* A notification's content: what a Notification, a ToSend and a Vote share. */
struct notif {
	int64_t sid, leader, zxid, eepoch, pepoch;
	char state[16];
	bool state_is_int; /* a raw wire state that is no ServerState */
	int64_t state_int;
};

static void read_notification(JNIEnv *jni, jobject n, struct notif *o)
{
	memset(o, 0, sizeof *o);
	if (!n) {
		g_s.errors++;
		snprintf(o->state, sizeof o->state, "null");
		return;
	}
	o->sid = lfield(jni, n, ZF_N_SID);
	o->leader = lfield(jni, n, ZF_N_LEADER);
	o->zxid = lfield(jni, n, ZF_N_ZXID);
	o->eepoch = lfield(jni, n, ZF_N_EEPOCH);
	o->pepoch = lfield(jni, n, ZF_N_PEPOCH);
	state_of(jni, n, ZF_N_STATE, o->state, sizeof o->state);
}

static void read_vote(JNIEnv *jni, jobject v, struct notif *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->state, sizeof o->state, "null");
	if (!v)
		return;
	o->leader = lfield(jni, v, ZF_V_ID);
	o->zxid = lfield(jni, v, ZF_V_ZXID);
	o->eepoch = lfield(jni, v, ZF_V_EEPOCH);
	o->pepoch = lfield(jni, v, ZF_V_PEPOCH);
	state_of(jni, v, ZF_V_STATE, o->state, sizeof o->state);
}

/* The ServerState names by ordinal, as the wire encodes them (QuorumPeer.ServerState). */
static const char *const wire_state[] = {"LOOKING", "FOLLOWING", "LEADING", "OBSERVING"};

static void write_fields(struct jw *w, const struct notif *n)
{
	jw_obj(w);
	jw_kv_i64(w, "leader", n->leader);
	jw_kv_i64(w, "zxid", n->zxid);
	jw_kv_i64(w, "electionEpoch", n->eepoch);
	jw_kv_i64(w, "peerEpoch", n->pepoch);
	if (n->state_is_int)
		jw_kv_i64(w, "state", n->state_int);
	else if (!strcmp(n->state, "null"))
		jw_kv_str(w, "state", NULL);
	else
		jw_kv_str(w, "state", n->state);
	jw_end_obj(w);
}

/* The FastLeaderElection fields the election thread owns, read live. */
struct fle_now {
	bool ok;
	int64_t logicalclock, pleader, pzxid, pepoch;
};

static void read_fle(struct hit *h, jobject fle, struct fle_now *f)
{
	JNIEnv *jni = h->jni;
	memset(f, 0, sizeof *f);
	if (!fle) {
		g_s.errors++;
		return;
	}
	jobject lc = (*jni)->GetObjectField(jni, fle, g_fid[ZF_FLE_LOGICALCLOCK]);
	if (lc) {
		f->logicalclock = (int64_t)(*jni)->CallLongMethod(jni, lc, g_j.al_get);
		if ((*jni)->ExceptionCheck(jni)) {
			(*jni)->ExceptionClear(jni);
			g_s.errors++;
		}
		(*jni)->DeleteLocalRef(jni, lc);
	}
	f->pleader = lfield(jni, fle, ZF_FLE_PLEADER);
	f->pzxid = lfield(jni, fle, ZF_FLE_PZXID);
	f->pepoch = lfield(jni, fle, ZF_FLE_PEPOCH);
	f->ok = lc != NULL;
}

static void apply_fle(const struct fle_now *f)
{
	if (!f->ok)
		return;
	g_s.logicalclock = f->logicalclock;
	g_s.pleader = f->pleader;
	g_s.pzxid = f->pzxid;
	g_s.pepoch = f->pepoch;
}

struct vote_entry {
	int64_t sid;
	struct notif v;
};

static int cmp_entry(const void *a, const void *b)
{
	int64_t x = ((const struct vote_entry *)a)->sid, y = ((const struct vote_entry *)b)->sid;
	return (x > y) - (x < y);
}

/* A Map<Long,Vote> (a HashMap) as JSON {"<sid>": {...}, ...} in sid order, into w; the vote of
 * want_sid (if present) into *want. Walks the table and the bins' next links (tree bins keep
 * them too) without calling Java code. Only the election thread calls it (the maps are its
 * locals), hence one static entry array. */
static void read_vote_map(JNIEnv *jni, jobject map, struct jw *w, int64_t want_sid,
			  struct notif *want, bool *have_want)
{
	static struct vote_entry ent[MAX_VOTES];
	size_t n = 0;
	if (have_want)
		*have_want = false;
	jw_reset(w);
	jw_obj(w);
	if (!map || !(*jni)->IsInstanceOf(jni, map, g_j.hashmap)) {
		if (map)
			g_s.errors++;
		jw_end_obj(w);
		return;
	}
	jobjectArray tab = (*jni)->GetObjectField(jni, map, g_j.hm_table);
	jsize len = tab ? (*jni)->GetArrayLength(jni, tab) : 0;
	for (jsize i = 0; i < len; i++) {
		jobject node = (*jni)->GetObjectArrayElement(jni, tab, i);
		while (node) {
			jobject key = (*jni)->GetObjectField(jni, node, g_j.node_key);
			jobject val = (*jni)->GetObjectField(jni, node, g_j.node_value);
			if (n < MAX_VOTES) {
				ent[n].sid = key ? (int64_t)(*jni)->GetLongField(jni, key, g_j.long_value) : 0;
				read_vote(jni, val, &ent[n].v);
				n++;
			} else {
				g_s.errors++;
			}
			if (key)
				(*jni)->DeleteLocalRef(jni, key);
			if (val)
				(*jni)->DeleteLocalRef(jni, val);
			jobject next = (*jni)->GetObjectField(jni, node, g_j.node_next);
			(*jni)->DeleteLocalRef(jni, node);
			node = next;
		}
	}
	if (tab)
		(*jni)->DeleteLocalRef(jni, tab);
	qsort(ent, n, sizeof ent[0], cmp_entry);
	for (size_t i = 0; i < n; i++) {
		char k[24];
		snprintf(k, sizeof k, "%" PRId64, ent[i].sid);
		jw_key(w, k);
		write_fields(w, &ent[i].v);
		if (want && ent[i].sid == want_sid) {
			*want = ent[i].v;
			*have_want = true;
		}
	}
	jw_end_obj(w);
}

/* ---- records (under g_lock) ---- */

static void node_name(char *buf, size_t size)
{
	snprintf(buf, size, "%s", g_opt.node[0] ? g_opt.node : "unknown");
}

/* Opens a record: header and the state after the step. Returns false when the sink does not
 * want records now (then nothing is to be written). */
static bool rec_begin(const char *kind)
{
	if (!(g_sink_open && g_sink.enabled(&g_sink)) && !(g_sink2_open && g_sink2.enabled(&g_sink2)))
		return false;
	struct jw *w = &g_rec;
	char node[64];
	node_name(node, sizeof node);
	jw_reset(w);
	g_hdr.ts_ns = now_ns();
	g_hdr.tid = (uint64_t)syscall(SYS_gettid);
	jw_obj(w);
	jw_kv_str(w, "node", node);
	jw_kv_str(w, "kind", kind);
	jw_key(w, "state");
	jw_obj(w);
	jw_kv_i64(w, "logicalclock", g_s.logicalclock);
	jw_kv_i64(w, "proposedLeader", g_s.pleader);
	jw_kv_i64(w, "proposedZxid", g_s.pzxid);
	jw_kv_i64(w, "proposedEpoch", g_s.pepoch);
	jw_kv_str(w, "state", g_s.state);
	jw_kv_i64(w, "currentEpoch", g_s.cur_epoch);
	jw_kv_i64(w, "acceptedEpoch", g_s.acc_epoch);
	jw_kv_raw(w, "recvset", g_s.recvset.p, g_s.recvset.n);
	jw_kv_raw(w, "outofelection", g_s.ooe.p, g_s.ooe.n);
	jw_end_obj(w);
	return true;
}

static void rec_msg(bool send, int64_t other, const struct notif *n)
{
	struct jw *w = &g_rec;
	char me[64], peer[24];
	node_name(me, sizeof me);
	snprintf(peer, sizeof peer, "%" PRId64, other);
	jw_key(w, "msg");
	jw_obj(w);
	jw_kv_str(w, "dir", send ? "send" : "recv");
	jw_kv_str(w, "from", send ? me : peer);
	jw_kv_str(w, "to", send ? peer : me);
	jw_kv_str(w, "type", "Notification");
	jw_key(w, "fields");
	write_fields(w, n);
	jw_end_obj(w);
}

static void rec_end(const char *hook, const char *where)
{
	struct jw *w = &g_rec;
	jw_key(w, "meta");
	jw_obj(w);
	jw_kv_str(w, "hook", hook);
	jw_kv_str(w, "at", where);
	/* Every record built takes a sequence number, written or not: a gap in a file or in the
	 * records a collector received from this JVM is a loss. */
	g_hdr.seq = ++g_s.seq;
	jw_key(w, "seq");
	jw_u64(w, g_hdr.seq);
	jw_end_obj(w);
	jw_end_obj(w);
	if (w->oom) {
		g_s.unbuilt++;
		return;
	}
	bool ok = g_sink_open && g_sink.enabled(&g_sink) && g_sink.emit(&g_sink, w->p, w->n, &g_hdr) == 0;
	if (g_sink2_open && g_sink2.enabled(&g_sink2))
		ok = g_sink2.emit(&g_sink2, w->p, w->n, &g_hdr) == 0 || ok;
	if (ok)
		g_s.records++;
}

/* ---- the hooks ---- */

static void split_arg(const char *arg, char *action, size_t as, char *reason, size_t rs)
{
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	snprintf(action, as, "%.*s", (int)n, arg);
	snprintf(reason, rs, "%s", colon ? colon + 1 : "");
}

static void record_handle(const char *branch, const struct notif *n, const char *hook,
			  const char *where)
{
	if (!rec_begin("zk.notification.handle"))
		return;
	char from[24];
	snprintf(from, sizeof from, "%" PRId64, n->sid);
	jw_key(&g_rec, "args");
	jw_obj(&g_rec);
	jw_kv_str(&g_rec, "branch", branch);
	jw_kv_str(&g_rec, "from", from);
	jw_key(&g_rec, "fields");
	write_fields(&g_rec, n);
	jw_end_obj(&g_rec);
	rec_end(hook, where);
}

/* Objects cached so that most hooks read no local variable: on OpenJDK 17 every GetLocal* is a
 * safepoint (a VM operation that stops every thread), the agent's main cost. */
static struct {
	jobject fle;     /* the FastLeaderElection (global ref), from its constructor */
	jobject peer;    /* the QuorumPeer (global ref), from its first state write or fle.self */
	jobject rs, ooe; /* lookForLeader's recvset and outofelection, from each new election */
	struct notif cur;/* the notification lookForLeader handles in this loop iteration */
	bool have_cur;
} g_c;

static void set_ref(JNIEnv *jni, jobject *slot, jobject o)
{
	if (*slot && o && (*jni)->IsSameObject(jni, *slot, o))
		return;
	if (*slot)
		(*jni)->DeleteGlobalRef(jni, *slot);
	*slot = o ? (*jni)->NewGlobalRef(jni, o) : NULL;
}

static void record_epoch_or_state(struct hit *h)
{
	JNIEnv *jni = h->jni;
	const struct zk_hook *hk = h->s->h;
	jobject peer = g_c.peer;
	if (!peer) { /* the first write, in QuorumPeer's constructor: the one local read */
		peer = this_obj(h);
		if (peer)
			set_ref(jni, &g_c.peer, peer);
	}
	int64_t myid = g_opt.node[0] ? 0 : lfield(jni, peer, ZF_PEER_MYID);
	char name[16] = "";
	int64_t nv = 0;
	bool cur = hk->action == A_EPOCH && !strcmp(hk->arg, "currentEpoch");
	if (hk->action == A_PEER_STATE)
		state_of(jni, peer, ZF_PEER_STATE, name, sizeof name);
	else
		nv = lfield(jni, peer, cur ? ZF_PEER_CUREPOCH : ZF_PEER_ACCEPOCH);
	lock();
	if (!g_opt.node[0] && myid)
		snprintf(g_opt.node, sizeof g_opt.node, "%" PRId64, myid);
	if (hk->action == A_PEER_STATE) {
		char old[16];
		snprintf(old, sizeof old, "%s", g_s.state);
		snprintf(g_s.state, sizeof g_s.state, "%s", name);
		if (rec_begin("zk.peer.state")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "old", old);
			jw_kv_str(&g_rec, "new", name);
			jw_end_obj(&g_rec);
			rec_end(hk->id, h->s->where);
		}
	} else {
		int64_t *slot = cur ? &g_s.cur_epoch : &g_s.acc_epoch;
		int64_t old = *slot;
		*slot = nv;
		if (rec_begin(cur ? "zk.epoch.current" : "zk.epoch.accepted")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_i64(&g_rec, "old", old);
			jw_kv_i64(&g_rec, "new", nv);
			jw_end_obj(&g_rec);
			rec_end(hk->id, h->s->where);
		}
	}
	unlock();
}

/* The notification a lookForLeader hook is about: the handled one of this iteration (read once,
 * at its branch), or the local n where the code has just polled another (finalize wait). */
static void current_n(struct hit *h, struct notif *n, bool fresh)
{
	if (fresh || !g_c.have_cur) {
		read_notification(h->jni, local_obj(h, 0), n);
		return;
	}
	*n = g_c.cur;
}

static void on_hit(struct hit *h)
{
	JNIEnv *jni = h->jni;
	const struct zk_hook *hk = h->s->h;
	const char *id = hk->id, *where = h->s->where;
	struct fle_now f;
	struct notif n;
	memset(&n, 0, sizeof n);
	memset(&f, 0, sizeof f);
	if (hk->cls == ZC_FLE && hk->action != A_POLL && hk->action != A_FIN_POLLED &&
	    hk->action != A_FLE_INIT)
		read_fle(h, g_c.fle ? g_c.fle : this_obj(h), &f);

	switch (hk->action) {
	case A_FLE_INIT: {
		jobject fle = this_obj(h);
		set_ref(jni, &g_c.fle, fle);
		read_fle(h, fle, &f);
		jobject self = fle ? (*jni)->GetObjectField(jni, fle, g_fid[ZF_FLE_SELF]) : NULL;
		int64_t myid = lfield(jni, self, ZF_PEER_MYID);
		if (self)
			set_ref(jni, &g_c.peer, self);
		lock();
		apply_fle(&f);
		if (!g_opt.node[0] && self)
			snprintf(g_opt.node, sizeof g_opt.node, "%" PRId64, myid);
		if (rec_begin("zk.fle.init")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_i64(&g_rec, "myid", myid);
			jw_end_obj(&g_rec);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_PROPOSAL: {
		lock();
		int64_t ol = g_s.pleader, oz = g_s.pzxid, oe = g_s.pepoch;
		apply_fle(&f);
		if (rec_begin("zk.proposal.update")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_i64(&g_rec, "leader", f.pleader);
			jw_kv_i64(&g_rec, "zxid", f.pzxid);
			jw_kv_i64(&g_rec, "epoch", f.pepoch);
			jw_key(&g_rec, "old");
			jw_obj(&g_rec);
			jw_kv_i64(&g_rec, "leader", ol);
			jw_kv_i64(&g_rec, "zxid", oz);
			jw_kv_i64(&g_rec, "epoch", oe);
			jw_end_obj(&g_rec);
			jw_end_obj(&g_rec);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_CLOCK: {
		char rb[512], ob[512];
		struct jw rs, oe;
		jw_init(&rs, rb, sizeof rb);
		jw_init(&oe, ob, sizeof ob);
		if (!strcmp(hk->arg, "newElection") || !g_c.rs) { /* new maps for a new election */
			set_ref(jni, &g_c.rs, local_obj(h, 0));
			set_ref(jni, &g_c.ooe, local_obj(h, 1));
		}
		read_vote_map(jni, g_c.rs, &rs, 0, NULL, NULL);
		read_vote_map(jni, g_c.ooe, &oe, 0, NULL, NULL);
		lock();
		int64_t old = g_s.logicalclock;
		apply_fle(&f);
		jw_reset(&g_s.recvset);
		jw_raw(&g_s.recvset, rs.p, rs.n);
		jw_reset(&g_s.ooe);
		jw_raw(&g_s.ooe, oe.p, oe.n);
		if (rec_begin("zk.logicalclock.bump")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_i64(&g_rec, "old", old);
			jw_kv_i64(&g_rec, "new", f.logicalclock);
			jw_kv_str(&g_rec, "site", hk->arg);
			jw_end_obj(&g_rec);
			rec_end(id, where);
		}
		unlock();
		jw_free(&rs);
		jw_free(&oe);
		break;
	}
	case A_POLL:
		lock();
		g_s.handled = false;
		g_s.inner_pending = false;
		g_c.have_cur = false;
		unlock();
		break;
	case A_FIN_POLLED:
		lock();
		g_s.inner_pending = true;
		unlock();
		break;
	case A_TIMEOUT: {
		int64_t to = local_int(h, 0);
		lock();
		apply_fle(&f);
		if (rec_begin("zk.election.timeout")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "action", hk->arg);
			jw_kv_i64(&g_rec, "notTimeout", to);
			jw_end_obj(&g_rec);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_HANDLE:
	case A_HANDLE_JOIN: {
		bool requeue = !strcmp(hk->arg, "finalizeRequeued");
		lock();
		bool skip = hk->action == A_HANDLE_JOIN && g_s.handled;
		unlock();
		if (skip)
			break;
		read_notification(jni, local_obj(h, 0), &n);
		lock();
		apply_fle(&f);
		record_handle(hk->arg, &n, id, where);
		g_s.handled = true;
		if (requeue) {
			g_s.inner_pending = false;
		} else {
			g_c.cur = n;
			g_c.have_cur = true;
		}
		unlock();
		break;
	}
	case A_FIN_TOP: {
		lock();
		bool pending = g_s.inner_pending;
		unlock();
		if (pending)
			current_n(h, &n, true);
		lock();
		apply_fle(&f);
		if (pending) {
			record_handle("finalizeDiscarded", &n, id, where);
			g_s.inner_pending = false;
		} else if (rec_begin("zk.election.quorum")) {
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_RS_CLEAR:
	case A_RS_PUT:
	case A_OOE_PUT: {
		char mb[512];
		struct jw mw;
		struct notif put;
		bool have = false;
		jw_init(&mw, mb, sizeof mb);
		if (hk->action != A_RS_CLEAR)
			current_n(h, &n, false);
		jobject map = hk->action == A_OOE_PUT ? g_c.ooe : g_c.rs;
		if (!map) /* not seen at a new election (cannot happen in 3.8.0): read it here */
			map = local_obj(h, 0);
		read_vote_map(jni, map, &mw, n.sid, hk->action == A_RS_CLEAR ? NULL : &put, &have);
		lock();
		apply_fle(&f);
		struct jw *dst = hk->action == A_OOE_PUT ? &g_s.ooe : &g_s.recvset;
		jw_reset(dst);
		jw_raw(dst, mw.p, mw.n);
		const char *kind = hk->action == A_RS_CLEAR ? "zk.recvset.clear"
				   : hk->action == A_RS_PUT ? "zk.recvset.put"
							    : "zk.outofelection.put";
		if (rec_begin(kind)) {
			if (hk->action != A_RS_CLEAR) {
				char sid[24];
				snprintf(sid, sizeof sid, "%" PRId64, n.sid);
				jw_key(&g_rec, "args");
				jw_obj(&g_rec);
				if (hk->arg)
					jw_kv_str(&g_rec, "site", hk->arg);
				jw_kv_str(&g_rec, "sid", sid);
				jw_key(&g_rec, "vote");
				if (have)
					write_fields(&g_rec, &put);
				else
					jw_null(&g_rec);
				jw_end_obj(&g_rec);
			}
			rec_end(id, where);
		}
		unlock();
		jw_free(&mw);
		break;
	}
	case A_END: {
		struct notif v;
		read_vote(jni, local_obj(h, 0), &v);
		lock();
		apply_fle(&f);
		if (rec_begin("zk.election.end")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "site", hk->arg);
			jw_key(&g_rec, "vote");
			write_fields(&g_rec, &v);
			jw_end_obj(&g_rec);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_STOP:
		lock();
		apply_fle(&f);
		if (rec_begin("zk.election.stop"))
			rec_end(id, where);
		unlock();
		break;
	case A_WR_RAW:
	case A_WR_MALFORMED:
	case A_WR_QUEUED:
	case A_WR_NOTLOOKING: {
		char action[32], reason[32];
		bool has_msg = true;
		if (hk->action == A_WR_RAW || hk->action == A_WR_MALFORMED) {
			jobject resp = local_obj(h, 0);
			n.sid = lfield(jni, resp, ZF_MSG_SID);
			if (!resp)
				g_s.errors++;
		}
		if (hk->action == A_WR_RAW) {
			split_arg(hk->arg, action, sizeof action, reason, sizeof reason);
			int64_t rs = local_int(h, 1);
			n.leader = local_long(h, 2);
			n.zxid = local_long(h, 3);
			n.eepoch = local_long(h, 4);
			n.pepoch = local_long(h, 5);
			if (rs >= 0 && rs < 4) {
				snprintf(n.state, sizeof n.state, "%s", wire_state[rs]);
			} else {
				n.state_is_int = true;
				n.state_int = rs;
			}
		} else if (hk->action == A_WR_MALFORMED) {
			snprintf(action, sizeof action, "dropped");
			snprintf(reason, sizeof reason, "malformed");
			has_msg = false;
		} else {
			/* n.state is the sender's state (ackstate): no second local to read. */
			read_notification(jni, local_obj(h, 0), &n);
			if (hk->action == A_WR_QUEUED) {
				snprintf(action, sizeof action, "queued");
				snprintf(reason, sizeof reason, "looking");
			} else {
				snprintf(action, sizeof action, "%s",
					 !strcmp(n.state, "LOOKING") ? "answered" : "ignored");
				snprintf(reason, sizeof reason, "notLooking");
			}
		}
		lock();
		if (rec_begin("zk.notification.recv")) {
			char from[24];
			snprintf(from, sizeof from, "%" PRId64, n.sid);
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "action", action);
			jw_kv_str(&g_rec, "reason", reason);
			jw_kv_str(&g_rec, "from", from);
			jw_end_obj(&g_rec);
			if (has_msg)
				rec_msg(false, n.sid, &n);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_SEND: {
		jobject ts = this_obj(h);
		if (ts) {
			n.leader = lfield(jni, ts, ZF_TS_LEADER);
			n.zxid = lfield(jni, ts, ZF_TS_ZXID);
			n.eepoch = lfield(jni, ts, ZF_TS_EEPOCH);
			n.pepoch = lfield(jni, ts, ZF_TS_PEPOCH);
			n.sid = lfield(jni, ts, ZF_TS_SID);
			state_of(jni, ts, ZF_TS_STATE, n.state, sizeof n.state);
		}
		/* Which call site built it: the caller's frame. */
		jmethodID cm = NULL;
		jlocation cl = -1;
		const char *site = "unknown";
		if ((*g_jvmti)->GetFrameLocation(g_jvmti, h->th, 1, &cm, &cl) == JVMTI_ERROR_NONE)
			for (size_t i = 0; i < g_nsites; i++)
				if (g_sites[i].h->action == A_SITE && g_sites[i].m == cm &&
				    g_sites[i].loc == cl)
					site = g_sites[i].h->arg;
		lock();
		if (rec_begin("zk.notification.send")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "site", site);
			jw_end_obj(&g_rec);
			rec_msg(true, n.sid, &n);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_PEER_STATE:
	case A_EPOCH:
		record_epoch_or_state(h);
		break;
	case A_RESEND: {
		/* The bytes FastLeaderElection.buildMsg wrote: state, leader, zxid, electionEpoch,
		 * peerEpoch, big-endian, from the buffer's array offset. */
		jobject sw = this_obj(h), b = local_obj(h, 0);
		jobject sid = sw ? (*jni)->GetObjectField(jni, sw, g_fid[ZF_SW_SID]) : NULL;
		jbyteArray hb = b ? (*jni)->GetObjectField(jni, b, g_j.bb_hb) : NULL;
		jint off = b ? (*jni)->GetIntField(jni, b, g_j.bb_offset) : 0;
		unsigned char raw[36];
		bool ok = sid && hb && off >= 0 && (*jni)->GetArrayLength(jni, hb) >= off + 36;
		if (ok)
			(*jni)->GetByteArrayRegion(jni, hb, off, 36, (jbyte *)raw);
		if (!ok || (*jni)->ExceptionCheck(jni)) {
			(*jni)->ExceptionClear(jni);
			g_s.errors++;
			break;
		}
		n.sid = (int64_t)(*jni)->GetLongField(jni, sid, g_j.long_value);
		int64_t v[5];
		zk_parse_wire(raw, sizeof raw, v);
		if (v[0] >= 0 && v[0] < 4) {
			snprintf(n.state, sizeof n.state, "%s", wire_state[v[0]]);
		} else {
			n.state_is_int = true;
			n.state_int = v[0];
		}
		n.leader = v[1];
		n.zxid = v[2];
		n.eepoch = v[3];
		n.pepoch = v[4];
		lock();
		if (rec_begin("zk.notification.resend")) {
			jw_key(&g_rec, "args");
			jw_obj(&g_rec);
			jw_kv_str(&g_rec, "site", "lastMessage");
			jw_end_obj(&g_rec);
			rec_msg(true, n.sid, &n);
			rec_end(id, where);
		}
		unlock();
		break;
	}
	case A_SITE:
		break;
	}
}

static void count_hit(uint64_t t0)
{
	uint64_t dt = now_ns() - t0;
	lock();
	g_s.hits++;
	g_s.hit_ns += dt;
	unlock();
}

static void JNICALL on_breakpoint(jvmtiEnv *jvmti, JNIEnv *jni, jthread th, jmethodID m,
				  jlocation loc)
{
	(void)jvmti;
	if (!g_live)
		return;
	if ((*jni)->PushLocalFrame(jni, 64) < 0) {
		(*jni)->ExceptionClear(jni);
		return;
	}
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < g_nsites; i++) {
		struct site *s = &g_sites[i];
		if (s->m != m || s->loc != loc || s->h->anchor == ZA_AT_CALL)
			continue;
		struct hit h = {jni, th, s, NULL, false};
		uint64_t t1 = now_ns();
		on_hit(&h);
		uint64_t dt = now_ns() - t1;
		lock();
		s->hits++;
		s->ns += dt;
		unlock();
	}
	count_hit(t0);
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		g_s.errors++;
	}
	(*jni)->PopLocalFrame(jni, NULL);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread th)
{
	(void)th;
	uint64_t t_start = now_ns();
	int rc = 0;
	for (int c = 0; c < ZC_COUNT && rc == 0; c++)
		rc = load_class(jni, (enum zk_class)c);
	if (rc == 0)
		rc = resolve_jdk(jni);
	if (rc == 0)
		rc = resolve_fields();
	for (size_t i = 0; i < zk_nhooks && rc == 0; i++)
		rc = resolve_hook(i);
	if (rc == 0)
		rc = arm();
	if (rc == 0) {
		jvmtiError e1 = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
								   JVMTI_EVENT_BREAKPOINT, NULL);
		if (e1 != JVMTI_ERROR_NONE)
			rc = why("enabling breakpoint events: %s", jvmti_err(e1));
	}
	if (rc < 0) {
		say("ERROR: %s", g_why);
		say("the JVM is stopped so that ZooKeeper does not run untraced");
		halt_vm(jni);
	}
	if (g_opt.verbose) {
		for (size_t i = 0; i < g_nsites; i++) {
			const struct site *s = &g_sites[i];
			static const char *const an[] = {"line start", "after call", "call site", "return"};
			char slots[160] = "";
			size_t off = 0;
			for (int k = 0; k < ZK_HOOK_LOCALS && s->h->locals[k]; k++)
				off += (size_t)snprintf(slots + off, sizeof slots - off, "%s%s=%d",
							k ? " " : " locals ", s->h->locals[k],
							(int)s->slot[k]);
			say("hook %-34s %s (%s%s%s)%s", s->h->id, s->where, an[s->h->anchor],
			    !s->h->call_name ? "" : s->h->anchor == ZA_LINE ? ", calls " : " ",
			    s->h->call_name ? s->h->call_name : "", slots);
		}
	}
	size_t bps = 0;
	for (size_t i = 0; i < g_nsites; i++)
		bps += g_sites[i].h->anchor != ZA_AT_CALL;
	say("%zu breakpoints armed in %.1f ms; records to %s%s%s", bps,
	    (double)(now_ns() - t_start) / 1e6, g_sink.name, g_opt.out[0] ? " " : "", g_opt.out);
	if (g_sink2_open)
		say("records also to %s", g_sink2.name);
	g_live = 1;
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	(void)jni;
	lock();
	g_live = 0;
	if (g_opt.verbose) {
		for (size_t i = 0; i < g_nsites; i++)
			if (g_sites[i].hits)
				say("hook %-34s hit %6" PRIu64 " times, %9.1f us each", g_sites[i].h->id,
				    g_sites[i].hits, (double)g_sites[i].ns / 1e3 / (double)g_sites[i].hits);
		say("%" PRIu64 " hook hits took %.3f ms in all (%.1f us each); %" PRIu64 " records written",
		    g_s.hits, (double)g_s.hit_ns / 1e6,
		    g_s.hits ? (double)g_s.hit_ns / 1e3 / (double)g_s.hits : 0.0, g_s.records);
	}
	if (g_sink2.failed)
		say("%" PRIu64 " records not emitted (%s)", g_sink2.failed, strerror(g_sink2.last_errno));
	if (g_s.errors || g_s.unbuilt || g_sink.failed)
		say("%" PRIu64 " records written; %" PRIu64 " not built (out of memory), %" PRIu64
		    " not written (%s), %" PRIu64 " reads failed",
		    g_s.records, g_s.unbuilt, g_sink.failed, strerror(g_sink.last_errno),
		    g_s.errors);
	if (g_sink_open)
		g_sink.close(&g_sink);
	if (g_sink2_open)
		g_sink2.close(&g_sink2);
	g_sink_open = g_sink2_open = false;
	unlock();
}

/* ---- options and loading ---- */

static int parse_options(const char *options)
{
	if (!options)
		return 0;
	char buf[8192];
	if (snprintf(buf, sizeof buf, "%s", options) >= (int)sizeof buf) {
		say("ERROR: options too long (%zu bytes)", strlen(options));
		return -1;
	}
	char *save = NULL;
	for (char *o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');
		const char *val = eq ? eq + 1 : NULL;
		if (eq)
			*eq = '\0';
		if (!strcmp(o, "out") && val && *val) {
			snprintf(g_opt.out, sizeof g_opt.out, "%s", val);
		} else if (!strcmp(o, "node") && val && *val && strlen(val) < sizeof g_opt.node) {
			snprintf(g_opt.node, sizeof g_opt.node, "%s", val);
		} else if (!strcmp(o, "verbose") && !val) {
			g_opt.verbose = true;
		} else if (!strcmp(o, "emit") && !val) {
			g_opt.emit = true;
		} else if (!strcmp(o, "locals") && val && (!strcmp(val, "jvmti") || !strcmp(val, "live"))) {
			g_opt.jvmti_locals = !strcmp(val, "jvmti");
		} else if (!strncmp(o, "hook.", 5) && val) {
			int hi = zk_hook_find(o + 5);
			char *end = NULL;
			long line = strtol(val, &end, 10);
			if (hi < 0) {
				say("ERROR: option %s: no hook \"%s\" (hooks: see systems/zookeeper/agent/hooks.c)",
				    o, o + 5);
				return -1;
			}
			if (zk_hooks[hi].anchor == ZA_PUTFIELD) {
				say("ERROR: option %s: hook %s has no line (it is every write of %s)", o,
				    o + 5, zk_hooks[hi].call_name);
				return -1;
			}
			if (!*val || *end || line <= 0 || line > 1000000) {
				say("ERROR: option %s=%s: not a line number", o, val);
				return -1;
			}
			if (g_opt.nov >= MAX_OVERRIDES) {
				say("ERROR: at most %d hook.<id>=<line> options", MAX_OVERRIDES);
				return -1;
			}
			g_opt.ov[g_opt.nov].hook = hi;
			g_opt.ov[g_opt.nov].line = (int)line;
			g_opt.nov++;
		} else {
			say("ERROR: unknown or incomplete option \"%s%s%s\" (known: out=PATH, node=ID, "
			    "emit, verbose, locals=live|jvmti, hook.<id>=<line>)", o, val ? "=" : "", val ? val : "");
			return -1;
		}
	}
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (parse_options(options) < 0)
		return JNI_ERR;
	jint r = (*vm)->GetEnv(vm, (void **)&g_jvmti, JVMTI_VERSION_11);
	if (r != JNI_OK || !g_jvmti) {
		say("ERROR: this JVM offers no JVMTI 11 environment (GetEnv: %d): use OpenJDK 17", (int)r);
		return JNI_ERR;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_breakpoint_events = 1;
	caps.can_access_local_variables = 1;
	caps.can_get_bytecodes = 1;
	caps.can_get_constant_pool = 1;
	caps.can_get_line_numbers = 1;
	jvmtiError e = (*g_jvmti)->AddCapabilities(g_jvmti, &caps);
	if (e != JVMTI_ERROR_NONE) {
		say("ERROR: JVMTI capabilities (breakpoints, locals, bytecodes, "
		    "constant pool, line numbers) refused: %s", jvmti_err(e));
		return JNI_ERR;
	}
	char err[512];
	int rc = g_opt.out[0] ? zk_sink_file_open(&g_sink, g_opt.out, err, sizeof err)
			      : zk_sink_emit_open(&g_sink, err, sizeof err);
	if (rc < 0) {
		say("ERROR: %s", err);
		return JNI_ERR;
	}
	g_sink_open = true;
	if (g_opt.emit && g_opt.out[0]) {
		if ((rc = zk_sink_emit_open(&g_sink2, err, sizeof err)) < 0) {
			say("ERROR: option emit: %s", err);
			return JNI_ERR;
		}
		g_sink2_open = true;
	}
	if ((e = (*g_jvmti)->CreateRawMonitor(g_jvmti, "spectap-zk", &g_lock)) != JVMTI_ERROR_NONE) {
		say("ERROR: CreateRawMonitor: %s", jvmti_err(e));
		return JNI_ERR;
	}
	/* The shadow starts as a fresh QuorumPeer and FastLeaderElection are. */
	snprintf(g_s.state, sizeof g_s.state, "LOOKING");
	g_s.cur_epoch = g_s.acc_epoch = -1;
	g_s.pleader = g_s.pzxid = -1;
	jw_init(&g_s.recvset, NULL, 0);
	jw_init(&g_s.ooe, NULL, 0);
	jw_rawz(&g_s.recvset, "{}");
	jw_rawz(&g_s.ooe, "{}");
	jw_init(&g_rec, NULL, 0);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.Breakpoint = on_breakpoint;
	if ((e = (*g_jvmti)->SetEventCallbacks(g_jvmti, &cb, (jint)sizeof cb)) != JVMTI_ERROR_NONE ||
	    (e = (*g_jvmti)->SetEventNotificationMode(g_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT,
						      NULL)) != JVMTI_ERROR_NONE ||
	    (e = (*g_jvmti)->SetEventNotificationMode(g_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH,
						      NULL)) != JVMTI_ERROR_NONE) {
		say("ERROR: JVMTI events: %s", jvmti_err(e));
		return JNI_ERR;
	}
	return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
}
