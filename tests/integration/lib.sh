# shellcheck shell=bash
# Set-up shared by the integration scripts. Source it from the repository root
# with IT_NAME (the label of the tally line) and IT_TMP (the name of the
# work directory under /tmp) set. Gives BIN, THP, WORK, STATE, the PASS/FAIL/
# SKIP counters (ok, ko, sk, finish), thp_snapshot, the host policy probes
# (pmd_anon_policy, mthp_on_under_never, memfd_huge_knobs, free_2m_mib),
# thpeval's validity rule (validity_mismatches), bounded runs (it_start,
# it_wait_for, it_finish, it_run, it_over), leftover_domains (those of the runs
# it_start began: other thpeval domains on the host are not this script's), and
# an EXIT trap that removes those domains, restores the host from the journal
# and deletes WORK. A command a check rests on that fails (every jq call, the
# commands run through it_cmd) turns the next PASS or SKIP into a FAIL that
# names it (it_cmd_failed), even from inside $(...).
BIN=${THPEVAL_BIN:-$PWD/bin/thpeval}
THP=/sys/kernel/mm/transparent_hugepage
WORK=$(mktemp -d "/tmp/$IT_TMP.XXXXXX")
STATE=$WORK/state
pass=0 fail=0 skip=0

# ---- a check whose command failed is a failure ---------------------------------------
# The commands a check's verdict rests on (jq, and what runs through it_cmd) note
# their failure in IT_CMDFAIL, a file, so that one run in $(...) (a subshell)
# counts too; the next check takes the notes: a PASS or SKIP with a note is a
# FAIL naming the command. Not pipefail: a pipeline that ends in grep -q or head
# stops its producer with SIGPIPE, a failure where nothing failed.
IT_CMDFAIL=$WORK/cmd-failed
: >"$IT_CMDFAIL"

# it_cmd_failed TEXT: note a failed command for the next check
it_cmd_failed() { printf '%s\n' "$*" >>"$IT_CMDFAIL"; }

# the notes since the last check on one line, cleared; false when there were none
it_take_cmdfail() {
	[ -s "$IT_CMDFAIL" ] || return 1
	paste -sd';' "$IT_CMDFAIL"
	: >"$IT_CMDFAIL"
}

# it_cmd CMD...: run CMD; a non-zero status is noted (and returned)
it_cmd() {
	local rc
	"$@"
	rc=$?
	[ "$rc" -eq 0 ] || it_cmd_failed "'$*' exited $rc"
	return "$rc"
}

# every jq call of a script that sources this: a status of 2 and up (usage, a
# filter that does not compile, a file it cannot read, bad JSON) is noted with
# jq's message; 1 is a verdict under -e (the last output was false or null);
# SIGPIPE (141) means its reader stopped early ($(jq ... | head -c 400))
jq() {
	local rc a e=false err
	err=$(mktemp "$WORK/jq-err.XXXXXX") || { it_cmd_failed "jq: no temporary file"; return 2; }
	command jq "$@" 2>"$err"
	rc=$?
	cat "$err" >&2
	for a in "$@"; do
		[[ $a == --exit-status || $a =~ ^-[a-zA-Z]*e[a-zA-Z]*$ ]] && e=true
	done
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 141 ] && ! { [ "$rc" -eq 1 ] && $e; }; then
		it_cmd_failed "jq exited $rc: $(head -c 300 "$err" | tr '\n' ' ')"
	fi
	rm -f "$err"
	return "$rc"
}

ok() {
	local why
	if why=$(it_take_cmdfail); then ko "$1, but a command it rests on failed: $why"; return; fi
	echo "PASS: $1"
	pass=$((pass + 1))
}
ko() {
	local why
	if why=$(it_take_cmdfail); then echo "FAIL: $1 (a command it rests on failed: $why)"; else echo "FAIL: $1"; fi
	fail=$((fail + 1))
}
sk() {
	local why
	if why=$(it_take_cmdfail); then ko "$1, but a command it rests on failed: $why"; return; fi
	echo "SKIP: $1"
	skip=$((skip + 1))
}

# the tally line; exit 1 on a failure, 77 when every check skipped (nothing on
# this machine for the script to test: tests/run-stage.sh counts it as skipped)
finish() {
	local why
	if why=$(it_take_cmdfail); then ko "a command failed after the last check: $why"; fi
	echo "$IT_NAME: $pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] || exit 1
	[ "$pass" -eq 0 ] && [ "$skip" -gt 0 ] && exit 77
	exit 0
}

# every host THP knob thpeval may touch, per-size ones included, as name=value lines
# run "$@" with THP disabled for it and its children (prctl(PR_SET_THP_DISABLE, 1);
# 157 and 41 are x86_64's prctl and PR_SET_THP_DISABLE)
nothp() {
	perl -e 'syscall(157, 41, 1, 0, 0, 0) == 0 or die "prctl(PR_SET_THP_DISABLE): $!\n";
		exec @ARGV or die "exec: $!\n"' -- "$@"
}

