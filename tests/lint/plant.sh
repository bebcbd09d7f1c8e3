#!/bin/bash
# make lint's checks fail on what they are there to catch: each planted in a
# copy of the tree, then the check run there as make lint runs it, which must
# fail and name the finding:
#   - an uninitialised read in a C file (analyzer.sh: analyzer-use-of-uninitialized-value)
#   - a command task without changed_when in the role (ansible.sh: no-changed-when)
#   - an unquoted variable in a script found by its #! line alone, the copy
#     not being a git checkout (shellcheck.sh: SC2086)
# A check whose tool is missing is skipped with the reason.
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0 skip=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
skipped() { echo "SKIP: $1"; skip=$((skip + 1)); }

WORK=$(mktemp -d /tmp/thpeval-lint-plant.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
T=$WORK/tree
mkdir -p "$T"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf - | tar -xf - -C "$T"
else
	tar --exclude=./build --exclude=./bin --exclude=./build-san -cf - . | tar -xf - -C "$T"
fi

# run NAME SCRIPT [VAR=VALUE...]: the check in the copy; its output in $WORK/NAME.out
run() {
	local name=$1 script=$2
	shift 2
	(cd "$T" && env -u MAKEFLAGS -u MAKELEVEL "$@" "$script") >"$WORK/$name.out" 2>&1
}
# expect NAME RC PATTERN WHAT: the check failed (not skipped) and its output names PATTERN
expect() {
	if [ "$2" -ne 0 ] && [ "$2" -ne 77 ] && grep -qE -- "$3" "$WORK/$1.out"; then
		ok "$4"
	else
		ko "$4 (exit $2; output: $WORK/$1.out)"
		sed 's/^/    /' "$WORK/$1.out" | tail -20
	fi
}

# C: a value read on a path where it was never set
if command -v "${LINT_CC:-gcc}" >/dev/null 2>&1; then
	cat >>"$T/lib/parse.c" <<'C'

int lint_plant_uninit(int x);
int lint_plant_uninit(int x)
{
	int v;

	if (x > 0)
		v = x;
	return v + 1;
}
C
	run c tests/lint/analyzer.sh O="$WORK/build" LINT_C=lib/parse.c
	expect c $? 'analyzer-use-of-uninitialized-value' "analyzer: an uninitialised read in lib/parse.c fails"
else
	skipped "analyzer: ${LINT_CC:-gcc} is not installed"
fi

# Ansible: a command that reports 'changed' whether or not it changed anything
if command -v ansible-lint >/dev/null 2>&1; then
	cat >>"$T/contrib/ansible/roles/thpeval/tasks/libvirtd.yml" <<'YAML'

- name: Thpeval | a planted command
  ansible.builtin.command:
    argv: [ls, /]
YAML
	run ansible tests/lint/ansible.sh
	expect ansible $? 'libvirtd\.yml:[0-9]+: no-changed-when' "ansible-lint: a command task without changed_when fails"
else
	skipped "ansible-lint: not installed"
fi

# shell: a path split into words and globbed; the file has no .sh name, only its #! line
if command -v shellcheck >/dev/null 2>&1; then
	printf '%s\n' '#!/bin/sh' '# planted' 'dir=$1' 'rm -rf $dir/cache' >"$T/tools/planted"
	run sh tests/lint/shellcheck.sh
	expect sh $? 'tools/planted:4:[0-9]+: .*\[SC2086\]' "shellcheck: an unquoted variable in tools/planted fails"
else
	skipped "shellcheck: not installed"
fi

echo "plant: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
