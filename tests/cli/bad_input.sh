#!/bin/sh
# Bad input to every command and option of bin/thpeval: wrong types, values
# out of range, empty and 5000-byte strings, shell metacharacters, paths with
# spaces, unknown commands and options, missing values and arguments.
#
# Every case must: exit non-zero (2 for a usage error where the table says
# so), print nothing on stdout, print exactly one line on stderr starting
# with "thpeval: error: ", not crash, not run anything from the input (no
# /tmp/thpeval-pwned), write nothing to its working directory, leave the
# fake THP tree byte-identical and write no host journal. Everything runs
# with --sysfs-root=<fake tree> where the command takes it; `run` also gets
# an unreachable --connect so that no guest can ever start. The real
# /sys/kernel/mm/transparent_hugepage/{enabled,defrag,use_zero_page} are
# compared before and after (read only).
#
# `thpeval` with no arguments is the one exception: the usage on stderr, exit
# 2. Every command in `thpeval help` also gets unknown, empty, missing and
# flag-with-value options generated from its --help, so new commands are
# covered without editing this table.
#
# Prints "bad-input: N tried, N handled" and "N passed, N failed".
# THPEVAL_BIN=path runs another build (e.g. one made with SANITIZE=...).
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
command -v timeout >/dev/null 2>&1 || cli_skip "timeout(1) is missing"
cli_workdir

PWNED=/tmp/thpeval-pwned
if [ -e "$PWNED" ]; then
	rm -f "$PWNED" 2>/dev/null || cli_skip "$PWNED exists and cannot be removed"
fi

FAKE=$WORK/fake
STATE=$WORK/state
OUT=$WORK/out
CACHE=$WORK/cache
RUNDIR=$WORK/cwd
URI='qemu+unix:///system?socket=/nonexistent/thpeval-test.sock'
mkdir -p "$FAKE" "$RUNDIR" "$OUT" || exit 1
fake_tree "$FAKE" || { echo "cannot build a fake THP tree"; exit 1; }
mkdir -p "$WORK/dir with spaces"

LONG=$(printf '%5000s' '' | tr ' ' x)
NL='line1
line2'
# shellcheck disable=SC2016 # literal: thpeval must not expand them
META1='$(touch /tmp/thpeval-pwned)'
META2='`touch /tmp/thpeval-pwned`'
META3='x; touch /tmp/thpeval-pwned'
META4='x | touch /tmp/thpeval-pwned'
META5='x && touch /tmp/thpeval-pwned #'

fake_before=$(tree_snapshot "$FAKE/sys")
real_before=$(real_snapshot)
others_before=$(other_runs)

TRIED=0
HANDLED=0
FAKE_CHANGED=0
CASE_TIMEOUT=${CASE_TIMEOUT:-30}

# WANT: when set, the error line must contain it (grep -F); UPFRONT: when set,
# the error must come before anything starts: within UPFRONT_MS and with no
# --out directory made (run's is $OUT/r). w and u below set them for one case.
WANT=
UPFRONT=
UPFRONT_MS=${UPFRONT_MS:-2000}

# t EXPECT NAME ARGS...: run bin/thpeval ARGS; EXPECT is 2 (usage error),
# 1 (runtime error) or nz (any non-zero)
t() {
	_want=$1
	_name=$2
	shift 2
	TRIED=$((TRIED + 1))
	_why=
	_t0=$(date +%s%N)
	(cd "$RUNDIR" && exec timeout -s KILL "$CASE_TIMEOUT" "$THPEVAL" "$@") \
		>"$WORK/stdout" 2>"$WORK/stderr"
	_rc=$?
	_ms=$((($(date +%s%N) - _t0) / 1000000))
	_lines=$(wc -l <"$WORK/stderr")
	_first=$(head -n 1 "$WORK/stderr")
	if [ "$_rc" -eq 137 ]; then
		_why="killed after ${CASE_TIMEOUT}s (hung?)"
	elif [ "$_rc" -ge 128 ] || grep -qE 'Sanitizer|runtime error:' "$WORK/stderr"; then
		_why="crashed (exit $_rc)"
	elif [ "$_rc" -eq 0 ]; then
		_why="exit 0"
	elif [ "$_want" != nz ] && [ "$_rc" -ne "$_want" ]; then
		_why="exit $_rc, want $_want"
	elif [ -s "$WORK/stdout" ]; then
		_why="wrote to stdout: $(head -c 120 "$WORK/stdout")"
	elif [ "$_lines" -ne 1 ] || [ "$(wc -c <"$WORK/stderr")" -ne "$(($(printf '%s' "$_first" | wc -c) + 1))" ]; then
		_why="stderr is $_lines lines: $(head -c 200 "$WORK/stderr" | tr '\n' '|')"
	else
		case $_first in
		"thpeval: error: "*) ;;
		*) _why="stderr does not start with 'thpeval: error: ': $_first" ;;
		esac
	fi
	if [ -z "$_why" ] && [ -n "$WANT" ]; then
		case $_first in
		*"$WANT"*) ;;
		*) _why="the error does not say '$WANT': $(printf '%s' "$_first" | head -c 300)" ;;
		esac
	fi
	if [ -z "$_why" ] && [ -n "$UPFRONT" ]; then
		if [ "$_ms" -gt "$UPFRONT_MS" ]; then
			_why="took $_ms ms: not refused before anything started (limit $UPFRONT_MS ms)"
		elif [ -e "$OUT/r" ]; then
			_why="made its --out directory before refusing: $(ls -A "$OUT/r" | head -n 3 | tr '\n' ' ')"
		fi
	fi
	if [ -z "$_why" ] && [ -e "$PWNED" ]; then
		_why="$PWNED was created"
		rm -f "$PWNED"
	fi
	if [ -z "$_why" ] && [ -n "$(ls -A "$RUNDIR")" ]; then
		_why="wrote into its working directory: $(ls -A "$RUNDIR" | head -n 3 | tr '\n' ' ')"
	fi
	if [ -z "$_why" ] && [ -e "$STATE/host-journal" ]; then
		_why="wrote a host journal"
	fi
	if [ "$(tree_snapshot "$FAKE/sys")" != "$fake_before" ]; then
		[ -z "$_why" ] && _why="changed the fake THP tree"
		rm -rf "$FAKE/sys"
		fake_tree "$FAKE"
		FAKE_CHANGED=$((FAKE_CHANGED + 1))
	fi
	# start every case from the same state (<root>/run/thpeval holds the host lock)
	rm -rf "$RUNDIR" "$STATE" "$OUT" "$CACHE" "$PWNED" "$FAKE/run"
	mkdir -p "$RUNDIR" "$OUT"
	if [ -z "$_why" ]; then
		HANDLED=$((HANDLED + 1))
		ok "$_name"
	else
		not_ok "$_name: thpeval $(printf '%s ' "$@" | tr '\n' '?' | head -c 160): $_why"
	fi
}

