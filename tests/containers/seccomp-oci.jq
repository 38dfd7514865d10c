# A Docker or podman seccomp profile (moby's profiles/seccomp/default.json,
# containers-common's seccomp.json) as the OCI runtime spec's linux.seccomp,
# for the process's capabilities and architecture, as dockerd and podman
# build it before they hand config.json to the runtime:
#
#   jq --argjson caps '["CAP_CHOWN",...]' --arg arch amd64 -f seccomp-oci.jq PROFILE
#
# An entry applies when all its includes.caps are among caps and none of
# its excludes.caps is; when includes.arches (if any) names arch and
# excludes.arches does not.  minKernel is ignored (the kernels here are
# newer than any profile's).  architectures: archMap's entry for arch (Go's
# name: amd64, arm64), with its sub-architectures, as dockerd takes it.
def applies:
    ((.includes.caps // []) | all(. as $c | $caps | index($c)))
    and ((.excludes.caps // []) | any(. as $c | $caps | index($c)) | not)
    and ((.includes.arches // []) | (length == 0) or index($arch))
    and ((.excludes.arches // []) | index($arch) | not);
{
    defaultAction: .defaultAction,
    architectures: [(.archMap // [])[]
                    | select(.architecture == ({amd64: "SCMP_ARCH_X86_64", arm64: "SCMP_ARCH_AARCH64"}[$arch]))
                    | .architecture, (.subArchitectures // [])[]],
    syscalls: [.syscalls[] | select(applies)
               | {names: (.names // [.name]), action: .action, args: (.args // [])}
                 + (if .errnoRet then {errnoRet: .errnoRet} else {} end)]
}
+ (if .defaultErrnoRet then {defaultErrnoRet: .defaultErrnoRet} else {} end)
