# numapin in containers made by real OCI runtimes (docs/harness/containers.md,
# docs/harness/kubernetes.md):
#
#  - `make test-containers` (part of `make test`) installs runc, podman,
#    crun and the runtimes' default seccomp profiles
#    (scripts/install-deps.sh containers) and runs tests/containers/run.sh
#    as root: JVMs in containers made by runc from an OCI bundle (as
#    containerd drives it) and by podman (JDK 17; the cpuset cases with
#    runc on JDK 25 too), their cpusets changed while they
#    run, the default seccomp profiles, group=auto across containers,
#    TierBench one pod per node, and containers.md's recipes as written;
#    it ends with `containers: N passed, M failed`.  A runtime that cannot
#    start a container here gets one line saying why and which cases did
#    not run.

.PHONY: test-containers containers-deps
containers-deps:
	bash scripts/install-deps.sh containers

test-containers: all $(TIERBENCH) containers-deps
	bash tests/containers/run.sh --agent $(abspath $(B)/libnumapin.so) --jdk $(JDK17) --jdk25 $(JDK25)

TEST_TARGETS += test-containers
