# Real Java servers under numapin, loaded by wrk (docs/harness/jetty.md,
# tomcat.md, netty.md):
#
#  - `make test-servers` (part of `make test`) installs Debian's servers and
#    wrk (scripts/install-deps.sh servers) and runs tests/servers/run.sh on
#    each JDK: every recipe's blocks as they are written, ending with
#    `servers: N passed, M failed`;
#  - `make bench` appends requests/s and wrk's latency percentiles with and
#    without the agent to docs/performance.md (tests/bench/servers.sh);
#    `make bench-servers` prints the same section only.

.PHONY: test-servers bench-servers servers-deps
servers-deps:
	bash scripts/install-deps.sh servers

test-servers: all servers-deps
	bash tests/servers/run.sh --agent $(abspath $(B)/libnumapin.so) $(TEST_JDKS)

TEST_TARGETS += test-servers

bench-servers: all servers-deps
	bash tests/bench/servers.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17)

bench: servers-deps
