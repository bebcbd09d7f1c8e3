#!/bin/bash
# The orchestrator's own tree through tools/layers.sh: no include points up a
# layer (cmd -> run -> report -> history -> analysis -> model -> virt, host, images, lib)
# and no include circle among its modules. The rule's own tests, on planted
# fixture trees, are tests/tools/test_layers.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
	echo "SKIP: no C compiler to list the includes"
	echo "layers-tree: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
out=$(tools/layers.sh 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
	echo "PASS: $(tail -n 1 <<<"$out")"
	echo "layers-tree: 1 passed, 0 failed, 0 skipped"
	exit 0
fi
echo "$out" | sed 's/^/FAIL: /'
echo "layers-tree: 0 passed, 1 failed, 0 skipped"
exit 1