# gives OPTION ARGS...: ARGS give --OPTION (alone or as --OPTION=VALUE)
gives() {
	_opt=$1
	shift
	for _a in "$@"; do
		case $_a in "$_opt" | "$_opt="*) return 0 ;; esac
	done
	return 1
}

# r EXPECT NAME ARGS...: `thpeval run` kept away from the host and libvirt;
# an option in ARGS replaces the default of the same name (thpeval refuses an
# option given twice)
r() {
	_want=$1
	_name=$2
	shift 2
	gives --quiet "$@" && _dq= || _dq=--quiet
	gives --sysfs-root "$@" && _ds= || _ds=--sysfs-root=$FAKE
	gives --state-dir "$@" && _dd= || _dd=--state-dir=$STATE
	gives --out "$@" && _do= || _do=--out=$OUT/r
	gives --cache-dir "$@" && _dc= || _dc=--cache-dir=$CACHE
	gives --connect "$@" && _du= || _du=--connect=$URI
	t "$_want" "run: $_name" run ${_dq:+"$_dq"} ${_ds:+"$_ds"} ${_dd:+"$_dd"} ${_do:+"$_do"} \
		${_dc:+"$_dc"} ${_du:+"$_du"} "$@"
}

# w TEXT CMD...: CMD (r, h or t) with its error line saying TEXT
w() {
	WANT=$1
	shift
	"$@"
	WANT=
}

# u TEXT CMD...: w, and refused before anything starts (no guest, no libvirt:
# the unreachable --connect would say so; no --out made; within UPFRONT_MS)
u() {
	UPFRONT=1
	w "$@"
	UPFRONT=
}

# h EXPECT NAME ARGS...: `thpeval host` on the fake tree
h() {
	_want=$1
	_name=$2
	shift 2
	t "$_want" "host: $_name" host --sysfs-root="$FAKE" --state-dir="$STATE" "$@"
}

# ---- top level ------------------------------------------------------------------
TRIED=$((TRIED + 1))
(cd "$RUNDIR" && exec "$THPEVAL") >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$WORK/stdout" ] && head -n 1 "$WORK/stderr" | grep -q '^usage: thpeval '; then
	HANDLED=$((HANDLED + 1))
	ok "no arguments: usage on stderr, exit 2"
else
	not_ok "no arguments: want the usage on stderr and exit 2, got exit $rc"
fi
t 2 "unknown command" bogus
t 2 "unknown command, metacharacters" "$META1"
t 2 "unknown command, backticks" "$META2"
t 2 "unknown command, 5000 bytes" "$LONG"
t 2 "empty command" ""
t 2 "unknown command with a space" "run host"
t 2 "unknown command with a newline" "$NL"
t 2 "unknown top-level option" --bogus
t 2 "unknown top-level short option" -x
t 2 "option before the command" --quiet run
t 2 "help: unknown command" help bogus
t 2 "help: metacharacters" help "$META3"
t 2 "help: 5000 bytes" help "$LONG"
t 2 "help: empty" help ""
t 2 "help: too many arguments" help run host
t 2 "help: option" help --bogus
t 2 "version: extra argument" version extra
t 2 "version: option" version --bogus

