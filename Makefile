# numapin: `make` builds build/libnumapin.so and build/numapin.
# `make test` runs every test (unit, JVM on each JDK, QEMU multi-node).
# build.sh installs the Debian packages this needs, then calls make.

JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac) 2>/dev/null)) 2>/dev/null)
ifeq ($(wildcard $(JAVA_HOME)/include/jvmti.h),)
$(error JAVA_HOME ($(JAVA_HOME)) has no include/jvmti.h: install a JDK (./build.sh does) or set JAVA_HOME)
endif

JDK17 ?= /usr/lib/jvm/java-17-openjdk-amd64
JDK25 ?= /usr/lib/jvm/temurin-25-jdk-amd64
TEST_JDKS := $(foreach j,$(JDK17) $(JDK25),$(if $(wildcard $(j)/bin/java),--jdk $(j)))

CC      ?= cc
# Another build (sanitizers): make B=build/asan EXTRA_CFLAGS=... LDFLAGS=...
B       := build
EXTRA_CFLAGS ?=
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 \
           -fPIC -fvisibility=hidden -D_FORTIFY_SOURCE=2 -Icore $(EXTRA_CFLAGS)
LDFLAGS ?=
LDLIBS  := -lhwloc -lnuma -lpthread
VERSION := $(shell cat VERSION)
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

