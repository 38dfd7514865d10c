#!/usr/bin/env bash
# check_imports.sh LIB...: what numapin's agent (and tool) can call at all.
# Fails when the dynamic symbols a binary imports include a function that
# would let it
#   - end or abort the JVM it lives in: exit, _exit, _Exit, quick_exit,
#     abort, __assert_fail (an assert(), e.g. the one inside hwloc's
#     hwloc_bitmap_foreach_begin macro, which aborts on an infinite set);
#   - run a program: fork, vfork, clone, execve and the other exec*, system,
#     popen, posix_spawn;
#   - use the network: socket, connect, bind, listen, accept, send*, recv*,
#     getaddrinfo, gethostbyname;
#   - act on another process: kill, tgkill, ptrace, process_vm_writev,
#     process_vm_readv, migrate_pages, numa_migrate_pages, move_pages,
#     sched_setscheduler, setpriority;
#   - change privileges or other files' ownership and modes: setuid and the
#     like, chown, chmod, unlink, rename (unlinkat and renameat are allowed:
#     the report and the topology cache are written to a temporary file
#     renamed, or removed, relative to their directory; see docs/security.md).
# (mbind, which acts on the calling process only, is how the agent moves its
# own pages at a late attach with the whole JVM placed: core/np_memory.c,
# docs/security.md.)
# libnuma's numa_move_pages is allowed in query mode only, to ask which node
# each page of a memory file mapped more than once is on: the sources must
# call it exactly once, in core/np_memory.c's query_nodes, with NULL target
# nodes (which moves nothing), and call move_pages nowhere.
# (Linux system calls made through syscall(2) do not show here: numapin
# uses syscall(2) for gettid only, see docs/security.md.)
# Run by `make test-asan` (mk/hardening.mk) on build/libnumapin.so.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 LIB..." >&2; exit 2; }

denied='^(numa_migrate_pages|exit|_exit|_Exit|quick_exit|abort|__assert_fail|__assert_perror_fail|fork|vfork|clone|clone3|execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|system|popen|posix_spawn|posix_spawnp|socket|socketpair|connect|bind|listen|accept|accept4|send|sendto|sendmsg|recv|recvfrom|recvmsg|getaddrinfo|gethostbyname|gethostbyname2|kill|tgkill|tkill|ptrace|process_vm_writev|process_vm_readv|migrate_pages|move_pages|sched_setscheduler|setpriority|setuid|seteuid|setreuid|setresuid|setgid|setegid|setregid|setresgid|chown|fchown|lchown|chmod|fchmod|fchmodat|unlink|rename|renameat2)$'

status=0

# move_pages(2) only through query_nodes, only with NULL nodes.
src=$(cd "$(dirname "$0")/../.." && pwd)
calls=$(cd "$src" && grep -rnE '(^|[^_a-z])(numa_)?move_pages[[:space:]]*\(' core agent cli \
            --include='*.c' --include='*.h' | grep -v '^[^:]*:[0-9]*:[[:space:]]*\(/\*\|\*\)' || true)
want='core/np_memory.c:[0-9]*:    return numa_move_pages(pid, n, addrs, NULL, status, 0);$'
if [ "$(printf '%s\n' "$calls" | grep -c .)" != 1 ] || ! printf '%s\n' "$calls" | grep -q "$want"; then
    echo "check_imports: FAIL: move_pages must be called once, as numa_move_pages(pid, n, addrs, NULL, status, 0) in core/np_memory.c (query mode); the sources call:"
    printf '%s\n' "$calls"
    status=1
fi

for lib in "$@"; do
    if [ ! -f "$lib" ]; then
        echo "check_imports: $lib: no such file" >&2
        exit 1
    fi
    imports=$(nm -D --undefined-only "$lib" | awk '{ sub(/@.*/, "", $2); print $2 }' | LC_ALL=C sort -u)
    bad=$(printf '%s\n' "$imports" | grep -E "$denied" || true)
    if [ -n "$bad" ]; then
        echo "check_imports: FAIL: $lib imports $(echo $bad | tr '\n' ' ')"
        status=1
    else
        echo "check_imports: $lib: $(printf '%s\n' "$imports" | wc -l) imports, none that exits, aborts, runs a program, uses the network or acts on another process; move_pages in query mode only"
    fi
done
exit $status