# ---- run: options -----------------------------------------------------------------
r 2 "unknown option" --bogus
r 2 "unknown short option" -q
r 2 "unexpected argument" extra
r 2 "unexpected argument, metacharacters" "$META1"
r 2 "flag with a value" --quiet=yes
r 2 "ambiguous abbreviation" --s=1
r 2 "missing value at the end" --reps
r 2 "host-thp: empty" --host-thp=
r 2 "host-thp: comma only" --host-thp=,
r 2 "host-thp: empty item" --host-thp=always,,never
r 2 "boots: zero" --boots=0
r 2 "boots: too many" --boots=51
r 2 "boots: not a number" --boots=four
r 2 "pin: unknown" --pin=sometimes
r 2 "gate: unknown" --gate=some
r 2 "fail-on: unknown" --fail-on=sometimes
r 2 "host-thp: trailing comma" --host-thp=always,
r 2 "guest-thp: leading comma" --guest-thp=,always
r 2 "workloads: empty item" --workloads=memset,,tlb
r 2 "host-prefault: empty item" --host-prefault=ondemand,,immediate
r 2 "host-state: trailing comma" --host-state=fresh,
r 2 "format: trailing comma" --format=text,
r 2 "host-thp: unknown" --host-thp=sometimes
r 2 "host-thp: upper case" --host-thp=ALWAYS
r 2 "host-thp: metacharacters" --host-thp="$META1"
r 2 "host-thp: pipe" --host-thp="$META4"
r 2 "host-thp: 5000 bytes" --host-thp="$LONG"
r 2 "host-thp: space" "--host-thp=always madvise"
r 2 "guest-thp: unknown" --guest-thp=sometimes
r 2 "guest-thp: empty" --guest-thp=
r 2 "guest-thp: trailing garbage" --guest-thp=always,x
r 2 "guest-thp: 5000 bytes" --guest-thp="$LONG"
r 2 "workloads: unknown" --workloads=bogus
r 2 "workloads: empty" --workloads=
r 2 "workloads: metacharacters" --workloads="$META3"
r 2 "workloads: 5000 bytes" --workloads="$LONG"
r 2 "workloads: path" --workloads=../../etc/passwd
r 2 "reps: zero" --reps=0
r 2 "reps: too many" --reps=101
r 2 "reps: negative" --reps=-1
r 2 "reps: not a number" --reps=abc
r 2 "reps: fraction" --reps=1.5
r 2 "reps: hex" --reps=0x10
r 2 "reps: leading space" "--reps= 3"
r 2 "reps: trailing garbage" --reps=3x
r 2 "reps: overflow" --reps=99999999999999999999999
r 2 "reps: empty" --reps=
r 2 "reps: 5000 digits" --reps="$(printf '%5000s' '' | tr ' ' 9)"
r 2 "warmup: too many" --warmup=11
r 2 "warmup: negative" --warmup=-1
r 2 "warmup: word" --warmup=one
r 2 "cold-reps: too many" --cold-reps=21
r 2 "cold-reps: negative" --cold-reps=-1
r 2 "cold-reps: word" --cold-reps=three
r 2 "cold-reps: empty" --cold-reps=
r 2 "host-backing: two THP backings" --host-backing=anonymous,memfd
r 2 "host-backing: unknown" --host-backing=tmpfs
r 2 "host-backing: empty" --host-backing=
r 2 "host-backing: empty item" --host-backing=anonymous,,hugetlbfs
r 2 "host-backing: an arm twice" --host-backing=anonymous,hugetlbfs-1g,hugetlbfs-1g
r 2 "host-backing: 1G arm, memory not whole GiB" --host-backing=anonymous,hugetlbfs-1g --memory=1536M
r 2 "host-backing: unknown page size" --host-backing=anonymous,hugetlbfs-16g
r 1 "host-backing: no 1G pool on this host" --host-backing=anonymous,hugetlbfs-1g
r 1 "host-backing: no 2M pool on this host" --host-backing=anonymous,hugetlbfs
r 2 "memory: too small" --memory=1M
r 2 "memory: too large" --memory=2T
r 2 "memory: bad suffix" --memory=1Z
r 2 "memory: zero" --memory=0
r 2 "memory: overflow" --memory=99999999999999999999G
r 2 "memory: suffix only" --memory=G
r 2 "memory: negative" --memory=-1G
r 2 "vcpus: zero" --vcpus=0
r 2 "vcpus: too many" --vcpus=65
r 2 "vcpus: word" --vcpus=all
r 2 "size: zero" --size=0
r 2 "size: not a multiple of 2M" --size=3M
r 2 "size: bad suffix" --size=2X
r 2 "size: does not fit memory" --memory=256M --size=256M
r 2 "size: overflow" --size=18446744073709551616
r 2 "accesses: too few" --accesses=999
r 2 "accesses: too many" --accesses=1000000001
r 2 "accesses: float" --accesses=1e6
r 2 "seed: zero" --seed=0
r 2 "seed: too large" --seed=4294967296
r 2 "seed: negative" --seed=-5
r 2 "timeout: too short" --timeout=9s
r 2 "timeout: too long" --timeout=49h
r 2 "timeout: bad unit" --timeout=10d
r 2 "timeout: negative" --timeout=-10m
r 2 "timeout: overflow" --timeout=99999999999999999999h
r 2 "min-coverage: negative" --min-coverage=-1
r 2 "min-coverage: over 100" --min-coverage=100.5
r 2 "min-coverage: nan" --min-coverage=nan
r 2 "min-coverage: inf" --min-coverage=inf
r 2 "min-coverage: percent sign" --min-coverage=90%
r 2 "min-coverage: huge exponent" --min-coverage=1e999
r 2 "accel: unknown" --accel=hvf
r 2 "accel: upper case" --accel=KVM
r 2 "accel: empty" --accel=
r 2 "accel: and-list" --accel="$META5"
r 2 "connect: empty" --connect=
r 2 "connect: 5000 bytes" --connect="$LONG"
# thpeval measures the host it runs on: a libvirt URI that reaches another host is refused
r 2 "connect: remote host over ssh" --connect=qemu+ssh://x/system
r 2 "connect: remote host over tcp" --connect=qemu+tcp://10.0.0.2/system
r 2 "connect: remote host over tls" --connect=qemu+tls://lab-7.example.org/system
r 2 "connect: remote host, no transport" --connect=qemu://host/system
r 2 "connect: user, host and port" --connect=qemu+ssh://root@x:2222/system
r 2 "connect: network transport without a host" --connect=qemu+tcp:///system
r 2 "connect: remote host after a local one" --connect=qemu:///system --connect=qemu+ssh://x/system
r 2 "out: empty" --out=
r 2 "out: 5000 bytes" --out="$OUT/$LONG"
r 2 "kernel: missing file" --kernel=/nonexistent/vmlinuz
r 2 "kernel: path with spaces" --kernel="$WORK/dir with spaces/vmlinuz"
r 2 "kernel: metacharacters" --kernel="$META1"
r 2 "kernel: 5000 bytes" --kernel="/$LONG"
r 2 "kernel: empty" --kernel=
r 2 "guest-bin: empty" --guest-bin=
r 2 "guest-bin: 5000 bytes" --guest-bin="/$LONG"
r 2 "cache-dir: empty" --cache-dir=
r 2 "cache-dir: 5000 bytes" --cache-dir="/$LONG"
r 2 "state-dir: empty" --state-dir=
r 2 "state-dir: 5000 bytes" --state-dir="/$LONG"
r 2 "sysfs-root: empty" --sysfs-root=
r 2 "sysfs-root: 5000 bytes" --sysfs-root="/$LONG"

