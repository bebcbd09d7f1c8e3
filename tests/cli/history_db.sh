#!/bin/bash
# The history on both backends with real servers: an SQLite file, and a
# PostgreSQL cluster of its own that this script starts (initdb in a temporary
# directory, owned by the postgres user when run as root; the server on a
# unix socket in that directory only, no TCP; pg_ctl -w waits until it
# answers) and stops at exit, also on failure or interrupt. On each backend,
# through bin/thpeval:
#   - history --import of fetched results.json trees (two hosts), again
#     (nothing added), under an inventory name (--host), as a failed gate;
#   - the trend of every host and of one (--host);
#   - two processes importing 100 runs each at once into a new database:
#     200 runs, none lost, both exit 0;
#   - a database that is down or refuses: exit 1, one line on stderr, no
#     password in it, the results.json being imported left as it was.
# Then the cmocka history tests (build/tests/orchestrator/test_history) run on
# the server (their postgresql/ cases: append, trend, --host, baseline=last,
# import, migration from each older version, newer and foreign schemas,
# concurrent appends), test_fleet's and test_gatedb's (the history gate: its
# points table, the gate read back, compare --history), and the upgrade of a history of the thpeval before
# schema 2 (SQLite: the cmocka case, and through the CLI with sqlite3(1)).
# Without PostgreSQL's binaries, or as root without a postgres user, the
# PostgreSQL checks are skipped with the reason.
#
# Last line: "N passed, N failed, N skipped". THPEVAL_BIN=path runs another
# build; its test_history is looked for beside it (BUILD/bin -> BUILD/tests).
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
cli_workdir

FIXTURE=$ROOT/tests/orchestrator/fixtures/results-tcg-2x2.json
FIXTURE_V1=$ROOT/tests/orchestrator/fixtures/history-v1.sql
CONC=100	# runs per writer

# ---- the PostgreSQL cluster ---------------------------------------------------------
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PG_WHY=
PGDIR=$WORK/pg
PORT=$((20000 + $$ % 30000))	# names the socket file only: there is no TCP listener
PG_STARTED=

if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ]; then
	PG_WHY="no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (Debian's postgresql package)"
elif [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
	PG_WHY="running as root and there is no postgres user to own the cluster"
elif [ "$(id -u)" -eq 0 ] && ! command -v runuser >/dev/null 2>&1; then
	PG_WHY="running as root without runuser(1) to start the cluster as postgres"
fi

# as_pg CMD...: as the cluster's owner (postgres when we are root)
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_stop() {
	[ -n "$PG_STARTED" ] || return 0
	PG_STARTED=
	as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 && return 0
	# pg_ctl failed: the postmaster we started, by the pid it wrote
	_pid=$(head -n 1 "$PGDIR/data/postmaster.pid" 2>/dev/null)
	case $_pid in
	'' | *[!0-9]*) ;;
	*) kill -KILL "$_pid" 2>/dev/null ;;
	esac
}
trap 'pg_stop; cli_cleanup' EXIT

pg_start() {
	mkdir -p "$PGDIR/sock" || return 1
	if [ "$(id -u)" -eq 0 ]; then
		chown -R postgres "$PGDIR" || return 1
	fi
	if ! as_pg "$PG_BIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --locale=C --no-sync \
		>"$WORK/initdb.log" 2>&1; then
		PG_WHY="initdb failed: $(tail -n 1 "$WORK/initdb.log")"
		return 1
	fi
	PG_STARTED=1
	if ! as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
		-o "-k $PGDIR/sock -p $PORT -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >"$WORK/pg_ctl.log" 2>&1; then
		PG_WHY="the server did not start: $(tail -n 2 "$PGDIR/server.log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	for _db in thpeval_cli thpeval_conc thpeval_unit; do
		if ! "$PG_BIN/createdb" -h "$PGDIR/sock" -p "$PORT" -U postgres "$_db" >"$WORK/createdb.log" 2>&1; then
			PG_WHY="createdb $_db failed: $(head -n 1 "$WORK/createdb.log")"
			return 1
		fi
	done
	return 0
}

pg_uri() {
	printf 'postgresql://postgres@/%s?host=%s&port=%s' "$1" "$PGDIR/sock" "$PORT"
}

