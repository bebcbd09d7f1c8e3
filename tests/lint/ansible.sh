#!/bin/bash
# ansible-lint on the fleet playbook and its role (make lint), at the
# production profile, offline: every violation fails. One result per file
# ansible-lint read, a file failing with its violations printed.
#
#   LINT_ANSIBLE=dir   the directory to lint (default: contrib/ansible)
# Exit 77 without ansible-lint (tools/deps.sh installs it).
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=${LINT_ANSIBLE:-contrib/ansible}
if ! command -v ansible-lint >/dev/null 2>&1; then
	echo "SKIP: ansible-lint is not installed (tools/deps.sh installs it: apt-get install ansible-lint)"
	echo "ansible-lint: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
out=$(mktemp /tmp/thpeval-ansible-lint.XXXXXX) || exit 1
# its caches and temporary files in a directory of its own, outside the tree
home=$(mktemp -d /tmp/thpeval-ansible-home.XXXXXX) || exit 1
trap 'rm -f "$out"; rm -rf "$home"' EXIT
export ANSIBLE_HOME=$home
ansible-lint --offline --nocolor --profile production -p "$dir" >"$out" 2>&1
rc=$?
cat "$out"
# "Passed with production profile: 0 failure(s), 0 warning(s) on 13 files."
# or "Failed after ...: N failure(s), N warning(s) on 13 files."
files=$(sed -n 's/.* on \([0-9][0-9]*\) files\{0,1\}\.$/\1/p' "$out" | tail -1)
bad=$(grep -E '^[^ :]+:[0-9]+(:[0-9]+)?: [a-z-]+(\[[a-z-]+\])?: ' "$out" | cut -d: -f1 | sort -u | wc -l)
if [ -z "$files" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; }; then
	echo "FAIL: ansible-lint exited $rc without its summary: it did not lint '$dir'"
	echo "ansible-lint: 0 passed, 1 failed"
	exit 1
fi
if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
	bad=1
fi
echo "ansible-lint: $((files - bad)) passed, $bad failed"
[ "$rc" -eq 0 ]