r 2 "guests: zero" --guests=0
r 2 "guests: nine" --guests=9
r 2 "guests: not a number" --guests=two
r 2 "guests: metacharacters" --guests="$META1"
r 2 "host-state: unknown" --host-state=dirty
r 2 "host-state: comma only" --host-state=,
r 2 "host-state: 5000 bytes" --host-state="$LONG"
r 2 "host-thp: size not a power of two" --host-thp=48K:always
r 2 "host-thp: size below 8K" --host-thp=4K:always
r 2 "host-thp: size without a mode" --host-thp=64K:
r 2 "host-thp: size with never" --host-thp=64K:never
r 2 "host-thp: size without K" --host-thp=64:always
r 2 "host-thp: size with leading zero" --host-thp=064K:always
r 2 "mthp-sweep: with a value" --mthp-sweep=yes
# the exec workload's command: split on the host (never by a shell), checked before anything
SEMIS=$(printf '%400s' '' | tr ' ' ';')
r 2 "exec: the workload without --exec" --workloads=exec
r 2 "exec: empty" --workloads=exec --exec=
r 2 "exec: blank" --workloads=exec --exec="   "
r 2 "exec: 5000 bytes" --workloads=exec --exec="$LONG"
r 2 "exec: newline" --workloads=exec --exec="$NL"
r 2 "exec: unterminated quote" --workloads=exec --exec="sh -c 'x"
r 2 "exec: trailing backslash" --workloads=exec --exec='echo \'
r 2 "exec: 65 words" --workloads=exec --exec="$(printf 'w %.0s' $(seq 1 65))"
r 2 "exec: longer than the kernel command line carries" --workloads=exec --exec="sh -c '$SEMIS'"
r 2 "exec: on the bare host" --workloads=exec --exec=true --target=host
r 2 "exec: on both" --workloads=exec --exec=true --target=both
r 2 "exec: without the workload" --exec=true
r 2 "exec-metric: no capture group" --workloads=exec --exec=true --exec-metric=x --exec-direction=higher
r 2 "exec-metric: two capture groups" --workloads=exec --exec=true --exec-metric='(a)(b)' --exec-direction=lower
r 2 "exec-metric: not a regex" --workloads=exec --exec=true --exec-metric='(x' --exec-direction=higher
r 2 "exec-metric: 5000 bytes" --workloads=exec --exec=true --exec-metric="$LONG" --exec-direction=higher
r 2 "exec-metric: without a direction" --workloads=exec --exec=true --exec-metric='v ([0-9]+)'
r 2 "exec-direction: without a pattern" --workloads=exec --exec=true --exec-direction=higher
r 2 "exec-direction: unknown" --workloads=exec --exec=true --exec-metric='v ([0-9]+)' --exec-direction=up
r 2 "exec-timeout: zero" --workloads=exec --exec=true --exec-timeout=0
r 2 "exec-timeout: over a day" --workloads=exec --exec=true --exec-timeout=25h
r 2 "image-packages: upper case" --image-packages=Bash
r 2 "image-packages: like an option" --image-packages=-rf
r 2 "image-packages: metacharacters" --image-packages="$META3"
r 2 "image-packages: 5000 bytes" --image-packages="$LONG"
r 2 "image-packages: empty item" --image-packages=stress-ng,,sysbench
r 2 "image-packages: on the bare host" --image-packages=stress-ng --target=host
r 2 "guest-shmem-thp: madvise" --guest-shmem-thp=madvise
r 2 "guest-shmem-thp: empty" --guest-shmem-thp=
r 2 "guest-shmem-thp: empty item" --guest-shmem-thp=never,,always
r 2 "guest-shmem-thp: metacharacters" --guest-shmem-thp="$META3"
r 2 "guest-shmem-thp: 5000 bytes" --guest-shmem-thp="$LONG"
r 2 "guest-shmem-thp: without pgbench" --guest-shmem-thp=always --workloads=memset
r 2 "workload-opts: empty" --workload-opts=
r 2 "workload-opts: no value" --workload-opts=redis:dataset
r 2 "workload-opts: metacharacters" --workload-opts="redis:dataset=$META3"
r 2 "workload-opts: command substitution" --workload-opts="redis:dir=$META1"
r 2 "workload-opts: 5000 bytes" --workload-opts="$LONG"
r 2 "workload-opts: a run option" --workload-opts=memset:size=2M
r 2 "workload-opts: a workload not run" --workload-opts=redis:dataset=4G --workloads=memset
r 2 "workload-opts: an unknown parameter" --workload-opts=memset:nosuch=1
r 2 "workload-opts: newline" --workload-opts="$NL"
touch "$WORK/not-executable"
r 2 "emulator: missing file" --emulator=/nonexistent/qemu-system-x86_64
r 2 "emulator: not executable" --emulator="$WORK/not-executable"
r 2 "emulator: a directory" --emulator=/usr/bin
r 2 "emulator: relative path" --emulator=qemu-system-x86_64
r 2 "emulator: three" --emulator=/bin/true,/bin/true,/bin/true
r 2 "emulator: empty second" --emulator=/bin/true,
r 2 "emulator: empty first" --emulator=,/bin/true
r 2 "emulator: missing second" --emulator=/bin/true,/nonexistent/qemu
r 2 "emulator: metacharacters" --emulator="$META1"
r 2 "emulator: 5000 bytes" --emulator="/$LONG"
r 2 "emulator: on the bare host" --emulator=/bin/true --target=host
r 2 "ksm: not an arm" --ksm=maybe
r 2 "ksm: an arm twice" --ksm=on,on
r 2 "ksm: empty" --ksm=
r 2 "ksm: metacharacters" --ksm="$META1"
r 2 "ksm: on the bare host" --ksm=on --target=host
u "give --guests=2 or more" r 2 "ksm: on with one guest" --ksm=on
u "run them apart" r 2 "ksm: both arms and two emulators" --ksm=off,on --guests=2 --emulator=/bin/true,/bin/true
u "--ksm runs on a fresh host" r 2 "ksm: on a fragmented host" --ksm=on --guests=2 --host-state=fragmented

