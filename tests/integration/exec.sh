#!/bin/bash
# Integration test of the exec workload and images with packages: a real Debian
# package (stress-ng) added to the guest image with --image-packages and run in a
# real TCG guest through `sh -c "..."`, its own number read from its output with
# --exec-metric, from `thpeval run` to results.json; then bad --exec values: the
# ones the host refuses (empty, blank, 5000 characters, an unterminated quote)
# exit 2 with one line before anything boots, and the ones only the guest can
# judge (a program missing from the guest, given shell metacharacters as its
# words; a command that hangs past --exec-timeout) end as failed cells with the
# workload's one-line reason. The host's THP settings are put back, no domain is
# left and nothing of --exec ever runs on the host. One guest per run (host THP
# never only), one repetition: a few minutes under TCG.
# Prints PASS/FAIL/SKIP lines and a summary line.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME="integration exec" IT_TMP=thpeval-it-exec
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "exec integration needs root (libvirtd qemu:///system, the image build, host THP writes)"
	finish
fi
PKG=stress-ng
if ! dpkg-query -W -f '${db:Status-Abbrev}' "$PKG" 2>/dev/null | grep -q '^ii'; then
	# supermin copies installed packages into the image; make deps installs it
	sk "exec integration: $PKG is not installed on this host (apt-get install -y --no-install-recommends $PKG)"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

PWNED=/tmp/thpeval-pwned
rm -f "$PWNED"
COMMON="--workloads=exec --host-thp=never --boots=1 --reps=1 --warmup=0 --cold-reps=0 --memory=512M
	--image-packages=$PKG --state-dir=$STATE --db=none"
# bounds (lib.sh it_run): the image build (supermin, then libguestfs under TCG) prints
# its steps; a guest prints its rounds: 10 silent minutes is a hang
LIMIT=1800 STALL=600

# ---- 1. stress-ng in the guest, its bogo ops/s read from its own output ----------
# sh -c is the user's explicit choice: the guest's shell joins stderr to stdout and
# runs the second command; the metric is the vm stressor's "bogo ops/s (real time)"
EXEC="sh -c \"stress-ng --vm 1 --vm-bytes 64M -t 3s --metrics-brief 2>&1; echo 'done: \$HOME; |&*'\""
METRIC='\] vm +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9.]+)'
before=$(thp_snapshot)
t0=$(date +%s)
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/r1.out" "$WORK/r1.err" "$BIN" run $COMMON --guest-thp=always --exec="$EXEC" \
	--exec-metric="$METRIC" --exec-direction=higher --out="$WORK/r1"
rc=$it_rc
t1=$(date +%s)
J=$WORK/r1/results.json
if it_over "run --workloads=exec --image-packages=$PKG"; then
	finish
elif [ "$rc" -eq 0 ] && [ -s "$J" ]; then
	ok "run --workloads=exec --exec='sh -c \"stress-ng ...\"' --image-packages=$PKG exits 0 ($((t1 - t0)) s)"
else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"
	finish
fi
[ "$before" = "$(thp_snapshot)" ] && ok "host THP settings identical before and after" ||
	ko "host THP changed: before [$before] after [$(thp_snapshot)]"
[ -z "$(leftover_domains)" ] && ok "no domain left" || ko "domains left: $(leftover_domains)"
# the image: built now (its time and size in the progress line) or cached from an earlier run
img=$(grep -Eo "guest image [0-9a-f]{16} (ready in [0-9.]+ s|is cached) \([^)]*packages $PKG\)" "$WORK/r1.err" | head -1)
[ -n "$img" ] && ok "image with $PKG: $img" || ko "no image line naming $PKG: $(grep 'guest image' "$WORK/r1.err" | head -2)"
id=$(jq -r '.image_id // empty' "$J")
if [ -n "$id" ] && "$BIN" image show --packages="$PKG" >"$WORK/show.out" 2>"$WORK/show.err" &&
	grep -q "^image $id " "$WORK/show.out" && grep -q "^  packages $PKG$" "$WORK/show.out" &&
	grep -Eq '^  size +[0-9]+ MiB on disk' "$WORK/show.out" && grep -Eq '^  build +[0-9.]+ s$' "$WORK/show.out"; then
	ok "image show --packages=$PKG: $(grep -E '^  (size|build)' "$WORK/show.out" | tr -s ' ' | paste -sd';' -)"
else
	ko "image show --packages=$PKG: $(cat "$WORK/show.out" "$WORK/show.err" | tail -4 | paste -sd'|' -)"
fi
# one cell per guest THP setting, each with its run, the number and the times
for gt in never always; do
	c=$(jq -c --arg g "$gt" '[.cells[] | select(.workload == "exec" and .guest_thp == $g)] | first' "$J")
	if [ "$c" = null ]; then
		ko "no exec cell for guest THP $gt"
		continue
	fi
	n=$(jq '[.metrics.metric_higher.samples[], .metrics.wall_s.samples[], .metrics.user_s.samples[],
		.metrics.minflt.samples[] | select(. > 0)] | length' <<<"$c")
	[ "$n" = 4 ] && [ "$(jq .reps_ok <<<"$c")" = 1 ] &&
		ok "guest THP $gt: stress-ng's bogo ops/s $(jq '.metrics.metric_higher.samples[0]' <<<"$c"), wall $(jq '.metrics.wall_s.samples[0]' <<<"$c") s, user $(jq '.metrics.user_s.samples[0]' <<<"$c") s, sys $(jq '.metrics.sys_s.samples[0]' <<<"$c") s, $(jq '.metrics.minflt.samples[0]' <<<"$c") minor faults" ||
		ko "guest THP $gt: exec cell $(jq -c '{reps_ok, reps_failed, failures, m: (.metrics | keys)}' <<<"$c")"
	echo "  guest THP $gt: valid $(jq -r '.valid' <<<"$c") $(jq -r '.invalid_reason // ""' <<<"$c")"
