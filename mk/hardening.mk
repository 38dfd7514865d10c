# Hardening: sanitizers, fuzzing, stress.
#
#   make test-asan   what build/libnumapin.so imports (check_imports.sh); an
#                    ASan+UBSan build (gcc) of the agent, the CLI and the
#                    unit tests: unit tests (the safe-file tests of
#                    tests/unit/test_file.c among them) and the C stress test
#                    (with LeakSanitizer), then the whole JVM suite with the
#                    sanitizer runtime preloaded into every JVM; plus a TSan
#                    build of the C stress test.  Fails on any sanitizer
#                    report, including those of child JVMs whose test passed.
#   make test-fuzz   each libFuzzer target briefly (clang), on the corpus in
#                    tests/fuzz/corpus; fails on any crash.
#   make fuzz        the same for FUZZ_TIME seconds a target (default 300).
#   make test-tsan  the TSan stress test alone.
#   make test-stress the C stress test on the plain build.
#
# Knobs: ASAN_CC (gcc), TSAN_CC (gcc), FUZZ_CC (clang), STRESS_ROUNDS,
# TSAN_ROUNDS, FUZZ_TIME, FUZZ_SMOKE_TIME, ASAN_JDKS (the --jdk arguments of
# the JVM suite; default: every JDK the Makefile tests).
#
# Everything lives under build/asan, build/tsan, build/fuzz, build/hardening.
# The JVM suite under ASan writes to build/java/<jdk>-asan/ (a symlink to
# the JDK named so), never to the directories of `make test-java`.

.PHONY: test-asan test-tsan test-fuzz fuzz test-stress hardening-deps hardening-imports asan-build \
        asan-unit asan-stress asan-java tsan-stress fuzz-build

TEST_TARGETS += test-asan test-fuzz

ASAN_CC ?= gcc
TSAN_CC ?= gcc
FUZZ_CC ?= clang
STRESS_ROUNDS ?= 100
TSAN_ROUNDS ?= 60
FUZZ_TIME ?= 300
FUZZ_SMOKE_TIME ?= 20
ASAN_JDKS ?= $(TEST_JDKS)

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_B := build/asan
TSAN_B := build/tsan
FUZZ_B := build/fuzz
HARD_B := build/hardening
# The sanitizer reports of every process of a stage land in a directory of
# the stage's own (sanlog_preload), which must stay empty.
SANLOGS := $(abspath $(ASAN_B)/sanitizer-logs)

# Recursive makes of this Makefile with another build directory.
SUBMAKE = $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST))

# The fuzzers need clang and its sanitizer and libFuzzer runtimes
# (scripts/install-deps.sh fuzz).  ASan, UBSan and TSan come with gcc
# (libasan8, libubsan1, libtsan2); taskset, setpriv, unshare and mount (the
# JVM fault tests) with util-linux and mount, which every Debian has.
hardening-deps:
	@bash scripts/install-deps.sh fuzz