# run: accepted options that must still stop before the host or a guest
r 1 "host-thp: a size this kernel does not offer" --host-thp=4096K:always
r 1 "guests: eight of 1T will not fit" --guests=8 --memory=1T --size=2M
w "has no KSM" r 1 "ksm: a host without KSM (the fake tree)" --ksm=on --guests=2
r 1 "guest-bin: missing file" --guest-bin=/nonexistent/thpeval-guest
r 1 "guest-bin: metacharacters" --guest-bin="$META2"
r 1 "guest-bin: path with spaces" --guest-bin="$WORK/dir with spaces/g"
r 1 "connect: unreachable socket" --host-thp=always
r 1 "connect: metacharacters" --connect="$META1"
r 1 "connect: semicolon" --connect="$META3"
r 1 "sysfs-root: no THP under it" --sysfs-root="$WORK/dir with spaces"
r 1 "sysfs-root: missing" --sysfs-root=/nonexistent/root
r 1 "sysfs-root: metacharacters" --sysfs-root="$META1"
r 1 "out: metacharacters below a file" --out=/dev/null/"$META1"
r 1 "exec: metacharacters are bytes of its words, never run on the host" --workloads=exec --exec="$META3"
r 1 "exec: \$(...) is a byte string" --workloads=exec --exec="sh -c '$META1'"
r 1 "exec-metric: metacharacters are a pattern" --workloads=exec --exec=true --exec-metric="$META1" \
	--exec-direction=higher

