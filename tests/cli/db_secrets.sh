#!/bin/bash
# No password of a PostgreSQL --db value reaches what thpeval prints: each URI
# form that hides a password somewhere libpq looks for one (the user part with
# an unencoded '/' or '?', a percent-encoded key, sslpassword, a password set
# through options), a URI libpq cannot parse, and a libpq key=value string,
# given to every command that reads --db (history, history --import,
# report --fleet, run's option check, stopped there by a bad --reps). Each exits non-zero with one line on
# stderr, and neither stdout nor stderr holds the password. 127.0.0.1:1
# refuses at once: no server is needed.
#
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
cli_workdir

SECRET=s3cretPW
FIXTURE=$ROOT/tests/orchestrator/fixtures/results-tcg-2x2.json
FORMS=(
	"postgresql://u:$SECRET/x@127.0.0.1:1/db"
	"postgresql://u:12/$SECRET@127.0.0.1:1/db"
	"postgresql://u:$SECRET?x@127.0.0.1:1/db"
	"postgres://u:$SECRET@127.0.0.1:1/db"
	"postgresql://127.0.0.1:1/db?pass%77ord=$SECRET"
	"postgresql://127.0.0.1:1/db?sslpassword=$SECRET"
	"postgresql://127.0.0.1:1/db?options=-c%20password%3D$SECRET"
	"postgresql://127.0.0.1:1/db?$SECRET"
	"host=127.0.0.1 port=1 password=$SECRET"
)

for form in "${FORMS[@]}"; do
	# run: a bad option after --db stops it at option checking, before anything runs
	for cmd in "history" "history --import $FIXTURE" "report --fleet --out=$WORK/fleet" "run"; do
		tail=
		[ "$cmd" = run ] && tail=--reps=not-a-number
		# shellcheck disable=SC2086 # the command's words
		timeout 30 "$THPEVAL" $cmd --db="$form" $tail >"$WORK/out" 2>"$WORK/err"
		rc=$?
		what="$cmd --db='$form'"
		if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then
			not_ok "$what: exit $rc, want a failure"
		elif grep -q "$SECRET" "$WORK/out" "$WORK/err"; then
			not_ok "$what: the password printed: $(cat "$WORK/out" "$WORK/err")"
		elif [ "$(wc -l <"$WORK/err")" -ne 1 ]; then
			not_ok "$what: not one line on stderr: $(cat "$WORK/err")"
		else
			ok "$what"
		fi
	done
done

cli_summary