if [ -z "$PG_WHY" ]; then
	t0=$(date +%s)
	if pg_start; then
		echo "postgresql: $("$PG_BIN/postgres" --version 2>/dev/null) on $PGDIR/sock, port $PORT ($(($(date +%s) - t0)) s to start)"
	else
		check "postgresql: a temporary cluster starts" false
		echo "     $PG_WHY"
	fi
fi

# ---- results.json files as hosts would have left them ---------------------------------------

# mkrun DIR HOST STARTED: the fixture as a run of HOST started at STARTED, in DIR/results.json
mkrun() {
	mkdir -p "$1" &&
		sed -e "s/\"started_unix\":1795989451/\"started_unix\":$3/" -e "s/\"host\":{/\"host\":{\"name\":\"$2\",/" \
			"$FIXTURE" >"$1/results.json"
}

RUNS=$WORK/runs
mkrun "$RUNS/fetched/lab-a/2031-01-01" lab-a 1000 &&
	mkrun "$RUNS/fetched/lab-a/2031-01-02" lab-a 2000 &&
	mkrun "$RUNS/fetched/lab-b/2031-01-02" lab-b 2000 &&
	mkrun "$RUNS/single" node-7 3000 || { echo "cannot write the runs"; exit 1; }
for w in 1 2; do
	i=0
	while [ $i -lt $CONC ]; do
		mkrun "$RUNS/conc$w/$i" "writer-$w" $((10000 + i)) || exit 1
		i=$((i + 1))
	done
done

# tp ARGS...: bin/thpeval ARGS; RC, stdout in $WORK/out, stderr in $WORK/err
tp() {
	"$THPEVAL" "$@" >"$WORK/out" 2>"$WORK/err"
	RC=$?
}

out_has() { grep -qF -- "$1" "$WORK/out"; }
out_lacks() { ! grep -qF -- "$1" "$WORK/out"; }
# exit 1 and one line on stderr that starts "thpeval: error: " and has $1
one_line_error() {
	[ "$RC" -eq 1 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] &&
		grep -q '^thpeval: error: ' "$WORK/err" && grep -qF -- "$1" "$WORK/err"
}

# ---- every check on one backend: B (its name), DB (the --db), CONC_DB (a new database) -------

backend_checks() {
	B=$1 DB=$2 CONC_DB=$3

	tp history --db="$DB" --import "$RUNS/fetched"
	check "$B: import two hosts' fetched runs" test "$RC" -eq 0
	check "$B: three runs imported" out_has "3 run(s) imported, 0 already recorded"
	check "$B: each run named with its host" out_has "fetched/lab-b/2031-01-02/results.json (host lab-b, started_unix 2000)"
	tp history --db="$DB" --import "$RUNS/fetched"
	check "$B: import again: nothing added" out_has "0 run(s) imported, 3 already recorded"
	tp history --db="$DB" --import --host=web-1 --gate-failed "$RUNS/single/results.json"
	check "$B: import under an inventory name" out_has "(host web-1, started_unix 3000)"

	tp history --db="$DB"
	check "$B: list: exit 0" test "$RC" -eq 0
	check "$B: list: every run" out_has "the last 4 of 4 run(s), oldest first"
	check "$B: list: lab-a's first run" out_has "1970-01-01 00:16  lab-a        6.18.44-fc-v782"
	check "$B: list: the failed gate shows" out_has "web-1        6.18.44-fc-v782      7.2.22     FAIL"
	tp history --db="$DB" --host=lab-b
	check "$B: --host: that host only" out_has "the last 1 of 1 run(s) of host lab-b"
	check "$B: --host: no other host" out_lacks "lab-a "
	tp history --db="$DB" --host=lab-a --last=1 --workload=memset
	check "$B: --host with --last" out_has "the last 1 of 2 run(s) of host lab-a, oldest first; workload memset"
	tp compare --history --db="$DB" --host=lab-a "$RUNS/single/results.json"
	check "$B: compare --history with 2 runs of the host: exit 0" test "$RC" -eq 0
	check "$B: ... no-history, said so" out_has "history gate: no-history: fewer than 5 earlier complete runs"
	check "$B: ... and the A/B against the newest run instead, labelled" out_has "no history yet, so the A/B comparison"

	# two writers at once, 100 runs each, into a new database (they also race to create the schema)
	"$THPEVAL" history --db="$CONC_DB" --import "$RUNS/conc1" >"$WORK/w1.out" 2>"$WORK/w1.err" &
	p1=$!
	"$THPEVAL" history --db="$CONC_DB" --import "$RUNS/conc2" >"$WORK/w2.out" 2>"$WORK/w2.err" &
	p2=$!
	wait "$p1"
	r1=$?
	wait "$p2"
	r2=$?
	check "$B: two writers at once: both exit 0" test "$r1" -eq 0 -a "$r2" -eq 0
	[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] || echo "     writer 1: $(cat "$WORK/w1.err"); writer 2: $(cat "$WORK/w2.err")"
	check "$B: two writers at once: each recorded its $CONC" \
		test "$(grep -c '^imported as run ' "$WORK/w1.out")" -eq $CONC -a "$(grep -c '^imported as run ' "$WORK/w2.out")" -eq $CONC
	# how much they overlapped: writer 1's runs that got an id after writer 2's first (a figure, not a check)
	w2first=$(sed -n 's/^imported as run \([0-9]*\):.*/\1/p' "$WORK/w2.out" | sort -n | head -n 1)
	echo "     $B: writer 1's runs recorded after writer 2's first: $(sed -n 's/^imported as run \([0-9]*\):.*/\1/p' \
		"$WORK/w1.out" | awk -v f="${w2first:-0}" '$1 > f' | wc -l) of $CONC"
	tp history --db="$CONC_DB" --last=1
	check "$B: two writers at once: $((2 * CONC)) runs, none lost" out_has "the last 1 of $((2 * CONC)) run(s)"
	tp history --db="$CONC_DB" --host=writer-2 --last=1
	check "$B: two writers at once: $CONC of writer 2" out_has "the last 1 of $CONC run(s) of host writer-2"
}

