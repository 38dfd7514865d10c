# The JAVA_TOOL_OPTIONS value of the block "<!-- test: NAME -->" of
# docs/harness/kubernetes.md, as written there (kubelet's $(VAR) left in):
#
#   awk -v name=NAME -f k8s-value.awk docs/harness/kubernetes.md
#
# Read by tests/containers/run.sh and tests/qemu/run.sh (for the guest).
{ line = $0; sub(/^ +/, "", line) }
line == "<!-- test: " name " -->" { want = 1; next }
want == 1 && /^ *```/ { want = 2; next }
want == 2 && /^ *```/ { exit }
want == 2 && /name: JAVA_TOOL_OPTIONS/ { jto = 1; next }
want == 2 && jto && /value:/ { sub(/^[^"]*"/, ""); sub(/"[^"]*$/, ""); print; exit }
