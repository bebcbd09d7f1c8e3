#!/bin/bash
# The fleet role's install and run log (contrib/ansible/roles/thpeval) on this
# machine through a local connection, no guest booted:
#   1. thpeval_prefix is refused unless it resolves to a directory of its own:
#      '/.', '/..', '/./', '/usr/..', '/opt/../', '//usr/', '/usr', a relative
#      path and a symbolic link to /proc, each with the reason; a new directory
#      is accepted. Run in --check mode, so that a broken guard changes nothing.
#   2. unpacking (a real run, a package made here): into a new directory it
#      installs; a prefix (through a symbolic link) whose lib/ the role did not
#      unpack is refused and its lib/ kept.
#   3. thpeval.log of a run (a stand-in thpeval) is mode 0600 and holds no
#      password of a postgresql:// --db.
# Exit 77 without ansible-playbook, dpkg-deb or realpath.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
pass=0 fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
for c in ansible-playbook dpkg-deb realpath python3; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "SKIP: $c is not installed (tools/deps.sh installs ansible-core and dpkg-dev)"
		echo "ansible prefix: 0 passed, 0 failed, 1 skipped"
		exit 77
	fi
done
WORK=$(mktemp -d /tmp/thpeval-ansible-prefix.XXXXXX) || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# a package holding a stand-in thpeval
mkdir -p "$WORK/pkg/DEBIAN" "$WORK/pkg/usr/bin"
printf '%s\n' 'Package: thpeval' 'Version: 0.0-test' 'Architecture: all' 'Maintainer: test <test@invalid>' \
	'Description: stand-in' >"$WORK/pkg/DEBIAN/control"
printf '%s\n' '#!/bin/sh' 'echo "thpeval 0.0-test"' >"$WORK/pkg/usr/bin/thpeval"
chmod 0755 "$WORK/pkg/usr/bin/thpeval"
dpkg-deb --root-owner-group -b "$WORK/pkg" "$WORK/thpeval_0.0-test_all.deb" >/dev/null || { ko "dpkg-deb"; exit 1; }
# a thpeval run
printf '%s\n' '#!/bin/sh' 'echo "ran with $# arguments"' >"$WORK/fakerun"
chmod 0755 "$WORK/fakerun"
mkdir -p "$WORK/foreign/lib" "$WORK/out"
echo keep >"$WORK/foreign/lib/keep"
ln -s "$WORK/foreign" "$WORK/link"
ln -s /proc "$WORK/proclink"

# one host per prefix, all this machine
hosts() {
	echo "all:"
	echo "  vars: {ansible_connection: local, ansible_python_interpreter: $(command -v python3)}"
	echo "  hosts:"
	while [ $# -gt 1 ]; do
		printf '    %s: {thpeval_prefix: "%s"}\n' "$1" "$2"
		shift 2
	done
}
hosts dot /. dotdot /.. dotslash /./ usrdotdot /usr/.. optdotdot /opt/../ dslash //usr/ usr /usr \
	relative opt/thpeval proclink "$WORK/proclink" good "$WORK/check-good" >"$WORK/inv1.yml"
hosts good "$WORK/good" foreign "$WORK/link" >"$WORK/inv2.yml"
cat >"$WORK/inv3.yml" <<YAML
all:
  vars: {ansible_connection: local, ansible_python_interpreter: $(command -v python3)}
  hosts:
    log:
      thpeval_bin: $WORK/fakerun
      thpeval_host_db: postgresql://u:s3cretPW@db.invalid/history
      thpeval_stamp: T1
YAML

# the install step in a block: the host's outcome in $WORK/out/HOST
cat >"$WORK/install.yml" <<'YAML'
- name: Install
  hosts: all
  gather_facts: false
  vars:
    thpeval_install: prefix
    thpeval_remote_dir: "{{ work }}/remote/{{ inventory_hostname }}"
  tasks:
    - name: Install under the prefix
      block:
        - name: The role's install
          ansible.builtin.include_role: {name: thpeval, tasks_from: install}
        - name: Installed
          ansible.builtin.set_fact: {outcome: installed}
      rescue:
        - name: Refused
          ansible.builtin.set_fact:
            outcome: "refused: {{ ansible_failed_task.name }}: {{ ansible_failed_result.msg | default('') }} {{ ansible_failed_result.stderr | default('') }}"
    - name: Outcome
      ansible.builtin.copy: {content: "{{ outcome }}\n", dest: "{{ work }}/out/{{ inventory_hostname }}", mode: "0644"}
      check_mode: false
YAML
cat >"$WORK/run.yml" <<'YAML'
- name: Run
  hosts: all
  gather_facts: false
  vars:
    thpeval_remote_dir: "{{ work }}/remote/{{ inventory_hostname }}"
    thpeval_results_dir: "{{ work }}/results"
    thpeval_run_async: 60
    thpeval_run_poll: 1
  tasks:
    - name: The role's run
      ansible.builtin.include_role: {name: thpeval, tasks_from: run}
YAML
printf '[defaults]\nretry_files_enabled = false\n' >"$WORK/ansible.cfg"
play() {
	env ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_ROLES_PATH="$ROOT/contrib/ansible/roles" \
		ANSIBLE_HOME="$WORK/home" ANSIBLE_LOCAL_TEMP="$WORK/home/tmp" ANSIBLE_REMOTE_TMP="$WORK/home/rtmp" \
		ANSIBLE_ASYNC_DIR="$WORK/home/async" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
		timeout 300 ansible-playbook -e work="$WORK" -e thpeval_deb="$WORK/thpeval_0.0-test_all.deb" "$@"
}
outcome() { cat "$WORK/out/$1" 2>/dev/null || echo "(no outcome)"; }

# ---- 1. the guard, in check mode ------------------------------------------------------
play -i "$WORK/inv1.yml" "$WORK/install.yml" --check >"$WORK/check.log" 2>&1
for h in dot dotdot dotslash usrdotdot optdotdot dslash usr proclink; do
	o=$(outcome "$h")
	case "$o" in
	"refused: Thpeval | a package to install: thpeval_prefix "*", a system directory: set it to a directory of thpeval's own"*)
		ok "prefix of host '$h' refused: ${o#refused: Thpeval | a package to install: }" ;;
	*) ko "prefix of host '$h' not refused: $o" ;;
	esac