# ---- SQLite ---------------------------------------------------------------------------------
mkdir -p "$WORK/sqlite"
backend_checks sqlite "$WORK/sqlite/history.db" "$WORK/sqlite/conc.db"

sum_before=$(cksum <"$RUNS/single/results.json")
tp history --db="$FIXTURE/history.db" --import "$RUNS/single/results.json"
check "sqlite: a database that cannot be created: one line, exit 1" one_line_error "history database"
check "sqlite: ... and the results.json is kept as it was" test "$(cksum <"$RUNS/single/results.json")" = "$sum_before"

if command -v sqlite3 >/dev/null 2>&1; then
	sqlite3 "$WORK/sqlite/v1.db" <"$FIXTURE_V1"
	tp history --db="$WORK/sqlite/v1.db"
	check "sqlite: a history of the thpeval before schema 2 is read (and upgraded)" out_has "the last 3 of 3 run(s)"
	check "sqlite: ... to schema version 3" test "$(sqlite3 "$WORK/sqlite/v1.db" 'PRAGMA user_version')" = 3
	check "sqlite: ... with the history gate's points table" \
		test "$(sqlite3 "$WORK/sqlite/v1.db" "SELECT count(*) FROM sqlite_master WHERE name = 'gate_points'")" = 1
	tp history --db="$WORK/sqlite/v1.db" --import "$RUNS/fetched"
	check "sqlite: ... and takes new runs beside its own" out_has "3 run(s) imported"
	check "sqlite: ... its own runs kept" test "$(sqlite3 "$WORK/sqlite/v1.db" "SELECT count(*) FROM runs WHERE host_name = ''")" = 3
else
	skipped "sqlite: the upgrade of an old history through the CLI: no sqlite3(1) to load $FIXTURE_V1"
fi

# ---- PostgreSQL -----------------------------------------------------------------------------
if [ -n "$PG_STARTED" ] && [ -z "$PG_WHY" ]; then
	backend_checks postgresql "$(pg_uri thpeval_cli)" "$(pg_uri thpeval_conc)"

	tp history --db="postgresql://postgres:s3cret@/thpeval_cli?host=$PGDIR/sock&port=$((PORT + 1))" \
		--import "$RUNS/single/results.json"
	check "postgresql: a server that is down: one line, exit 1" one_line_error "cannot connect to history database"
	check "postgresql: ... no password in it" test "$(grep -c s3cret "$WORK/err")" -eq 0
	check "postgresql: ... and the results.json is kept as it was" test "$(cksum <"$RUNS/single/results.json")" = "$sum_before"
	tp history --db="postgresql://nosuchrole@/thpeval_cli?host=$PGDIR/sock&port=$PORT"
	check "postgresql: a server that refuses the login: one line, exit 1" one_line_error 'role "nosuchrole" does not exist'
	tp history --db="$(pg_uri nosuchdb)"
	check "postgresql: a database that is not there: one line, exit 1" one_line_error 'database "nosuchdb" does not exist'