done
[ ! -e "$PWNED" ] && ok "nothing of --exec ran on the host" || ko "$PWNED exists"

# ---- 2. values the host refuses: exit 2, one line, nothing booted, host untouched -
LONG=$(printf '%5000s' '' | tr ' ' x)
bad() {
	local name=$1 rc lines
	shift
	before=$(thp_snapshot)
	# shellcheck disable=SC2086
	it_run 120 60 "$WORK/b.out" "$WORK/b.err" "$BIN" run $COMMON --out="$WORK/b" "$@"
	rc=$it_rc lines=$(wc -l <"$WORK/b.err")
	if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ ! -e "$WORK/b" ] && [ "$before" = "$(thp_snapshot)" ] &&
		grep -q '^thpeval: error: ' "$WORK/b.err"; then
		ok "$name: exit 2, one line: $(cut -c1-150 "$WORK/b.err")"
	else
		ko "$name: exit $rc, $lines lines: $(head -3 "$WORK/b.err" | cut -c1-200 | paste -sd'|' -)"
	fi
	rm -rf "$WORK/b"
}
bad "--exec empty" --exec=
bad "--exec blank" --exec='   '
bad "--exec 5000 characters" --exec="$LONG"
bad "--exec unterminated quote" --exec="sh -c 'sleep 1"
bad "--image-packages a name apt cannot parse" --exec=true --image-packages='stress-ng;reboot'
# a valid name apt does not know: refused at the image, naming it, before any guest
before=$(thp_snapshot)
# shellcheck disable=SC2086
it_run 300 120 "$WORK/p.out" "$WORK/p.err" "$BIN" run ${COMMON/--image-packages=$PKG/--image-packages=thpeval-no-such-pkg} \
	--exec=true --out="$WORK/p"
if [ "$it_rc" -ne 0 ] && grep -q "package 'thpeval-no-such-pkg' is unknown to apt on this host" "$WORK/p.err" &&
	[ "$before" = "$(thp_snapshot)" ] && [ -z "$(leftover_domains)" ]; then
	ok "--image-packages=thpeval-no-such-pkg: exit $it_rc, $(grep -o "package 'thpeval-no-such-pkg'[^:]*" "$WORK/p.err" | head -1)"
else
	ko "unknown package: exit $it_rc: $(tail -2 "$WORK/p.err" | paste -sd'|' -)"
fi

# ---- 3. values only the guest can judge: failed cells with the workload's reason --
# fail_cell NAME REASON ARGS...: one guest, its exec cell failed with REASON (grep -F)
fail_cell() {
	local name=$1 want=$2 c
	shift 2
	before=$(thp_snapshot)
	# shellcheck disable=SC2086
	it_run $LIMIT $STALL "$WORK/f.out" "$WORK/f.err" "$BIN" run $COMMON --guest-thp=never --out="$WORK/f" "$@"
	J=$WORK/f/results.json
	if it_over "$name"; then
		return
	fi
	c=$(jq -r '[.cells[] | select(.workload == "exec") | "\(.reps_ok)|\(.failures | join(";"))"] | first // "none"' \
		"$J" 2>/dev/null)
	if [ -s "$J" ] && [ "${c%%|*}" = 0 ] && grep -qF -- "$want" <<<"$c"; then
		ok "$name: a failed cell: ${c#*|}"
	else
		ko "$name: exit $it_rc, cell [$c], $(tail -2 "$WORK/f.err" | paste -sd'|' -)"
	fi
	[ "$before" = "$(thp_snapshot)" ] && [ -z "$(leftover_domains)" ] && [ ! -e "$PWNED" ] &&
		ok "$name: host THP identical, no domain left, nothing ran on the host" ||
		ko "$name: host THP [$before] -> [$(thp_snapshot)], domains [$(leftover_domains)], $PWNED $([ -e "$PWNED" ] && echo exists)"
	rm -rf "$WORK/f"
}
# shellcheck disable=SC2016 # literal: shell metacharacters are bytes of the words
fail_cell "a program missing in the guest, metacharacters as its words" \
	"'thpeval-no-such-program' is not in the guest's PATH: add its package with --image-packages" \
	--exec="thpeval-no-such-program 'a;b' '\$(touch $PWNED)' '|' '&&' '*' \`id\`"
t0=$(date +%s)
fail_cell "a command that hangs past --exec-timeout" "'sleep' timed out after 5 s (its process group killed)" \
	--exec='sleep 600' --exec-timeout=5s
echo "  (the hang's run: $(($(date +%s) - t0)) s)"
finish