# ---------------------------------------------------------------- programs
# Built in whatever build directory B is (plain, asan, tsan).
STRESS_HDRS := $(HEADERS)
$(B)/stress_agent: tests/stress/stress_agent.c $(CORE_OBJ) $(STRESS_HDRS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# Not instrumented: loaded beside the sanitizer runtime.
$(HARD_B)/sanlog_preload.so: tests/stress/sanlog_preload.c
	@mkdir -p $(dir $@)
	gcc -O2 -g -shared -fPIC -Wall -Wextra -o $@ $< -ldl

test-stress: $(B)/stress_agent
	$(B)/stress_agent --rounds $(STRESS_ROUNDS)

# What the agent can call at all (docs/security.md): no exit or abort, no
# exec, no network, nothing on another process.
hardening-imports: $(B)/libnumapin.so
	bash tests/stress/check_imports.sh $(B)/libnumapin.so

# ------------------------------------------------------------- ASan+UBSan
ASAN_LIBASAN = $(shell $(ASAN_CC) -print-file-name=libasan.so)
SAN_PRELOAD = $(ASAN_LIBASAN) $(abspath $(HARD_B)/sanlog_preload.so)
# For any process of the run.  handle_segv=0, allow_user_segv_handler=1: the
# JVM's own SIGSEGV handler (implicit null checks, safepoint polls) stays in
# charge.  No leak check in the JVM (HotSpot keeps its memory to the end);
# the C programs run with detect_leaks=1.
ASAN_ENV = LD_PRELOAD="$(SAN_PRELOAD)" NUMAPIN_SANITIZER_LOGS=$(SANLOGS)/$(1) \
    ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:handle_abort=0:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:handle_segv=0:allow_user_segv_handler=1
ASAN_C_ENV = LD_PRELOAD="$(SAN_PRELOAD)" NUMAPIN_SANITIZER_LOGS=$(SANLOGS)/$(1) \
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# $(call sanlogs_sh,STAGE,WHAT): a shell fragment that sets rc=1, printing
# them, when sanitizer reports were written in the stage's directory.
sanlogs_sh = if [ -n "$$(ls -A $(SANLOGS)/$(1) 2>/dev/null)" ]; then \
	    echo "hardening: $$(ls $(SANLOGS)/$(1) | wc -l) sanitizer report files in $(SANLOGS)/$(1) after $(2); by kind:"; \
	    cat $(SANLOGS)/$(1)/* | grep -hE 'runtime error:|ERROR: [A-Za-z]+Sanitizer|WARNING: ThreadSanitizer|SUMMARY:' \
	        | sed 's/0x[0-9a-f]*/0x.../g; s/==[0-9]*==/==PID==/' | sort | uniq -c | sort -rn | head -20; \
	    for f in $$(ls $(SANLOGS)/$(1)/* | head -3); do echo "--- $$f"; head -60 "$$f"; done; \
	    echo "hardening: $(2): FAILED (sanitizer reports)"; rc=1; \
	else echo "hardening: $(2): no sanitizer report"; fi

# A fresh, empty directory for a stage's reports; world-writable (sticky)
# for the tests that run a JVM as another user.
define reset_sanlogs
	@rm -rf $(SANLOGS)/$(1) && mkdir -p $(SANLOGS)/$(1) && chmod 1777 $(SANLOGS)/$(1)
endef

# TierBench too, where the Makefile has it: the harness tests look for it
# next to the agent.
asan-build: $(HARD_B)/sanlog_preload.so
	@$(SUBMAKE) -s B=$(ASAN_B) CC=$(ASAN_CC) EXTRA_CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" \
	    $(ASAN_B)/libnumapin.so $(ASAN_B)/numapin $(ASAN_B)/test_native $(ASAN_B)/stress_agent \
	    $(if $(TIERBENCH),tierbench)

asan-unit: asan-build
	$(call reset_sanlogs,unit)
	@rc=0; $(call ASAN_C_ENV,unit) NUMAPIN_TOPOLOGIES=$(TOPOLOGIES) NUMAPIN_EXPECTED=$(EXPECTED) \
	    NUMAPIN_CLI=$(abspath $(ASAN_B)/numapin) NUMAPIN_DOCS=$(abspath docs) CK_TIMEOUT_MULTIPLIER=10 \
	    $(ASAN_B)/test_native || rc=1; \
	$(call sanlogs_sh,unit,unit tests); exit $$rc

asan-stress: asan-build
	$(call reset_sanlogs,stress)
	@rc=0; $(call ASAN_C_ENV,stress) $(ASAN_B)/stress_agent --rounds $(STRESS_ROUNDS) || rc=1; \
	$(call sanlogs_sh,stress,C stress test); exit $$rc

# The JVM suite: every JDK under a name of its own (JDK-asan), so that its
# classes, reports and kept logs do not mix with `make test-java`'s.  Reports
# are looked for in the sanitizer directory, in the console output, and in
# the logs kept of failed tests' child JVMs.
ASAN_JDK_LINKS = $(foreach j,$(filter-out --jdk,$(ASAN_JDKS)),$(abspath $(ASAN_B)/jdk/$(notdir $(j))-asan))
asan-java: asan-build
	@mkdir -p $(ASAN_B)/jdk
	@$(foreach j,$(filter-out --jdk,$(ASAN_JDKS)),ln -sfn $(j) $(ASAN_B)/jdk/$(notdir $(j))-asan;)
	$(call reset_sanlogs,java)
	@{ $(call ASAN_ENV,java) bash tests/jvm/run.sh --agent $(abspath $(ASAN_B)/libnumapin.so) \
	    $(foreach l,$(ASAN_JDK_LINKS),--jdk $(l)); echo $$? > $(ASAN_B)/java-suite.rc; } 2>&1 \
	    | tee $(ASAN_B)/java-suite.log; \
	rc=$$(cat $(ASAN_B)/java-suite.rc); \
	if grep -lE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|ThreadSanitizer' -r \
	    $(ASAN_B)/java-suite.log $(foreach l,$(ASAN_JDK_LINKS),build/java/$(notdir $(l))/runs) 2>/dev/null; then \
	    echo "hardening: sanitizer reports in the JVM suite's output (files above)"; rc=1; fi; \
	$(call sanlogs_sh,java,JVM suite); exit $$rc

# ------------------------------------------------------------------- TSan
tsan-stress: $(HARD_B)/sanlog_preload.so
	@$(SUBMAKE) -s B=$(TSAN_B) CC=$(TSAN_CC) EXTRA_CFLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=thread" $(TSAN_B)/stress_agent
	$(call reset_sanlogs,tsan)
	@rc=0; TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1:log_path=$(SANLOGS)/tsan/tsan \
	    $(TSAN_B)/stress_agent --rounds $(TSAN_ROUNDS) || rc=1; \
	$(call sanlogs_sh,tsan,TSan stress test); exit $$rc

test-tsan: tsan-stress

# Every stage runs even when one fails; the target fails if any did.
test-asan:
	@$(MAKE) --no-print-directory -k hardening-imports asan-unit asan-stress tsan-stress asan-java

# ---------------------------------------------------------------- fuzzing
# clang's libFuzzer, with ASan and UBSan (any UB aborts).  Each target runs
# on a working corpus in build/fuzz/corpus/<target> (new inputs go there)
# seeded from tests/fuzz/corpus/<target> (in the repository, read only);
# a crash, a leak, a timeout or an out-of-memory leaves its input in
# build/fuzz/artifacts/ and fails the run.
FUZZ_TARGETS := options cpulist glob text
FUZZ_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz_%)