# Three layers (docs/design.md): core/ is the JVM-independent core, linked
# into both programs; agent/ the only code that sees the JVM; cli/ the
# numapin tool, never linked into the agent.
CORE_SRC  := $(wildcard core/*.c)
CORE_OBJ  := $(CORE_SRC:%.c=$(B)/%.o)
AGENT_SRC := $(wildcard agent/*.c)
AGENT_OBJ := $(AGENT_SRC:%.c=$(B)/%.o)
CLI_SRC   := $(wildcard cli/*.c)
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/%.o)
# The CLI's modules without its main(): for the unit tests and fuzzers.
CLI_LIB_OBJ := $(filter-out $(B)/cli/main.o,$(CLI_OBJ))
HEADERS   := $(wildcard core/*.h agent/*.h cli/*.h)
TEST_SRC  := $(wildcard tests/unit/*.c)

.PHONY: all test test-unit test-java test-numa demo demo-numa bench clean print-test-targets tierbench
all: $(B)/libnumapin.so $(B)/numapin

# Every test suite; mk/*.mk add theirs.  build.sh runs each in turn.
TEST_TARGETS := test-unit test-java test-numa

$(B)/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# Only agent.c includes jvmti.h; jfr.c calls JNI (jni.h).
$(B)/agent/agent.o $(B)/agent/jfr.o: CFLAGS += -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux
# The tool's version and where an installed agent is (cli/groups.c).
CLI_DEFS := -DNP_VERSION='"$(VERSION)"' $(if $(MULTIARCH),-DNP_MULTIARCH='"$(MULTIARCH)"')
$(CLI_OBJ): CFLAGS += $(CLI_DEFS) -Icli
$(CLI_OBJ): VERSION

# agent/jfr.c's Java half (numapin.agent.JfrEmit), compiled for Java 17
# and built into the library as bytes (np_jfr_emit_class), which the agent
# defines in the JVM when a recording runs.
JFR_EMIT_JAVA := agent/java/numapin/agent/JfrEmit.java
$(B)/agent/jfr_emit_class.c: $(JFR_EMIT_JAVA) Makefile
	@mkdir -p $(B)/agent/classes
	$(JAVA_HOME)/bin/javac --release 17 -Xlint:all -Werror -d $(B)/agent/classes $(JFR_EMIT_JAVA)
	{ echo '/* Generated from $(JFR_EMIT_JAVA) by make: the class file, as bytes. */'; \
	  echo 'const unsigned char np_jfr_emit_class[] = {'; \
	  od -An -v -tx1 $(B)/agent/classes/numapin/agent/JfrEmit.class | \
	    sed -e 's/^ *//' -e 's/ *$$//' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const unsigned int np_jfr_emit_class_len = sizeof np_jfr_emit_class;'; } >$@.tmp
	mv $@.tmp $@
$(B)/agent/jfr_emit_class.o: $(B)/agent/jfr_emit_class.c
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libnumapin.so: $(AGENT_OBJ) $(B)/agent/jfr_emit_class.o $(CORE_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=agent/exports.map -Wl,-z,defs -o $@ $^ $(LDLIBS)

# The CLI alone reads JSON (numapin report): jansson, never in the agent.
CLI_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
$(B)/numapin: $(CLI_OBJ) $(CORE_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

# The unit tests: the core, the CLI's modules and agent/hotspot.c (no JVM
# needed) under test.  test_hotspot.c's fake HotSpot tables are exported
# (gHotSpotVM*), as libjvm.so's are, for hotspot.c to find with dlsym.
$(B)/test_native: $(TEST_SRC) $(CORE_OBJ) $(CLI_LIB_OBJ) $(B)/agent/hotspot.o tests/unit/tests.h \
                  tests/jvm/tools/seccomp_filter.h
	$(CC) $(CFLAGS) -Icli -Iagent $(LDFLAGS) '-Wl,--export-dynamic-symbol=gHotSpotVM*' -o $@ \
	    $(TEST_SRC) $(CORE_OBJ) $(CLI_LIB_OBJ) $(B)/agent/hotspot.o $(LDLIBS) $(CLI_LDLIBS) \
	    $(shell pkg-config --libs check)


# `make test-unit REGEN=1` rewrites the expected outputs under
# tests/golden instead of comparing with them: review the diff.
TOPOLOGIES ?= $(abspath tests/golden/topologies)
EXPECTED ?= $(abspath tests/golden/expected)
# Check's per-test time limits (4 s by default) are for a quiet machine;
# these are shared and noisy.  A limit is a hang detector, not a target.
CK_TIMEOUT_MULTIPLIER ?= 5
test-unit: $(B)/test_native $(B)/numapin $(B)/libnumapin.so
	NUMAPIN_TOPOLOGIES=$(TOPOLOGIES) NUMAPIN_EXPECTED=$(EXPECTED) NUMAPIN_CLI=$(abspath $(B)/numapin) \
	    NUMAPIN_DOCS=$(abspath docs) CK_TIMEOUT_MULTIPLIER=$(CK_TIMEOUT_MULTIPLIER) \
	    $(if $(REGEN),NUMAPIN_REGEN=1) $(B)/test_native
	bash tests/unit/check_exports.sh $(B)/libnumapin.so

# TierBench, the workload of the demo and the harness tests.
HDRHISTOGRAM := /usr/share/java/hdrhistogram.jar
TIERBENCH_SRC := $(wildcard tierbench/src/numapin/tierbench/*.java)
TIERBENCH := $(B)/tierbench/classes/numapin/tierbench/TierBench.class
$(TIERBENCH): $(TIERBENCH_SRC)
	@mkdir -p $(B)/tierbench/classes
	$(JDK17)/bin/javac --release 17 -Xlint:all -cp $(HDRHISTOGRAM) -d $(B)/tierbench/classes $(TIERBENCH_SRC)
tierbench: $(TIERBENCH)

test-java: all $(TIERBENCH)
	bash tests/jvm/run.sh --agent $(abspath $(B)/libnumapin.so) $(TEST_JDKS)

test-numa: all
	bash tests/qemu/run.sh

# The heap scenarios of test-numa alone, then docs/heap.md's table from them;
# the TierBench windows with every access counted, then docs/access.md's.
HEAP_SCENARIOS := n2-heap,n2-heap-usenuma,n3-heap,n3-heap-attach,h3-large-pages,h3-thp,h3-collectors
.PHONY: heap-doc access-doc
heap-doc: all
	NUMAPIN_QEMU_ONLY=$(HEAP_SCENARIOS) bash tests/qemu/run.sh
	bash tests/qemu/doc-table.sh heap-table docs/heap.md
access-doc: all
	NUMAPIN_QEMU_ONLY=a3-access-tierbench bash tests/qemu/run.sh
	bash tests/qemu/doc-table.sh access-table docs/access.md

$(B)/bench_plan: tests/bench/bench_plan.c $(CORE_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)
$(B)/bench_callback: tests/bench/bench_callback.c $(CORE_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# Numbers go to docs/performance.md; nothing here asserts a time.  Planning
# first (tests/bench/plan.sh writes the file), then thread start and join
# with and without the agent (tests/bench/threads.sh, appended), JVM
# start-up with and without it, in pairs beside a control of known cost
# (tests/bench/startup.sh), then what numapin,
# taskset, numactl and likwid-pin bind (tests/bench/tools.sh), then Jetty's
# and Tomcat's requests/s under wrk with and without it, at saturation and
# latency at a fixed rate, beside a control (tests/bench/servers.sh).
bench: all $(B)/bench_plan $(B)/bench_callback
	NUMAPIN_TOPOLOGIES=$(TOPOLOGIES) bash tests/bench/plan.sh
	bash tests/bench/threads.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17) \
	    >> docs/performance.md
	bash tests/bench/startup.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17) \
	    >> docs/performance.md
	bash tests/bench/tools.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17) \
	    >> docs/performance.md
	bash tests/bench/servers.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17) \
	    >> docs/performance.md

# JVM start-up with and without the agent alone, on stdout.
.PHONY: bench-startup
bench-startup: all
	bash tests/bench/startup.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17)

demo: all $(TIERBENCH)
	bash tierbench/demo.sh --jdk $(JDK17)

# The 2-against-3-groups experiment on an emulated 3-node machine (QEMU).
demo-numa: all
	bash tierbench/demo-numa.sh

clean:
	rm -rf $(B)

# More targets, one concern a file (sanitizers and fuzzing, lifecycle tests);
# each may add to TEST_TARGETS.
-include mk/*.mk

test: $(TEST_TARGETS)

print-test-targets:
	@echo $(TEST_TARGETS)