done
o=$(outcome relative)
case "$o" in
*"thpeval_prefix 'opt/thpeval' is not an absolute path"*) ok "a relative prefix refused" ;;
*) ko "a relative prefix: $o" ;;
esac
o=$(outcome good)
if [ "$o" = installed ] && [ ! -e "$WORK/check-good" ]; then
	ok "a new directory accepted, and nothing made in check mode"
else
	ko "a new directory in check mode: $o (log: $(grep -E '^(fatal|failed)' "$WORK/check.log" | head -n 2))"
fi

# ---- 2. unpacking ---------------------------------------------------------------------
rm -f "$WORK"/out/*
play -i "$WORK/inv2.yml" "$WORK/install.yml" >"$WORK/install.log" 2>&1
o=$(outcome good)
if [ "$o" = installed ] && [ -x "$WORK/good/usr/bin/thpeval" ] && [ -s "$WORK/good/.thpeval-deb.sha1" ]; then
	ok "unpacked into a new directory"
else
	ko "unpacking into a new directory: $o"
fi
o=$(outcome foreign)
if [[ "$o" == *"has a lib/ that this role did not unpack"* ]] && [ "$(cat "$WORK/foreign/lib/keep" 2>/dev/null)" = keep ]; then
	ok "a prefix whose lib/ the role did not unpack refused, its lib/ kept"
else
	ko "a prefix with someone else's lib/: $o; lib/keep: $(cat "$WORK/foreign/lib/keep" 2>&1)"
fi

# ---- 3. the run's log -----------------------------------------------------------------
play -i "$WORK/inv3.yml" "$WORK/run.yml" >"$WORK/run.log" 2>&1
logf=$WORK/results/log/T1/thpeval.log
if [ ! -f "$logf" ]; then
	ko "no thpeval.log (play: $(grep -E '^(fatal|failed)' "$WORK/run.log" | head -n 2))"
else
	mode=$(stat -c %a "$logf")
	if [ "$mode" = 600 ]; then ok "thpeval.log is mode 0600"; else ko "thpeval.log is mode $mode"; fi
	if grep -q s3cretPW "$logf"; then
		ko "thpeval.log holds the --db password: $(grep s3cretPW "$logf" | head -n 2 | tr '\n' ' ')"
	elif grep -qF -- "--db=postgresql://<not shown>" "$logf" && grep -q "^\\$ $WORK/fakerun run " "$logf" &&
		grep -qx "ran with 9 arguments" "$logf"; then
		ok "thpeval.log: the command line without the --db URI's parts, and the output"
	else
		ko "thpeval.log: $(head -c 400 "$logf" | tr '\n' '|')"
	fi
fi

echo "ansible prefix: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