# ---- run: options given twice, items given twice, options that need or exclude another ----------
# refused while the options are read: before any guest, libvirt or --out
u "--reps is given twice ('3', then '5')" r 2 "reps given twice" --reps=3 --reps=5
u "--reps is given twice ('3', then '3')" r 2 "reps given twice, same value" --reps=3 --reps=3
u "--quiet is given twice" r 2 "quiet given twice" --quiet --quiet
u "--out is given twice" r 2 "out given twice" --out="$OUT/a" --out="$OUT/b"
u "--workloads names 'memset' twice" r 2 "workloads: an item twice" --workloads=memset,memset
u "--host-thp names 'always' twice" r 2 "host-thp: an item twice" --host-thp=always,madvise,always
u "--guest-thp names 'madvise' twice" r 2 "guest-thp: an item twice" --guest-thp=madvise,madvise
u "--host-prefault names 'ondemand' twice" r 2 "host-prefault: an item twice" --host-prefault=ondemand,ondemand
u "--host-state names 'fresh' twice" r 2 "host-state: an item twice" --host-state=fresh,fresh
u "--host-backing names 'anonymous' twice" r 2 "host-backing: an item twice" --host-backing=anonymous,anonymous
u "--format names 'text' twice" r 2 "format: an item twice" --format=text,json,text
u "--guest-shmem-thp names 'never' twice" r 2 "guest-shmem-thp: an item twice" --guest-shmem-thp=never,never
u "--image-packages names 'gcc' twice" r 2 "image-packages: an item twice" --image-packages=gcc,gcc
u "--workload-opts names 'memset:x=1' twice" r 2 "workload-opts: an item twice" --workload-opts=memset:x=1,memset:x=1
u "--threshold needs --baseline" r 2 "threshold without baseline" --threshold=3
u "--gate needs --baseline" r 2 "gate without baseline" --gate=all
u "--guests and --target=host do not go together" r 2 "guests on the bare host" --guests=2 --target=host
u "--kernel and --target=host do not go together" r 2 "kernel on the bare host" --kernel=/nonexistent --target=host
u "--pin and --target=host do not go together" r 2 "pin on the bare host" --pin=none --target=host
u "--kcompile is for the kcompile workload" r 2 "kcompile without the workload" --kcompile=defconfig:vmlinux
u "--kcompile-timeout is for the kcompile workload" r 2 "kcompile-timeout without the workload" \
	--kcompile-timeout=30m
u "--baseline=last and --db=none do not go together" r 2 "baseline last without a database" \
	--baseline=last --db=none

# run: paths checked before anything starts (a typo must not cost a night's run)
mkfifo "$WORK/fifo" || exit 1
mkdir -p "$WORK/emptydir" "$WORK/sharedstate" || exit 1
chmod 777 "$WORK/sharedstate"
echo '{"schema_version": 1' >"$WORK/broken.json"
printf '#!/bin/sh\nexit 0\n' >"$WORK/noexec-guest"
chmod 644 "$WORK/noexec-guest"
LONGREPS=$(printf '%102400s' '' | tr ' ' 9)
u "--baseline: cannot use '/nonexistent/results.json'" r 2 "baseline missing" \
	--baseline=/nonexistent/results.json
u "'$WORK/fifo' is a FIFO, not a regular file" r 2 "baseline a FIFO" --baseline="$WORK/fifo"
u "'/dev/null' is a device, not a regular file" r 2 "baseline a device" --baseline=/dev/null
u "--baseline: cannot use '$WORK/emptydir/results.json'" r 2 "baseline a directory without results.json" \
	--baseline="$WORK/emptydir"
u "--baseline" r 2 "baseline not JSON" --baseline="$WORK/broken.json"
u "--db: '$WORK/emptydir' is a directory: give a database file" r 2 "db a directory" --db="$WORK/emptydir"
u "--kernel: '$WORK/emptydir' is a directory, not a regular file" r 2 "kernel a directory" --kernel="$WORK/emptydir"
u "--state-dir: '$WORK/broken.json' is not a directory" r 2 "state-dir a file" --state-dir="$WORK/broken.json"
u "--state-dir: cannot use '$WORK/broken.json/x'" r 2 "state-dir below a file" --state-dir="$WORK/broken.json/x"
u "--state-dir: '$WORK/sharedstate' is writable by others" r 2 "state-dir writable by others" \
	--state-dir="$WORK/sharedstate"
u "guest program '$WORK/noexec-guest' is not executable: chmod +x it" r 1 "guest-bin without its x bit" \
	--guest-bin="$WORK/noexec-guest"
u "guest program '$WORK/emptydir' is not a regular file" r 1 "guest-bin a directory" --guest-bin="$WORK/emptydir"
# a 100 KB value: the reason first, the value cut to 80 bytes
u "run: --reps: not a repetition count from 1 to 100: '99999" r 2 "reps: 100 KB" --reps="$LONGREPS"
u "... (102400 bytes)" r 2 "reps: 100 KB, its length said" --reps="$LONGREPS"
u "run: --host-thp: host THP list too long (at most 255 bytes): '99999" r 2 "host-thp: 100 KB" --host-thp="$LONGREPS"
u "run: unknown option '--$(printf '%70s' '' | tr ' ' 9)" r 2 "unknown option: 100 KB" --"$LONGREPS"
# a run that fails once started, before it measured anything, leaves no --out behind
w "cannot connect" r 1 "out: a failed start leaves none" --out="$WORK/made/by/run"
check "run: out: a failed start removes the directories it made" test ! -e "$WORK/made"

