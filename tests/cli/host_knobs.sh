#!/bin/sh
# `run --target=host --workloads=hzp --workload-opts=hzp:zero-page=0` on a
# fake sysfs root: thpeval sets use_zero_page itself, through its journal
# and under that root, for the workload's repetitions, and puts it back
# after; the workload is never given --zero-page (it would write the real
# knob itself). The guest program is a stand-in that logs its argv and the
# fake knob and fails, so nothing is measured and no real knob can change;
# the real knobs are compared before and after (read only).
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
command -v timeout >/dev/null 2>&1 || cli_skip "timeout(1) is missing"
[ -x "$ROOT/bin/thpeval-guest" ] || cli_skip "bin/thpeval-guest is not built (run 'make')"
cli_workdir

FAKE=$WORK/fake
STATE=$WORK/state
LOG=$WORK/log
fake_tree "$FAKE" || { echo "cannot build a fake THP tree"; exit 1; }
echo 1 >"$FAKE/$THP_REL/use_zero_page"
mkdir -p "$STATE" && chmod 700 "$STATE" || exit 1
cat >"$WORK/guest" <<EOS
#!/bin/sh
if [ "\$1" = workload ]; then
	echo "argv: \$*" >>"$LOG"
	echo "knob: \$(cat "$FAKE/$THP_REL/use_zero_page")" >>"$LOG"
	exit 1
fi
exec "$ROOT/bin/thpeval-guest" "\$@"
EOS
chmod 755 "$WORK/guest"
real_before=$(real_snapshot)

(cd "$WORK" && timeout 120 "$THPEVAL" run --target=host --workloads=hzp --workload-opts=hzp:zero-page=0 \
	--sysfs-root="$FAKE" --state-dir="$STATE" --guest-bin="$WORK/guest" --reps=1 --boots=1 \
	--out="$WORK/out" >"$WORK/stdout" 2>"$WORK/stderr")
rc=$?
check "the run ended (no timeout)" test "$rc" -ne 124
check "the workload ran" grep -q '^argv: workload hzp ' "$LOG"
check "the workload is never given --zero-page" sh -c "! grep -q -- '--zero-page' '$LOG'"
check "use_zero_page is 0 under the fake root while it runs" sh -c "! grep '^knob: ' '$LOG' | grep -qv '^knob: 0$'"
check "use_zero_page put back after" test "$(cat "$FAKE/$THP_REL/use_zero_page")" = 1
check "no journal left" test ! -e "$STATE/host-journal"
check "the real knobs untouched" test "$(real_snapshot)" = "$real_before"

cli_summary