$(B)/fuzz_options $(B)/fuzz_glob $(B)/fuzz_text: $(B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(CORE_OBJ)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# The command-line tool's real main(), renamed, for --restrict; with the
# tool's other sources.
$(B)/fuzz_cpulist: tests/fuzz/fuzz_cpulist.c tests/fuzz/fuzz_util.h cli/main.c $(CORE_OBJ) \
                   $(CLI_LIB_OBJ)
	$(CC) $(CFLAGS) $(CLI_DEFS) -Icli -Dmain=numapin_cli_main -c cli/main.c -o $(B)/fuzz_cli.o
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(B)/fuzz_cli.o $(CLI_LIB_OBJ) $(CORE_OBJ) \
	    $(LDLIBS) $(CLI_LDLIBS)

fuzz-build: hardening-deps
	@$(SUBMAKE) -s B=$(FUZZ_B) CC=$(FUZZ_CC) EXTRA_CFLAGS="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" \
	    LDFLAGS="$(FUZZ_FLAGS)" $(FUZZ_BINS)

# $(call fuzz_run,SECONDS): every target in turn; fails at the end if any did.
define fuzz_run
	@mkdir -p $(FUZZ_B)/artifacts; rc=0; \
	for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_B)/corpus/$$t; \
	    echo "=== fuzz_$$t for $(1) s"; \
	    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:handle_abort=1 UBSAN_OPTIONS=print_stacktrace=1 \
	        $(FUZZ_B)/fuzz_$$t -max_total_time=$(1) -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
	        -print_final_stats=1 -artifact_prefix=$(FUZZ_B)/artifacts/$$t- \
	        -dict=tests/fuzz/$$t.dict $(FUZZ_B)/corpus/$$t tests/fuzz/corpus/$$t \
	        > $(FUZZ_B)/fuzz_$$t.log 2>&1; then \
	        grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' $(FUZZ_B)/fuzz_$$t.log | tail -2; \
	        echo "fuzz_$$t: passed"; \
	    else \
	        tail -60 $(FUZZ_B)/fuzz_$$t.log; \
	        echo "fuzz_$$t: FAILED (input kept in $(FUZZ_B)/artifacts/, log in $(FUZZ_B)/fuzz_$$t.log)"; rc=1; \
	    fi; \
	done; exit $$rc
endef

test-fuzz: fuzz-build
	$(call fuzz_run,$(FUZZ_SMOKE_TIME))

fuzz: fuzz-build
	$(call fuzz_run,$(FUZZ_TIME))
