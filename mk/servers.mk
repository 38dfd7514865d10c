# Real Java servers under numapin, loaded by wrk (docs/harness/jetty.md,
# tomcat.md, netty.md):
#
#  - `make test-servers` (part of `make test`) installs Debian's servers and
#    wrk (scripts/install-deps.sh servers) and runs tests/servers/run.sh on
#    each JDK: every recipe's blocks as they are written, ending with
#    `servers: N passed, M failed`;
#  - `make bench` appends Jetty's and Tomcat's requests/s at saturation and
#    wrk's latency percentiles at a fixed rate, with and without the agent,
#    each ratio with its 90% interval beside a control of known cost, to
#    docs/performance.md (tests/bench/servers.sh, about 22 minutes);
#    `make bench-servers` prints the same section only
#    (`SERVERS_SMOKE=1 make bench-servers`: a quick run that shows it works).

.PHONY: test-servers bench-servers servers-deps
servers-deps:
	bash scripts/install-deps.sh servers

test-servers: all servers-deps
	bash tests/servers/run.sh --agent $(abspath $(B)/libnumapin.so) $(TEST_JDKS)

TEST_TARGETS += test-servers

bench-servers: all servers-deps
	bash tests/bench/servers.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17)

bench: servers-deps