thp_snapshot() {
	local f
	for f in "$THP"/enabled "$THP"/defrag "$THP"/use_zero_page "$THP"/shmem_enabled \
		"$THP"/khugepaged/defrag "$THP"/hugepages-*/enabled; do
		[ -r "$f" ] && printf '%s=%s\n' "${f#"$THP"/}" "$(cat "$f")"
	done
	# the fragmented-host arm turns proactive compaction off for a while, its undo
	# lowers the per-CPU free lists' high marks for a few seconds
	for f in /proc/sys/vm/compaction_proactiveness /proc/sys/vm/percpu_pagelist_high_fraction; do
		[ -r "$f" ] && printf "%s=%s\n" "${f##*/}" "$(cat "$f")"
	done
	return 0
}

# ---- what the host's kernel may do with guest RAM (the machine's part of a check) ----
# the bracketed value of a THP knob, empty when the knob is absent
thp_mode() { sed -n 's/.*\[\([a-z_+]*\)\].*/\1/p' "$1" 2>/dev/null; }

# the 2M (PMD) anonymous THP policy QEMU's guest RAM gets once thpeval has set
# the top-level 'enabled' to $1 (a plain --host-thp value sets only that knob):
# hugepages-2048kB/enabled (Linux 6.8+) unless it is 'inherit' or absent, else $1
pmd_anon_policy() {
	local p
	p=$(thp_mode "$THP/hugepages-2048kB/enabled")
	if [ -n "$p" ] && [ "$p" != inherit ]; then echo "$p"; else echo "$1"; fi
}

# the per-size anonymous mTHP knobs that give large folios while the top-level
# 'enabled' is never (an explicit always or madvise: QEMU madvises its RAM), as
# "hugepages-64kB=always ..."; empty when every size is never or inherits
mthp_on_under_never() {
	local f m out=""
	for f in "$THP"/hugepages-*/enabled; do
		m=$(thp_mode "$f")
		case $m in always | madvise) out="$out ${f#"$THP"/}=$m" ;; esac
	done
	echo "${out# }"
}

# whether memfd guest RAM (shmem on the kernel's internal mount) may get 2M pages:
# the top-level shmem_enabled governs it (deny and force override everything);
# hugepages-2048kB/shmem_enabled (Linux 6.11+) governs anonymous shared memory
# and, unless 'inherit', is counted too, so that no kernel's reading of the two
# knobs can give huge pages where this says none. advise and within_size count:
# QEMU madvises its RAM and sizes the memfd to it. Prints the knobs that allow it
# ("shmem_enabled=advise ..."); empty when none does.
memfd_huge_knobs() {
	local top p out=""
	top=$(thp_mode "$THP/shmem_enabled")
	p=$(thp_mode "$THP/hugepages-2048kB/shmem_enabled")
	case $top in
	deny | "") echo ""; return ;;
	force | always | within_size | advise) out="shmem_enabled=$top" ;;
	esac
	case $p in always | within_size | advise) out="$out hugepages-2048kB/shmem_enabled=$p" ;; esac
	echo "${out# }"
}

# free memory in blocks of 2M or more, in MiB, from /proc/buddyinfo (all zones)
free_2m_mib() {
	local ps order
	ps=$(getconf PAGESIZE)
	order=0
	while [ $((ps << order)) -lt $((2 << 20)) ]; do order=$((order + 1)); done
	# shellcheck disable=SC2016	# awk's fields
	it_cmd awk -v o="$order" -v ps="$ps" '/zone/ { for (i = 5 + o; i <= NF; i++) kb += $i * (ps / 1024) * 2 ^ (i - 5) }
		END { print int(kb / 1024) }' /proc/buddyinfo
}

# thpeval's cell validity rule (orchestrator/model/results.c cell_validate) applied to
# the coverage samples a cell records: what .valid must say. $need is
# settings.min_coverage_pct; a host-never cell may hold up to 1% huge pages.
# shellcheck disable=SC2016
JQ_EXPECT_VALID='def expect_valid($need):
	([.coverage.host_huge_pct_samples.samples[]? | select(. != null)]) as $h
	| ([.coverage.guest_huge_pct_samples.samples[]? | select(. != null)]) as $g
	| if .reps_ok == 0 then false
	  elif ($h | length) == 0 then .target == "host"
	  elif .host_thp == "never" and ($h | max) > 1 then false
	  elif .host_thp != "never" and ($h | min) < $need and .host_state != "fragmented" then false
	  elif .target == "host" or ($g | length) == 0 then true
	  elif .guest_thp == "never" and ($g | max) > 1 then false
	  elif .guest_thp != "never" and ($g | min) < $need then false
	  else true end;'

# thpeval's tlb sweep (guest/tlb.c): walk(l2_bytes; pages_min; pages_max) is
# tlb_walk_pages, the largest power of two of pages whose one 64-byte line each
# fits in the L2, clamped to the sweep; points(pages_min; pages_max) is
# tlb_points (x4 per point, at most 15 and then pages_max); m(key) a cell's
# first sample of a metric
# shellcheck disable=SC2016,SC2034	# jq's variables; used by the scripts that source this
JQ_TLB_POINTS='def walk($l2; $lo; $hi): ([1 | recurse(. * 2; . <= ($l2 / 64 | floor))] | last) as $p
		| [([$p, $lo] | max), $hi] | min;
	def points($lo; $hi): [$lo | recurse(if . > ($hi / 4 | floor) then empty else . * 4 end)
		| select(. < $hi)] | .[:15] + [$hi];
	def m($k): .metrics[$k].samples[0];'