# ---- other commands: given twice, items twice, options that need or exclude another -----------
u "history: --last is given twice ('3', then '4')" t 2 "history: last given twice" history --db="$WORK/h.db" --last=3 --last=4
u "history: --gate-failed needs --import" t 2 "history: gate-failed without import" history --db="$WORK/h.db" --gate-failed
u "history: --import and --last do not go together" t 2 "history: import with last" \
	history --db="$WORK/h.db" --import --last=3 "$WORK/broken.json"
u "history: --db: '$WORK/emptydir' is a directory: give a database file" t 2 "history: db a directory" \
	history --db="$WORK/emptydir"
u "report: --threshold needs --baseline" t 2 "report: threshold without baseline" report --threshold=3 "$WORK/broken.json"
u "report: --gate needs --baseline" t 2 "report: gate without baseline" report --gate=all "$WORK/broken.json"
u "report: --format is given twice" t 2 "report: format given twice" report --format=text --format=json "$WORK/broken.json"
u "report: --format names 'text' twice" t 2 "report: format item twice" report --format=text,text "$WORK/broken.json"
u "report: --host is given twice with 'a'" t 2 "report: the same host twice" report --fleet --db="$WORK/h.db" --host=a --host=a
u "report: --fleet and --format do not go together" t 2 "report: fleet with format" report --fleet --format=html
u "report: --last needs --fleet" t 2 "report: last without fleet" report --last=3 "$WORK/broken.json"
u "report: --db: '$WORK/emptydir' is a directory" t 2 "report: fleet db a directory" report --fleet --db="$WORK/emptydir"
u "compare: --threshold is given twice" t 2 "compare: threshold given twice" compare --threshold=3 --threshold=4 a b
u "compare: --threshold: not a percentage from 0 to 1000: '99999" t 2 "compare: threshold 100 KB" \
	compare --threshold="$LONGREPS" a b
u "guest program '$WORK/noexec-guest' is not executable: chmod +x it" t 1 "image: guest-bin without its x bit" \
	image --cache-dir="$CACHE" --guest-bin="$WORK/noexec-guest" show
u "image: --force is given twice" t 2 "image: force given twice" image --force --force show
u "image: --packages names 'gcc' twice" t 2 "image: packages item twice" image --packages=gcc,make,gcc show
u "host set: 'enabled' is given twice ('enabled=never' and 'enabled=always')" h 2 "set: a knob twice" \
	set enabled=never enabled=always
u "host set: 'defrag' is given twice" h 2 "set: a knob twice, the same value" set defrag=never enabled=never defrag=never
u "host: --state-dir is given twice" t 2 "host: state-dir given twice" host --sysfs-root="$FAKE" --state-dir="$STATE" \
	--state-dir="$STATE" show

# ---- host ----------------------------------------------------------------------------
h 2 "missing subcommand"
h 2 "unknown subcommand" bogus
h 2 "unknown subcommand, metacharacters" "$META1"
h 2 "unknown subcommand, 5000 bytes" "$LONG"
h 2 "empty subcommand" ""
h 2 "unknown option" --bogus show
h 2 "flag-style value for an option" --sysfs-root
h 2 "show: extra argument" show extra
h 2 "restore: extra argument" restore extra
h 2 "set: nothing to set" set
h 2 "set: no '='" set enabled
h 2 "set: empty key" set =never
h 2 "set: empty value" set enabled=
h 2 "set: unknown key" set bogus=1
h 2 "set: unknown key, metacharacters" set "$META1=1"
h 2 "set: key with path traversal" set ../../../../tmp/x=1
h 2 "set: absolute key" set /etc/passwd=x
h 2 "set: key with a space" "set" "enabled =never"
h 2 "set: 5000-byte key" set "$LONG=1"
h 2 "set: 5000-byte value" set "enabled=$LONG"
h 2 "set: bad choice" set enabled=sometimes
h 2 "set: choice upper case" set enabled=ALWAYS
h 2 "set: bracketed choice" set "enabled=[never]"
h 2 "set: value metacharacters" set "enabled=$META1"
h 2 "set: value backticks" set "enabled=$META2"
h 2 "set: value semicolon" set "enabled=$META3"
h 2 "set: value pipe" set "enabled=$META4"
h 2 "set: value and-list" set "enabled=$META5"
h 2 "set: value with a newline" set "enabled=never
always"
h 2 "set: value with a space" set "enabled=never always"
h 2 "set: number for a choice" set enabled=1
h 2 "set: number out of range" set khugepaged/max_ptes_none=99999999
h 2 "set: negative number" set khugepaged/pages_to_scan=-1
h 2 "set: number overflow" set khugepaged/pages_to_scan=99999999999999999999999
h 2 "set: word for a number" set khugepaged/pages_to_scan=many
h 2 "set: zero-page not 0/1" set use_zero_page=2
h 2 "set: unknown mTHP size" set hugepages-3kB/enabled=never
h 2 "set: one bad pair among good ones" set defrag=never enabled=bogus
h 2 "set: duplicate-looking key" set enabled=never enabled=bogus
h 2 "set: unknown option after the subcommand" set --thpeval-bogus enabled=never
h 2 "set: empty option value after the pairs" set enabled=never --state-dir=
h 2 "set: missing option value after the pairs" set enabled=never --state-dir
h 2 "set: '--' then an option as a pair" set enabled=never -- --sysfs-root=/
h 2 "show: unknown option after the subcommand" show --thpeval-bogus
h 2 "restore: empty option value after the subcommand" restore --state-dir=
t 2 "host: sysfs-root empty" host --sysfs-root= show
t 2 "host: state-dir empty" host --sysfs-root="$FAKE" --state-dir= restore
t 2 "host: sysfs-root 5000 bytes" host --sysfs-root="/$LONG" show
t 2 "host: state-dir 5000 bytes" host --sysfs-root="$FAKE" --state-dir="/$LONG" restore
t 1 "host: show, sysfs-root missing" host --sysfs-root=/nonexistent/root show
t 1 "host: show, sysfs-root with spaces" host --sysfs-root="$WORK/dir with spaces" show
t 1 "host: show, sysfs-root metacharacters" host --sysfs-root="$META1" show
t nz "host: set, sysfs-root without THP" host --sysfs-root="$WORK/dir with spaces" set enabled=never
t 1 "host: restore, sysfs-root missing" host --sysfs-root=/nonexistent/root --state-dir="$FAKE" restore
t 1 "host: restore, state-dir is a file" host --sysfs-root="$FAKE" --state-dir="$FAKE/$THP_REL/enabled" restore

