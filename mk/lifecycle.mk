# Thread lifecycle tests: the JVM tests of tests/jvm (RescanTest,
# AttachTest, AutoGroupTest, DeniedSystemCallTest, ...) run inside `make
# test-java`; the QEMU scenarios inside `make test-numa`.  This adds what
# they need:
#
#  - $(B)/tools/seccomp-deny, the launcher that makes system calls fail with
#    EPERM under a seccomp filter (the tests find it next to the agent;
#    without it, they compile tests/jvm/tools/seccomp-deny.c themselves);
#  - `make bench-threads`: thread start+join throughput with and without
#    the agent, a markdown section on stdout (tests/bench/threads.sh);
#    `make bench` appends the same section to docs/performance.md.  Both
#    build $(B)/bench/libjvmti_floor.so first (tests/bench/floor_agent.c,
#    the "JVMTI floor": ThreadStart/ThreadEnd and GetThreadInfo, nothing
#    else), which threads.sh finds next to the agent or takes from --floor,
#    and $(B)/bench_callback (tests/bench/bench_callback.c: numapin's own
#    work per thread, without a JVM; --callback).

$(B)/tools/seccomp-deny: tests/jvm/tools/seccomp-deny.c tests/jvm/tools/seccomp_filter.h mk/lifecycle.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -o $@ $<

test-java: $(B)/tools/seccomp-deny

# Only Agent_OnLoad is exported (JNIEXPORT under -fvisibility=hidden).
$(B)/bench/libjvmti_floor.so: tests/bench/floor_agent.c mk/lifecycle.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -shared -fPIC -std=gnu11 -Wall -Wextra -fvisibility=hidden -Wl,-z,defs \
	    -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -o $@ $<

# The pair agent (tests/bench/pair_agent.c) loads two agents and lets them
# take turns; it exports Java_ThreadBench_turn besides Agent_OnLoad/OnUnload.
$(B)/bench/libjvmti_pair.so: tests/bench/pair_agent.c mk/lifecycle.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -shared -fPIC -std=gnu11 -Wall -Wextra -fvisibility=hidden -Wl,-z,defs \
	    -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -o $@ $< -ldl

bench: $(B)/bench/libjvmti_floor.so $(B)/bench/libjvmti_pair.so
bench-startup: $(B)/bench/libjvmti_floor.so

.PHONY: bench-threads
bench-threads: all $(B)/bench/libjvmti_floor.so $(B)/bench/libjvmti_pair.so $(B)/bench_callback
	bash tests/bench/threads.sh --agent $(abspath $(B)/libnumapin.so) \
	    --floor $(abspath $(B)/bench/libjvmti_floor.so) --jdk $(JDK17)