# the cells of results.json $1 whose .valid is not what their evidence says, as
# compact JSON ("[]" when every cell agrees)
validity_mismatches() {
	jq -c "$JQ_EXPECT_VALID"' .settings.min_coverage_pct as $m | [.cells[] | select(.valid != expect_valid($m))
		| {workload, target, host_thp, guest_thp, variant, valid, invalid_reason,
		   host: .coverage.host_huge_pct_samples.samples, guest: .coverage.guest_huge_pct_samples.samples}]' "$1"
}

# ---- running thpeval with bounds that tell a hang from a slow host ------------------
# it_start LIMIT STALL OUT ERR CMD...: start CMD in the background (pid in it_pid),
# stdout to OUT, stderr to ERR. thpeval prints its progress on stderr and ends
# guests itself (--timeout); a run whose stderr stays silent for STALL s has hung,
# one still printing after LIMIT s is on a host too slow for the check.
it_start() {
	it_limit=$1 it_stall=$2 it_out=$3 it_err=$4
	shift 4
	"$@" >"$it_out" 2>"$it_err" &
	it_pid=$! it_t0=$SECONDS it_seen=$SECONDS it_size=0 it_stop="" it_rc=""
	it_pids="$it_pids $it_pid"
}

# one look at the run: 1 (and it_stop set to hung or slow) once over a bound
it_watch() {
	local s
	s=$(stat -c %s "$it_err" 2>/dev/null || echo 0)
	[ "$s" = "$it_size" ] || { it_size=$s; it_seen=$SECONDS; }
	if [ $((SECONDS - it_seen)) -ge "$it_stall" ]; then it_stop=hung; return 1; fi
	if [ $((SECONDS - it_t0)) -ge "$it_limit" ]; then it_stop=slow; return 1; fi
	return 0
}

# it_wait_for PATTERN: 0 once stderr has a line matching PATTERN (grep -E), 1 when
# the run ended without one, 2 when it went over a bound (it_stop says which)
it_wait_for() {
	while :; do
		grep -Eq -- "$1" "$it_err" 2>/dev/null && return 0
		kill -0 "$it_pid" 2>/dev/null || return 1
		it_watch || return 2
		sleep 0.2
	done
}

# it_finish: wait for the run to end (its status in it_rc). Over a bound it gets
# SIGINT (thpeval destroys its guests and restores the host as on ^C), SIGKILL
# 60 s later (the EXIT trap's 'host restore' then puts the host back)
it_finish() {
	while kill -0 "$it_pid" 2>/dev/null; do
		if ! it_watch; then
			kill -INT "$it_pid" 2>/dev/null
			for _ in $(seq 1 300); do
				kill -0 "$it_pid" 2>/dev/null || break
				sleep 0.2
			done
			kill -KILL "$it_pid" 2>/dev/null
			break
		fi
		sleep 0.2
	done
	wait "$it_pid"
	# shellcheck disable=SC2034	# for the scripts that source this
	it_rc=$?
}

# it_run LIMIT STALL OUT ERR CMD...: it_start, then it_finish
it_run() { it_start "$@"; it_finish; }

# it_over LABEL: when the last run went over a bound, a FAIL (hung: thpeval is
# expected to end or time out its guests itself) or a SKIP (slow host) naming
# LABEL, and 0: its results are not checked. 1 when it ended by itself.
it_over() {
	case $it_stop in
	hung) ko "$1: thpeval hung: nothing on stderr for $it_stall s, stopped after $((SECONDS - it_t0)) s (last line: $(tail -1 "$it_err"))" ;;
	slow) sk "$1: still running after $it_limit s but making progress (last line: $(tail -1 "$it_err")): this host is too slow for the check" ;;
	*) return 1 ;;
	esac
	return 0
}

# the domains of this script's runs (thpeval names them thpeval-<its pid>-<index>;
# it_start records the pids): other thpeval domains on the host are not ours
it_pids=""
leftover_domains() {
	local d p all
	# a list virsh could not give is no proof that none is left
	all=$(virsh -c qemu:///system list --all --name 2>&1) ||
		{ it_cmd_failed "virsh list: $(head -c 200 <<<"$all")"; return 1; }
	for d in $(grep '^thpeval-' <<<"$all"); do
		p=${d#thpeval-}
		p=${p%%-*}
		case " $it_pids " in *" $p "*) echo "$d" ;; esac
	done
}

it_cleanup() {
	[ -n "$it_pids" ] && for d in $(leftover_domains); do
		virsh -c qemu:///system destroy "$d" >/dev/null 2>&1
		virsh -c qemu:///system undefine "$d" >/dev/null 2>&1
	done
	"$BIN" host restore --state-dir="$STATE" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap it_cleanup EXIT
