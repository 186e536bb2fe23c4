# spectap: `make` builds into build/, `make test` and `make demo` set everything up themselves.
VERSION    := 0.1.0
BUILD      ?= build
CC         ?= gcc
CLANG      ?= clang
WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CPPFLAGS   := -D_GNU_SOURCE -DSPECTAP_VERSION='"$(VERSION)"' -Iinclude -Ilib -Ireplay -I$(BUILD)/gen \
	      -Iprobes -Iprobes/go -Icollector -Isystems/etcd -Isystems/zookeeper -Isystems/redisraft -Iprobes/c -Iharness
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c11 $(WARN) $(CFLAGS)
LIBS       := -lprotobuf-c -lzstd -ltree-sitter
# The harness (systems described as data) reads YAML with libyaml.
HARNESS_LIBS := -lyaml
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC    := $(wildcard lib/*.c)
REPLAY_SRC := $(wildcard replay/*.c)
GO_SRC     := $(wildcard probes/go/*.c)
# Capture: the collector and the systems, linked into the tool with the probes.
COLLECTOR_CORE := collector/collect.c collector/collect_bg.c collector/spool.c
CAPTURE_SRC := $(COLLECTOR_CORE) collector/supervise.c systems/etcd/cluster.c systems/etcd/probes.c systems/etcd/etcd_programs.c \
	       systems/etcd/shape.c systems/etcd/scenario.c \
	       collector/emit_collect.c collector/emit_capture.c collector/lttng_reader.c \
	       systems/zookeeper/ensemble.c systems/zookeeper/zk_scenario.c systems/zookeeper/zk_programs.c \
	       systems/redisraft/rr_cluster.c systems/redisraft/rr_probes.c systems/redisraft/rr_shape.c systems/redisraft/rr_programs.c \
	       systems/redisraft/rr_scenario.c \
	       systems/zookeeper/sysmobench_zk.c systems/redisraft/sysmobench_rr.c
# (the last two: the systems' own SysMoBench dialects, which add themselves to lib's envelope)
TOOL_SRC   := $(wildcard tools/*.c)
# The harness: a system described as data (systems/<name>/system.yaml) run and recorded.
HARNESS_SRC := $(wildcard harness/*.c)
GRAMMAR    := $(BUILD)/grammar/package/src
GRAMMAR_OBJ := $(BUILD)/grammar/parser.o $(BUILD)/grammar/scanner.o
GEN_C      := $(BUILD)/gen/trace.pb-c.c
GEN_H      := $(BUILD)/gen/trace.pb-c.h
HEADERS    := $(wildcard include/spectap/*.h lib/*.h replay/*.h probes/*.h probes/bpf/*.h probes/go/*.h \
	      collector/*.h harness/*.h systems/etcd/*.h systems/zookeeper/*.h systems/redisraft/*.h probes/c/*.h \
	      tools/*.h) $(GEN_H)

# Two flavours of every object: plain (the tool users run) and sanitized (what tests run).
# Objects by path (build/rel/harness/cluster.o): sources in different directories may share a name.
obj        = $(patsubst %.c,$(BUILD)/$(1)/%.o,$(2))
LIB_OBJ    := $(call obj,rel,$(LIB_SRC) $(GEN_C))
REPLAY_OBJ := $(call obj,rel,$(REPLAY_SRC))
TOOL_OBJ   := $(call obj,rel,$(TOOL_SRC))
LIB_SOBJ   := $(call obj,san,$(LIB_SRC) $(GEN_C))
REPLAY_SOBJ := $(call obj,san,$(REPLAY_SRC))
TOOL_SOBJ  := $(call obj,san,$(TOOL_SRC))
GO_SOBJ    := $(call obj,san,$(GO_SRC))
CAPTURE_OBJ := $(call obj,rel,$(CAPTURE_SRC) $(GO_SRC) $(HARNESS_SRC))
CAPTURE_SOBJ := $(call obj,san,$(CAPTURE_SRC) $(GO_SRC) $(HARNESS_SRC))

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCH_BIN  := $(BUILD)/bench/bench_trace $(BUILD)/bench/bench_etcd $(BUILD)/bench/hitloop

vpath %.c lib replay probes/go collector systems/etcd systems/zookeeper systems/redisraft tools harness $(BUILD)/gen

.PHONY: all deps test unit cli fuzz fuzz-smoke bench-fuzz check-only clang-check zk-clang-check demo bench conformance clean
all: $(BUILD)/spectap $(BUILD)/spectap-check $(BUILD)/tools/putload $(BUILD)/tools/goprobe $(BUILD)/libspectap_emit.a $(BUILD)/libspectap_zk_agent.so

deps:
	@sh scripts/deps.sh
	@sh scripts/fetch-grammar.sh $(BUILD)/grammar

$(GEN_C) $(GEN_H): lib/proto/trace.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=lib/proto $<

# The put client of the etcd scenarios, built offline against Debian's packaged etcd client.
$(BUILD)/tools/putload: tools/go/putload/main.go
	@mkdir -p $(@D)
	cd tools/go/putload && GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= \
		GOCACHE=$${GOCACHE:-$$( [ -n "$$HOME" ] && go env GOCACHE || echo /tmp/spectap-gocache)} \
		go build -o $(abspath $@) .

# What a Go function's arguments and fields are, from Debian's packaged sources (go/types):
# the system descriptions' Go probes (harness/goprobes.c). Needs no package of any system.
$(BUILD)/tools/goprobe: tools/go/goprobe/main.go
	@mkdir -p $(@D)
	cd tools/go/goprobe && GO111MODULE=off GOPROXY=off GOFLAGS= \
		GOCACHE=$${GOCACHE:-$$( [ -n "$$HOME" ] && go env GOCACHE || echo /tmp/spectap-gocache)} \
		go build -o $(abspath $@) .

$(BUILD)/rel/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -c $< -o $@

$(BUILD)/libspectap.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/san/libspectap.a: $(LIB_SOBJ)
	ar rcs $@ $^

# The TLA+ grammar: generated C from npm, built once, without our warnings (not our code).
$(GRAMMAR)/parser.c:
	@sh scripts/fetch-grammar.sh $(BUILD)/grammar
$(BUILD)/grammar/%.o: $(GRAMMAR)/parser.c
	$(CC) -O1 -w -I$(GRAMMAR) -c $(GRAMMAR)/$*.c -o $@
$(REPLAY_OBJ) $(REPLAY_SOBJ): $(GRAMMAR)/parser.c

# libreplay: the TLA+ front end, evaluator and checker (knows no particular system).
$(BUILD)/libreplay.a: $(REPLAY_OBJ) $(GRAMMAR_OBJ)
	ar rcs $@ $^
$(BUILD)/san/libreplay.a: $(REPLAY_SOBJ) $(GRAMMAR_OBJ)
	ar rcs $@ $^

$(BUILD)/spectap: $(TOOL_OBJ) $(CAPTURE_OBJ) $(BUILD)/libprobes.a $(BUILD)/libreplay.a $(BUILD)/libspectap.a \
		$(BUILD)/libcbin.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS) $(HARNESS_LIBS) $(BPF_LIBS) $(LTTNG_LIBS) -lpthread -ldw -lelf -ldl
$(BUILD)/san/spectap: $(TOOL_SOBJ) $(CAPTURE_SOBJ) $(BUILD)/san/libprobes.a $(BUILD)/san/libreplay.a \
		$(BUILD)/san/libspectap.a $(BUILD)/san/libcbin.a
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $^ $(LIBS) $(HARNESS_LIBS) $(BPF_LIBS) $(LTTNG_LIBS) -lpthread -ldw -lelf -ldl

# spectap without the capture stack (no libbpf, LTTng, libdw, capstone): check, import, export,
# dump, stat and windows, for machines that only check traces. `make check-only`.
CHECKONLY_SRC := $(filter-out tools/main.c tools/cmd_record.c tools/cmd_doctor.c tools/record_%.c \
		   tools/capstone_lazy.c,$(TOOL_SRC)) harness/desc.c harness/ydoc.c harness/template.c \
		 systems/zookeeper/sysmobench_zk.c systems/redisraft/sysmobench_rr.c
$(BUILD)/checkonly/tools/main.o: tools/main.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -DSPECTAP_CHECK_ONLY -c $< -o $@
$(BUILD)/spectap-check: $(call obj,rel,$(CHECKONLY_SRC)) $(BUILD)/checkonly/tools/main.o $(BUILD)/libreplay.a \
		$(BUILD)/libspectap.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS) -lyaml -lpthread
check-only: $(BUILD)/spectap-check

# Generic uprobes (probes/): vmlinux.h, the BPF object and its skeleton are generated into
# $(BUILD)/bpf, never committed. Static pattern rules, so they win over $(BUILD)/{rel,san}/%.o.
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -I/usr/include/x86_64-linux-gnu
BPF_SRC    := $(wildcard probes/bpf/*.bpf.c)
BPF_OBJ    := $(patsubst probes/bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRC))
BPF_SKEL   := $(patsubst probes/bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRC))
PROBE_SRC  := $(wildcard probes/*.c)
PROBE_HDR  := $(wildcard probes/*.h probes/bpf/*.h)
PROBE_OBJ  := $(patsubst probes/%.c,$(BUILD)/rel/probes/%.o,$(PROBE_SRC))
PROBE_SOBJ := $(patsubst probes/%.c,$(BUILD)/san/probes/%.o,$(PROBE_SRC))
BPF_LIBS   := -lbpf -lelf -lz

$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(@D)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BPF_OBJ): $(BUILD)/bpf/%.bpf.o: probes/bpf/%.bpf.c $(PROBE_HDR) $(BUILD)/bpf/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BPF_SKEL): $(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	bpftool gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(PROBE_OBJ): $(BUILD)/rel/probes/%.o: probes/%.c $(PROBE_HDR) $(BPF_SKEL)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes -I$(BUILD)/bpf $(ALL_CFLAGS) -c $< -o $@
$(PROBE_SOBJ): $(BUILD)/san/probes/%.o: probes/%.c $(PROBE_HDR) $(BPF_SKEL)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes -I$(BUILD)/bpf $(ALL_CFLAGS) -O1 $(SAN) -c $< -o $@

$(BUILD)/libprobes.a: $(PROBE_OBJ)
	ar rcs $@ $^
$(BUILD)/san/libprobes.a: $(PROBE_SOBJ)
	ar rcs $@ $^

# C binary support (probes/c): libdw and libelf; its test probes tests/targets/c_target.
C_SRC  := $(wildcard probes/c/*.c)
C_HDR  := $(wildcard probes/c/*.h)
C_OBJ  := $(patsubst probes/c/%.c,$(BUILD)/rel/cbin/%.o,$(C_SRC))
C_SOBJ := $(patsubst probes/c/%.c,$(BUILD)/san/cbin/%.o,$(C_SRC))
C_LIBS := -ldw -lelf -lcapstone

$(C_OBJ): $(BUILD)/rel/cbin/%.o: probes/c/%.c $(C_HDR) $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes/c $(ALL_CFLAGS) -c $< -o $@
$(C_SOBJ): $(BUILD)/san/cbin/%.o: probes/c/%.c $(C_HDR) $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes/c $(ALL_CFLAGS) -O1 $(SAN) -c $< -o $@
$(BUILD)/libcbin.a: $(C_OBJ)
	ar rcs $@ $^
$(BUILD)/san/libcbin.a: $(C_SOBJ)
	ar rcs $@ $^

# The C program the cbin tests probe: ours, plain -O2 -g, not sanitized.
$(BUILD)/tests/c_target: tests/targets/c_target.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(ALL_CFLAGS) -O2 -g -o $@ $<
# Its shared-object variant: the same program as libc_target.so, run by c_target_so.
$(BUILD)/tests/libc_target.so: tests/targets/c_target.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -DC_TARGET_LIB $(ALL_CFLAGS) -O2 -g -fPIC -shared -o $@ $<
$(BUILD)/tests/c_target_so: tests/targets/c_target.c $(BUILD)/tests/libc_target.so
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -DC_TARGET_LAUNCHER $(ALL_CFLAGS) -O2 -g -o $@ $< -L$(BUILD)/tests -lc_target \
		-Wl,-rpath,'$$ORIGIN'

$(BUILD)/tests/test_cbin: tests/unit/test_cbin.c tests/unit/check.h $(BUILD)/san/libcbin.a \
		$(BUILD)/san/libprobes.a $(BUILD)/tests/c_target $(BUILD)/tests/c_target_so $(C_HDR) $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes -Iprobes/c $(ALL_CFLAGS) -O1 $(SAN) \
		-DC_TARGET_DEFAULT='"$(abspath $(BUILD))/tests/c_target"' \
		-o $@ $< $(BUILD)/san/libcbin.a $(BUILD)/san/libprobes.a $(C_LIBS) $(BPF_LIBS)

# The program the uprobe tests probe: ours, plain -O2 -g, not sanitized.
$(BUILD)/tests/uprobe_target: tests/targets/uprobe_target.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(ALL_CFLAGS) -O2 -g -o $@ $<

$(BUILD)/tests/test_uprobe_windows: tests/unit/test_uprobe_windows.c tests/unit/check.h probes/uprobe_windows.c \
		$(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< probes/uprobe_windows.c

$(BUILD)/tests/test_uprobe: tests/unit/test_uprobe.c tests/unit/check.h $(BUILD)/san/libprobes.a \
		$(BUILD)/tests/uprobe_target $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes $(ALL_CFLAGS) -O1 $(SAN) \
		-DUPROBE_TARGET_DEFAULT='"$(abspath $(BUILD))/tests/uprobe_target"' \
		-o $@ $< $(BUILD)/san/libprobes.a $(BPF_LIBS)

# The description reader (harness/desc, template, ydoc): unit test, no system run.
DESC_SRC := harness/desc.c harness/template.c harness/ydoc.c
$(BUILD)/tests/test_desc: tests/unit/test_desc.c tests/unit/check.h $(DESC_SRC) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< $(DESC_SRC) $(HARNESS_LIBS)

# Process supervisor + etcd cluster launcher: integration test on a real etcd cluster.
CLUSTER_SRC := collector/supervise.c systems/etcd/cluster.c harness/netns.c harness/net_programs.c systems/etcd/etcd_programs.c
COLLECT_SRC := $(COLLECTOR_CORE) systems/etcd/probes.c
CLUSTER_HDR := collector/supervise.h systems/etcd/cluster.h harness/netns.h
$(BUILD)/tests/test_cluster: tests/unit/test_cluster.c tests/unit/check.h $(CLUSTER_SRC) $(CLUSTER_HDR) \
		$(BUILD)/san/libspectap.a $(BUILD)/tools/putload $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector -Isystems/etcd $(ALL_CFLAGS) -O1 $(SAN) \
		-DPUTLOAD='"$(abspath $(BUILD))/tools/putload"' -o $@ $< \
		$(CLUSTER_SRC) $(BUILD)/san/libspectap.a $(LIBS)

# The emit API (include/spectap/emit.h): position-independent, for programs and agent .so files.
EMIT_SRC   := $(wildcard probes/emit/*.c)
EMIT_HDR   := include/spectap/emit.h $(wildcard probes/emit/*.h)
EMIT_OBJ   := $(patsubst probes/emit/%.c,$(BUILD)/rel/emit/%.o,$(EMIT_SRC))
EMIT_SOBJ  := $(patsubst probes/emit/%.c,$(BUILD)/san/emit/%.o,$(EMIT_SRC))
EMIT_LIBS  := -llttng-ust -llttng-ust-common -ldl -lpthread
LTTNG_LIBS := -llttng-ctl -lbabeltrace2

$(EMIT_OBJ): $(BUILD)/rel/emit/%.o: probes/emit/%.c $(EMIT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -c $< -o $@
$(EMIT_SOBJ): $(BUILD)/san/emit/%.o: probes/emit/%.c $(EMIT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -fPIC -c $< -o $@
$(BUILD)/libspectap_emit.a: $(EMIT_OBJ)
	ar rcs $@ $^
$(BUILD)/san/libspectap_emit.a: $(EMIT_SOBJ)
	ar rcs $@ $^

# The programs the emit test traces: the library linked in, and used from a shared object.
$(BUILD)/tests/emit_target: tests/targets/emit_target.c $(BUILD)/libspectap_emit.a $(EMIT_HDR)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Iinclude $(ALL_CFLAGS) -O2 -g -o $@ $< $(BUILD)/libspectap_emit.a $(EMIT_LIBS)
$(BUILD)/tests/libspectap_emit_test.so: $(BUILD)/libspectap_emit.a
	@mkdir -p $(@D)
	$(CC) -shared -o $@ -Wl,--whole-archive $< -Wl,--no-whole-archive $(EMIT_LIBS)
$(BUILD)/tests/emit_target_so: tests/targets/emit_target.c $(BUILD)/tests/libspectap_emit_test.so $(EMIT_HDR)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -DEMIT_TARGET_SHARED -Iinclude $(ALL_CFLAGS) -O2 -g -o $@ $< \
		-L$(BUILD)/tests -lspectap_emit_test -Wl,-rpath,'$$ORIGIN' -lpthread

# The emit API through USDT (BPF) and a real LTTng session (as root).
$(BUILD)/tests/test_emit: tests/unit/test_emit.c tests/unit/check.h collector/lttng_reader.c collector/lttng_reader.h \
		collector/supervise.c collector/supervise.h \
		$(BUILD)/san/libprobes.a $(BUILD)/san/libspectap_emit.a $(BUILD)/san/libspectap.a \
		$(BUILD)/tests/emit_target $(BUILD)/tests/emit_target_so $(PROBE_HDR) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector -Iprobes $(ALL_CFLAGS) -O1 $(SAN) \
		-DEMIT_TARGET_DEFAULT='"$(abspath $(BUILD))/tests/emit_target"' \
		-o $@ $< collector/lttng_reader.c collector/supervise.c $(BUILD)/san/libprobes.a $(BUILD)/san/libspectap_emit.a \
		$(BUILD)/san/libspectap.a $(BPF_LIBS) $(LTTNG_LIBS) $(EMIT_LIBS) $(LIBS)

# ZooKeeper (systems/zookeeper): the ensemble launcher and the JVMTI agent loaded into Debian's
# JVM. The agent is position-independent and never sanitized (it runs inside the JVM); JNI and
# JVMTI headers come from OpenJDK 17 (openjdk-17-jdk-headless). It links the emit library for
# its default sink (spt_emit is a weak reference in the agent: -u pulls it from the archive).
JAVA_INC      := /usr/lib/jvm/java-17-openjdk-amd64/include
ZK_AGENT_LIBS := -Wl,-u,spt_emit -Wl,-u,spt_emit_enabled $(BUILD)/libspectap_emit.a $(EMIT_LIBS)
ZK_AGENT      := $(BUILD)/libspectap_zk_agent.so
ZK_AGENT_SRC  := $(wildcard systems/zookeeper/agent/*.c)
ZK_AGENT_HDR  := $(wildcard systems/zookeeper/agent/*.h)
ZK_PARTS_SRC  := systems/zookeeper/agent/classfile.c systems/zookeeper/agent/jsonw.c \
		 systems/zookeeper/agent/sink.c systems/zookeeper/agent/hooks.c
ZK_SRC        := systems/zookeeper/ensemble.c systems/zookeeper/zk_programs.c collector/supervise.c
ZK_HDR        := systems/zookeeper/ensemble.h collector/supervise.h

# The ZooKeeper capture (issue 3): spt_emit per record through USDT and LTTng, and election time
# with and without the JVMTI agent; plain -O2, like bench_etcd.
BENCH_BIN += $(BUILD)/bench/bench_emit $(BUILD)/bench/bench_zk_election
$(BUILD)/bench/bench_emit: bench/bench_emit.c collector/lttng_reader.c collector/supervise.c \
		$(BUILD)/libprobes.a $(BUILD)/libspectap_emit.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $< collector/lttng_reader.c collector/supervise.c \
		$(BUILD)/libprobes.a $(BUILD)/libspectap_emit.a $(BPF_LIBS) $(LTTNG_LIBS) $(EMIT_LIBS)
$(BUILD)/bench/bench_zk_election: bench/bench_zk_election.c $(ZK_SRC) $(ZK_HDR) $(BUILD)/libprobes.a \
		$(PROBE_HDR) | $(ZK_AGENT)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -DZK_AGENT='"$(abspath $(ZK_AGENT))"' \
		-o $@ $< $(ZK_SRC) $(BUILD)/libprobes.a $(BPF_LIBS) -lpthread

$(ZK_AGENT): $(ZK_AGENT_SRC) $(ZK_AGENT_HDR) $(EMIT_HDR) $(BUILD)/libspectap_emit.a
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Iinclude -isystem $(JAVA_INC) -isystem $(JAVA_INC)/linux $(ALL_CFLAGS) \
		-fPIC -shared -fvisibility=hidden -Wl,-z,defs -o $@ $(ZK_AGENT_SRC) $(ZK_AGENT_LIBS)

$(BUILD)/tests/test_zk_ensemble: tests/unit/test_zk_ensemble.c tests/unit/check.h $(ZK_SRC) $(ZK_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isystems/zookeeper $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< $(ZK_SRC)

$(BUILD)/tests/test_zk_agent: tests/unit/test_zk_agent.c tests/unit/check.h $(ZK_SRC) $(ZK_HDR) \
		$(ZK_AGENT) $(BUILD)/san/libprobes.a $(BUILD)/san/libspectap.a $(PROBE_HDR) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isystems/zookeeper $(ALL_CFLAGS) -O1 $(SAN) \
		-DZK_AGENT='"$(abspath $(ZK_AGENT))"' -o $@ $< $(ZK_SRC) $(BUILD)/san/libprobes.a \
		$(BUILD)/san/libspectap.a $(BPF_LIBS) $(LIBS)

$(BUILD)/tests/test_zk_agent_parts: tests/unit/test_zk_agent_parts.c tests/unit/check.h $(ZK_PARTS_SRC) \
		$(ZK_AGENT_HDR) $(BUILD)/san/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isystems/zookeeper/agent $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< $(ZK_PARTS_SRC) \
		$(BUILD)/san/libspectap.a $(LIBS)

zk-clang-check:
	@for f in systems/zookeeper/ensemble.c $(ZK_AGENT_SRC); do \
		$(CLANG) $(CPPFLAGS) -Isystems/zookeeper -isystem $(JAVA_INC) -isystem $(JAVA_INC)/linux \
			$(ALL_CFLAGS) -fsyntax-only $$f || exit 1; done
	@echo "zk-clang-check: ok"

$(BUILD)/tests/test_netns: tests/unit/test_netns.c tests/unit/check.h harness/netns.c harness/net_programs.c \
		harness/netns.h collector/supervise.c collector/supervise.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< harness/netns.c harness/net_programs.c collector/supervise.c

# The whole probe chain on Debian's etcd: gobin sites, the uprobe program, a live cluster.
$(BUILD)/tests/test_etcd_probe: tests/unit/test_etcd_probe.c tests/unit/check.h $(CLUSTER_SRC) $(CLUSTER_HDR) \
		$(GO_SOBJ) $(BUILD)/san/libprobes.a $(BUILD)/san/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector -Isystems/etcd -Iprobes -Iprobes/go $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< \
		$(CLUSTER_SRC) $(GO_SOBJ) $(BUILD)/san/libprobes.a $(BUILD)/san/libspectap.a $(LIBS) $(BPF_LIBS) -lcapstone

# The emit collector core: emit-API records to events (order, pairing, loss), no BPF needed.
$(BUILD)/tests/test_emit_collect: tests/unit/test_emit_collect.c tests/unit/check.h collector/emit_collect.c \
		collector/emit_collect.h $(BUILD)/san/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< collector/emit_collect.c \
		$(BUILD)/san/libspectap.a $(LIBS)

# The collector core: uprobe records to spectap events in a trace, losses recorded.
$(BUILD)/tests/test_collect: tests/unit/test_collect.c tests/unit/check.h $(COLLECTOR_CORE) collector/*.h \
		$(BUILD)/san/libprobes.a $(BUILD)/san/libspectap.a $(BUILD)/tests/uprobe_target $(PROBE_HDR) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector -Iprobes $(ALL_CFLAGS) -O1 $(SAN) \
		-DUPROBE_TARGET_DEFAULT='"$(abspath $(BUILD))/tests/uprobe_target"' \
		-o $@ $< $(COLLECTOR_CORE) $(BUILD)/san/libprobes.a $(BUILD)/san/libspectap.a \
		$(BPF_LIBS) $(LIBS)

# The collector's spool of raw records.
$(BUILD)/tests/test_spool: tests/unit/test_spool.c tests/unit/check.h collector/spool.c collector/spool.h $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icollector -Iprobes $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< collector/spool.c

# Go binary support (probes/go): libelf and capstone; its test builds small Go programs offline.
$(BUILD)/tests/test_gobin: tests/unit/test_gobin.c tests/unit/check.h $(GO_SOBJ) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iprobes/go $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< systems/etcd/etcd_programs.c $(GO_SOBJ) -lelf -lcapstone

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h $(BUILD)/san/libreplay.a $(BUILD)/san/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< $(BUILD)/san/libreplay.a $(BUILD)/san/libspectap.a $(LIBS)

# Fuzz targets: our code instrumented once for all of them; the generated grammar linked as
# built (not ours to fuzz).
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJ   := $(call obj,fuzzobj,$(LIB_SRC) $(REPLAY_SRC) $(GEN_C))
$(BUILD)/fuzzobj/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -std=c11 $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_OBJ): $(GRAMMAR)/parser.c
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_dir.h $(FUZZ_OBJ) $(GRAMMAR_OBJ) $(HEADERS)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -DSPEC_DIR='"$(CURDIR)/tests/replay/raft"' -std=c11 $(WARN) $(FUZZ_FLAGS) \
		-fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(GRAMMAR_OBJ) $(LIBS)

$(BUILD)/bench/bench_trace: bench/bench_trace.c $(BUILD)/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $< $(BUILD)/libspectap.a $(LIBS)

# The library and tools must also build warning-free with clang.
clang-check: $(GEN_H) $(GRAMMAR)/parser.c $(BPF_SKEL) zk-clang-check
	@mkdir -p $(BUILD)/clang
	@for f in $(LIB_SRC) $(REPLAY_SRC) $(GO_SRC) $(PROBE_SRC) $(C_SRC) $(CAPTURE_SRC) $(TOOL_SRC) $(GEN_C) $(EMIT_SRC) collector/lttng_reader.c $(BENCH_ETCD_SRC) bench/bench_emit.c bench/bench_zk_election.c; do \
		$(CLANG) $(CPPFLAGS) -Iprobes -Icollector -I$(BUILD)/bpf $(ALL_CFLAGS) -fsyntax-only $$f || exit 1; done
	@echo "clang-check: ok"

unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

cli: $(BUILD)/spectap $(BUILD)/san/spectap $(BUILD)/tests/c_target
	@SPECTAP=$(BUILD)/san/spectap BUILD=$(BUILD) sh tests/run-cli.sh

fuzz-smoke: $(FUZZ_BIN)
	@BUILD=$(BUILD) sh tests/fuzz/run.sh 20

fuzz: $(FUZZ_BIN)
	@BUILD=$(BUILD) sh tests/fuzz/run.sh $${FUZZ_SECONDS:-600}

# What the seed corpora buy: each target from nothing and from its seeds (bench/RESULTS.md).
bench-fuzz: $(FUZZ_BIN)
	@BUILD=$(BUILD) sh bench/bench_fuzz.sh

test: deps
	@rm -rf $(BUILD)/test-results
	@$(MAKE) --no-print-directory clang-check
	@$(MAKE) --no-print-directory all unit cli fuzz-smoke
	@sh tests/summary.sh $(BUILD)

# The model checker against tlaplus/Examples' manifests (issue 17). EXAMPLES: a clone the user
# made (nothing is fetched); the table goes to docs/conformance.md.
conformance: $(BUILD)/spectap
	@[ -n "$(EXAMPLES)" ] || { echo "usage: make conformance EXAMPLES=/path/to/a/clone/of/tlaplus/Examples" >&2; exit 2; }
	@SPECTAP=$(BUILD)/spectap sh scripts/conformance.sh "$(EXAMPLES)" docs/conformance.md

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) sh scripts/demo.sh

# The cost of capturing etcd (issue 6): the capture chain of `spectap record etcd`, plain -O2.
BENCH_ETCD_SRC := bench/bench_etcd.c bench/bench_capture.c bench/bench_etcd_puts.c bench/bench_etcd_hits.c
$(BUILD)/bench/bench_etcd: $(BENCH_ETCD_SRC) bench/bench_etcd.h $(CAPTURE_OBJ) $(BUILD)/libprobes.a $(BUILD)/libcbin.a \
		$(BUILD)/libreplay.a $(BUILD)/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $(BENCH_ETCD_SRC) $(CAPTURE_OBJ) $(BUILD)/libprobes.a \
		$(BUILD)/libcbin.a $(BUILD)/libreplay.a $(BUILD)/libspectap.a $(LIBS) $(HARNESS_LIBS) $(BPF_LIBS) \
		$(LTTNG_LIBS) -lcapstone -lpthread $(C_LIBS)
# The collector alone on recorded uprobe records (`record`, then `replay`): its CPU per event.
$(BUILD)/bench/bench_etcd_replay: bench/bench_etcd_replay.c $(CAPTURE_OBJ) $(BUILD)/libprobes.a $(BUILD)/libcbin.a \
		$(BUILD)/libreplay.a $(BUILD)/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $< $(CAPTURE_OBJ) $(BUILD)/libprobes.a \
		$(BUILD)/libcbin.a $(BUILD)/libreplay.a $(BUILD)/libspectap.a $(LIBS) $(HARNESS_LIBS) $(BPF_LIBS) \
		$(LTTNG_LIBS) -lcapstone -lpthread $(C_LIBS)

# The cost of capturing RedisRaft (issue 7): write throughput with and without probes.
BENCH_BIN += $(BUILD)/bench/bench_redisraft
$(BUILD)/bench/bench_redisraft: bench/bench_redisraft.c bench/bench_capture.c bench/bench_etcd.h $(CAPTURE_OBJ) \
		$(BUILD)/libprobes.a $(BUILD)/libcbin.a $(BUILD)/libreplay.a $(BUILD)/libspectap.a $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ bench/bench_redisraft.c bench/bench_capture.c $(CAPTURE_OBJ) \
		$(BUILD)/libprobes.a $(BUILD)/libcbin.a $(BUILD)/libreplay.a $(BUILD)/libspectap.a $(LIBS) $(HARNESS_LIBS) \
		$(BPF_LIBS) $(LTTNG_LIBS) -lcapstone -lpthread $(C_LIBS)

# What a uprobe hit costs by the site's first instruction, on a C target of ours.
BENCH_BIN += $(BUILD)/bench/bench_sites $(BUILD)/bench/sites
$(BUILD)/bench/bench_sites: bench/bench_sites.c $(BUILD)/libprobes.a $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $< $(BUILD)/libprobes.a $(BPF_LIBS)
$(BUILD)/bench/sites: bench/targets/sites.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $<

# Its probe target: a Go program, built offline like putload.
$(BUILD)/bench/hitloop: bench/go/hitloop/main.go
	@mkdir -p $(@D)
	cd bench/go/hitloop && GO111MODULE=off GOPROXY=off GOFLAGS= \
		GOCACHE=$${GOCACHE:-$$( [ -n "$$HOME" ] && go env GOCACHE || echo /tmp/spectap-gocache)} \
		go build -o $(abspath $@) .

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@BUILD=$(BUILD) sh bench/run.sh
	@BUILD=$(BUILD) sh bench/bench_check.sh
	@BUILD=$(BUILD) sh bench/bench_checker.sh
	@BUILD=$(BUILD) sh bench/bench_model.sh
	@BUILD=$(BUILD) sh bench/bench_nats.sh

clean:
	rm -rf $(BUILD)