# ---- image (stopped early by a missing kernel or guest program) ------------------------------
t 2 "image: missing subcommand" image
t 2 "image: unknown subcommand" image bogus
t 2 "image: metacharacters" image "$META1"
t 2 "image: two subcommands" image build show
t 2 "image: unknown option" image --bogus show
t 2 "image: force with a value" image --force=1 show
t 2 "image: unknown option after the subcommand" image show --thpeval-bogus
t 2 "image: kernel empty" image --kernel= show
t 2 "image: kernel 5000 bytes" image --kernel="/$LONG" show
t 2 "image: cache-dir 5000 bytes" image --cache-dir="/$LONG" --kernel=/nonexistent show
t 2 "image: guest-bin 5000 bytes" image --guest-bin="/$LONG" show
t 1 "image: kernel missing" image --cache-dir="$CACHE" --kernel=/nonexistent/vmlinuz show
t 1 "image: kernel metacharacters" image --cache-dir="$CACHE" --kernel="$META1" build
t 1 "image: kernel with spaces" image --cache-dir="$CACHE" --kernel="$WORK/dir with spaces/vmlinuz" build
t 1 "image: guest-bin missing" image --cache-dir="$CACHE" --guest-bin=/nonexistent/g show
t 2 "image: packages upper case" image --packages=Bash show
t 2 "image: packages metacharacters" image --packages="$META1" build
t 2 "image: packages 5000 bytes" image --packages="$LONG" build

# ---- every command in `thpeval help`, including ones this table does not know -------------------
cmds=$("$THPEVAL" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
for c in $cmds; do
	"$THPEVAL" "$c" --help >"$WORK/stdout" 2>"$WORK/stderr"
	check "$c --help: exit 0, help on stdout, nothing on stderr" \
		test $? -eq 0 -a -s "$WORK/stdout" -a ! -s "$WORK/stderr"
	t 2 "$c: unknown option" "$c" --thpeval-bogus
	t 2 "$c: unknown short option" "$c" -Z
	# each option from its --help: empty value, missing value, value for a flag
	for o in $("$THPEVAL" "$c" --help 2>/dev/null | sed -n 's/^  --\([a-z0-9-]*\)\(=\)\{0,1\}.*/\1\2/p'); do
		case $o in
		help) continue ;;
		*=)
			o=${o%=}
			t 2 "$c: --$o empty" "$c" --"$o"=
			t 2 "$c: --$o without a value" "$c" --"$o"
			;;
		*)
			t 2 "$c: --$o=1 for a flag" "$c" --"$o"=1
			;;
		esac
	done
done

# ---- the host itself ------------------------------------------------------------------------
check "fake THP tree never changed" test "$FAKE_CHANGED" -eq 0
real_after=$(real_snapshot)
if [ "$real_after" = "$real_before" ]; then
	ok "real THP settings unchanged"
elif [ -n "$others_before$(other_runs)" ]; then
	echo "note: the real THP settings changed while another 'thpeval run' was active" \
		"(pid $others_before $(other_runs)); not counted"
else
	not_ok "real THP settings changed: before: $real_before; after: $real_after"
fi
check "no $PWNED" test ! -e "$PWNED"

echo "bad-input: $TRIED tried, $HANDLED handled"
cli_summary