else
	skipped "postgresql: the CLI checks: ${PG_WHY:-the cluster did not start}"
fi

# ---- the cmocka history tests -------------------------------------------------------------------
UNIT=
for u in "$(dirname "$THPEVAL")/../tests/orchestrator/test_history" "$ROOT/build/tests/orchestrator/test_history"; do
	[ -x "$u" ] && UNIT=$u && break
done

# cmocka FILTER [ENV=VALUE...]: run test_history's cases matching FILTER, counted as this script's
cmocka() {
	_filter=$1
	shift
	env "$@" THPEVAL_TEST_FILTER="$_filter" "${CMOCKA_BIN:-$UNIT}" >"$WORK/unit.out" 2>&1
	_rc=$?
	# a binary may run more than one group: each prints its own tally
	_p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$WORK/unit.out" | awk '{n += $1} END {if (NR) print n}')
	_f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$WORK/unit.out" | awk '{n += $1} END {if (NR) print n}')
	_s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' "$WORK/unit.out" | awk '{n += $1} END {if (NR) print n}')
	PASS=$((PASS + ${_p:-0}))
	FAIL=$((FAIL + ${_f:-0}))
	SKIP=$((SKIP + ${_s:-0}))
	if [ "$_rc" -ne 0 ] || [ -z "$_p$_f$_s" ]; then
		[ -n "$_f" ] || FAIL=$((FAIL + 1))
		echo "FAIL test_history $_filter (exit $_rc):"
		grep -E 'ERROR|FAILED|error' "$WORK/unit.out" | head -n 20 | sed 's/^/     /'
	fi
	grep -E '^(  |skipped: )' "$WORK/unit.out" | head -n 20
}

if [ -z "$UNIT" ]; then
	skipped "the cmocka history tests: build/tests/orchestrator/test_history is not built ('make unit' builds it)"
else
	cmocka "sqlite/test_sqlite_upgrade_v1_history"
	if [ -n "$PG_STARTED" ] && [ -z "$PG_WHY" ]; then
		cmocka "postgresql/*" THPEVAL_TEST_PG="$(pg_uri thpeval_unit)"
		# the fleet page on PostgreSQL (report --fleet): test_fleet beside test_history
		if [ -x "$(dirname "$UNIT")/test_fleet" ]; then
			CMOCKA_BIN="$(dirname "$UNIT")/test_fleet" cmocka "*" THPEVAL_TEST_PG="$(pg_uri thpeval_unit)"
		else
			skipped "the fleet page on PostgreSQL: test_fleet is not built ('make unit' builds it)"
		fi
		# the history gate on PostgreSQL (gate_points, compare --history): test_gatedb beside it
		if [ -x "$(dirname "$UNIT")/test_gatedb" ]; then
			CMOCKA_BIN="$(dirname "$UNIT")/test_gatedb" cmocka "postgresql/*" THPEVAL_TEST_PG="$(pg_uri thpeval_unit)"
		else
			skipped "the history gate on PostgreSQL: test_gatedb is not built ('make unit' builds it)"
		fi
	else
		skipped "the cmocka history tests on PostgreSQL: ${PG_WHY:-the cluster did not start}"
	fi
fi

if [ -n "$PG_STARTED" ]; then
	pm=$(head -n 1 "$PGDIR/data/postmaster.pid" 2>/dev/null)
	pg_stop
	# pg_ctl returns once the pid file is gone; the process itself ends a moment later
	i=0
	while [ -n "$pm" ] && [ -e "/proc/$pm" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "postgresql: the cluster stops (postmaster $pm gone)" test -n "$pm" -a ! -e "/proc/$pm"
fi
cli_summary
