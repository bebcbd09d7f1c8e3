#!/bin/bash
# The Debian package, built here by `make deb` (into a temporary O=, so build/deb/
# stays the user's): the file name thpeval_<version>_<arch>.deb; the exact list of
# files it installs (dpkg -c) with their modes; its control fields (the Depends
# that pull libvirt, QEMU, libguestfs, supermin and a guest kernel; the conffile);
# one version everywhere (debian/changelog, the package, `thpeval version`,
# thpeval(1)); lintian clean (its only overrides explained in
# debian/thpeval.lintian-overrides, each one used); the nightly units valid
# (systemd-analyze verify), options from /etc/default/thpeval, and neither
# enabled nor started by the postinst (run with fake systemd helpers, nothing
# else on its PATH). Then the package extracted into a temporary root (dpkg -x;
# never installed on this machine): its /usr/bin/thpeval runs, finds
# /usr/libexec/thpeval/thpeval-guest relative to itself, names both places it
# looked when that is gone, and (as root, with libvirtd) runs the 2x2 grid with
# real guests, the host's THP settings put back afterwards. Last, `apt-get
# install --simulate` of the .deb against an empty dpkg status (a machine with
# nothing installed) resolves every dependency from the configured archive.
# Skips when dpkg-buildpackage or debhelper is missing.
# Last line: "deb: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=deb IT_TMP=thpeval-deb
. tests/integration/lib.sh
# check NAME COMMAND...: PASS when COMMAND succeeds
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else ko "$name"; fi
}
# jq -e with its verdict unprinted
# shellcheck disable=SC2317	# called through check
jqe() { jq -e "$@" >/dev/null; }

if ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1; then
	sk "dpkg-buildpackage or debhelper is missing (apt-get install --no-install-recommends dpkg-dev debhelper)"
	finish
fi
ARCH=$(dpkg --print-architecture)
if [ "$ARCH" != amd64 ]; then
	sk "the package is amd64 only (debian/control); this machine is $ARCH"
	finish
fi

VERSION=$(dpkg-parsechangelog -S Version)
DEB=$WORK/o/deb/thpeval_${VERSION}_$ARCH.deb

# ---- build ----------------------------------------------------------------------------
start=$(date +%s)
make --no-print-directory deb O="$WORK/o" WERROR=1 >"$WORK/make.log" 2>&1
rc=$?
echo "make deb: exit $rc in $(($(date +%s) - start)) s"
if [ "$rc" -ne 0 ] || [ ! -f "$DEB" ]; then
	tail -n 30 "$WORK/make.log"
	ko "make deb builds $(basename "$DEB")"
	finish
fi
ok "make deb builds $(basename "$DEB") ($(stat -c %s "$DEB") bytes)"
check "the build log has no compiler warning" \
	sh -c "! grep -n 'warning:' '$WORK/o/deb/build.log'"

# ---- contents ---------------------------------------------------------------------------
# every file (not directory) with its mode, as dpkg -c lists them
dpkg -c "$DEB" | awk '$1 !~ /^d/ { print $1, $6 }' | sort -k2 >"$WORK/files"
cat >"$WORK/want" <<'EOF'
-rw-r--r-- ./etc/default/thpeval
-rw-r--r-- ./lib/systemd/system/thpeval-nightly.service
-rw-r--r-- ./lib/systemd/system/thpeval-nightly.timer
-rwxr-xr-x ./usr/bin/thpeval
-rwxr-xr-x ./usr/libexec/thpeval/thpeval-guest
-rw-r--r-- ./usr/share/doc/thpeval/README.md.gz
-rw-r--r-- ./usr/share/doc/thpeval/changelog.gz
-rw-r--r-- ./usr/share/doc/thpeval/copyright
-rw-r--r-- ./usr/share/doc/thpeval/gate.md.gz
-rw-r--r-- ./usr/share/doc/thpeval/install.md
-rw-r--r-- ./usr/share/doc/thpeval/method.md.gz
-rw-r--r-- ./usr/share/doc/thpeval/workloads.md.gz
-rw-r--r-- ./usr/share/lintian/overrides/thpeval
-rw-r--r-- ./usr/share/man/man1/thpeval.1.gz
-rw-r--r-- ./usr/share/thpeval/results.schema.json
EOF
sort -k2 -o "$WORK/want" "$WORK/want"
if diff -u "$WORK/want" "$WORK/files"; then
	ok "dpkg -c: exactly the expected files, with their modes"
else
	ko "dpkg -c: exactly the expected files, with their modes (diff above: - expected, + packaged)"
fi
check "every file is owned by root:root" \
	sh -c "dpkg -c '$DEB' | awk '\$2 != \"root/root\" { bad = 1 } END { exit bad }'"

# ---- control fields ------------------------------------------------------------------
field() { dpkg-deb -f "$DEB" "$1"; }
check "Package thpeval, Version $VERSION, Architecture $ARCH" \
	[ "$(field Package) $(field Version) $(field Architecture)" = "thpeval $VERSION $ARCH" ]
# Depends as one name a line, versions and alternatives' bars dropped
field Depends | tr ',|' '\n' | sed 's/(.*)//; s/^ *//; s/ *$//' | sed '/^$/d' >"$WORK/depends"
for p in libvirt-daemon-system qemu-system-x86 supermin linux-image-amd64 linux-source-6.1 gcc make flex bison bc \
	libguestfs0 libvirt0 libjson-c5 libsqlite3-0 libxml2 liblzma5 libc6; do
	check "Depends: $p" grep -qx "$p" "$WORK/depends"
done
check "no substitution variable left in the control fields" \
	sh -c "! dpkg-deb -f '$DEB' | grep -F '\${'"
dpkg-deb --ctrl-tarfile "$DEB" | tar -xf - -C "$WORK" ./conffiles ./postinst 2>/dev/null
check "/etc/default/thpeval is a conffile (local options survive upgrades)" \
	grep -qx /etc/default/thpeval "$WORK/conffiles"

# ---- extracted into a temporary root -----------------------------------------------------
ROOT=$WORK/root
dpkg -x "$DEB" "$ROOT"
T=$ROOT/usr/bin/thpeval G=$ROOT/usr/libexec/thpeval/thpeval-guest
"$T" --help >"$WORK/help" 2>&1
rc=$?
check "extracted thpeval --help exits 0 and lists the commands" \
	sh -c "[ $rc -eq 0 ] && grep -q '^ *run' '$WORK/help' && grep -q '^ *report' '$WORK/help'"
check "extracted thpeval run --help exits 0" sh -c "'$T' run --help >/dev/null"
check "one version: debian/changelog = package = thpeval version ($VERSION)" \
	[ "$("$T" version)" = "thpeval $VERSION" ]
check "one version: thpeval(1) is of thpeval $VERSION" \
	sh -c "zcat '$ROOT/usr/share/man/man1/thpeval.1.gz' | grep -q '^\.TH THPEVAL 1 .*\"thpeval $VERSION\"'"
check "the man page renders without a warning" \
	sh -c "! command -v man >/dev/null || { out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$ROOT/usr/share/man/man1/thpeval.1.gz' 2>&1 >/dev/null); [ -z \"\$out\" ] || { echo \"\$out\"; false; }; }"
check "the schema is JSON" sh -c "python3 -m json.tool '$ROOT/usr/share/thpeval/results.schema.json' >/dev/null"
"$G" workloads >"$WORK/guest-workloads" 2>"$WORK/guest-workloads.err"
rc=$?
check "extracted thpeval-guest workloads exits 0 and lists memset" \
	sh -c "[ $rc -eq 0 ] && grep -qx memset '$WORK/guest-workloads'"
# thpeval workloads prints what the guest program it found prints: the libexec one,
# there being no thpeval-guest beside the extracted /usr/bin/thpeval
"$T" workloads >"$WORK/workloads" 2>"$WORK/workloads.err"
rc=$?
check "extracted thpeval finds ../libexec/thpeval/thpeval-guest (thpeval workloads exits 0)" \
	[ "$rc" -eq 0 ]
check "thpeval workloads prints the extracted guest program's list" \
	cmp -s "$WORK/workloads" "$WORK/guest-workloads"
mv "$G" "$G.away"
"$T" workloads >"$WORK/none" 2>"$WORK/none.err"
rc=$?
check "without it: exit 1, one line naming both places, nothing on stdout" \
	sh -c "[ $rc -eq 1 ] && [ ! -s '$WORK/none' ] && [ \$(wc -l <'$WORK/none.err') -eq 1 ] &&
		grep -qF \"'$ROOT/usr/bin/thpeval-guest'\" '$WORK/none.err' &&
		grep -qF \"'$ROOT/usr/libexec/thpeval/thpeval-guest'\" '$WORK/none.err'"
cat "$WORK/none.err"
mv "$G.away" "$G"

# ---- a short run from the extracted package ------------------------------------------------
if [ "$(id -u)" -ne 0 ] || [ ! -w "$THP/enabled" ] || [ ! -S /run/libvirt/libvirt-sock ]; then
	sk "a run from the extracted package needs root, a writable host THP sysfs and libvirtd (tools/services.sh)"
else
	BIN=$T	# the EXIT trap's host restore
	before=$(thp_snapshot)
	# 1 boot per host setting, the default 3 reps: the 2x2 grid, quick (~1 min, more
	# when the guest image of this guest program is built first)
	it_run 1800 720 "$WORK/run.out" "$WORK/run.err" "$T" run --host-thp=always --guest-thp=always \
		--boots=1 --target-ci=none --memory=512M --size=32M --db=none --state-dir="$STATE" \
		--out="$WORK/run"
	if ! it_over "a run from the extracted package"; then
		tail -n 2 "$WORK/run.err"
		check "thpeval run --host-thp=always from the extracted package exits 0" [ "$it_rc" -eq 0 ]
		# shellcheck disable=SC2016	# jq's $v
		check "its results.json: thpeval $VERSION, the 4 cells of host x guest THP never/always" \
			jqe --arg v "$VERSION" '.thpeval_version == $v and
				([.cells[] | select(.variant == null) | .host_thp + "/" + .guest_thp] | sort) ==
				["always/always", "always/never", "never/always", "never/never"]' "$WORK/run/results.json"
	fi
	after=$(thp_snapshot)
	check "host THP settings identical before and after" [ "$before" = "$after" ]
fi

# ---- the nightly units ---------------------------------------------------------------------
U=$ROOT/lib/systemd/system
check "the service runs /usr/bin/thpeval run with \$THPEVAL_RUN_OPTS from /etc/default/thpeval" \
	sh -c "grep -qx 'ExecStart=/usr/bin/thpeval run \$THPEVAL_RUN_OPTS' '$U/thpeval-nightly.service' &&
		grep -qx 'EnvironmentFile=-/etc/default/thpeval' '$U/thpeval-nightly.service' &&
		grep -q '^Environment=\"THPEVAL_RUN_OPTS=' '$U/thpeval-nightly.service'"
check "/etc/default/thpeval sets nothing until edited (the unit's defaults apply)" \
	sh -c "env -i sh -c '. \"$ROOT/etc/default/thpeval\"; [ -z \"\${THPEVAL_RUN_OPTS+set}\" ]'"
if ! command -v systemd-analyze >/dev/null 2>&1 || [ ! -f /lib/systemd/system/sysinit.target ]; then
	sk "systemd-analyze verify: no systemd here to verify the units against"
else
	# the extracted root with this machine's targets and sockets (what the units order against)
	for f in /lib/systemd/system/*.target /lib/systemd/system/*.socket \
		/lib/systemd/system/libvirtd.service /lib/systemd/system/virtlogd.service; do
		[ -e "$f" ] && [ ! -e "$U/${f##*/}" ] && cp -P "$f" "$U/"
	done
	systemd-analyze verify --man=no --root="$ROOT" /lib/systemd/system/thpeval-nightly.service \
		/lib/systemd/system/thpeval-nightly.timer >"$WORK/verify" 2>&1
	rc=$?
	cat "$WORK/verify"
	check "systemd-analyze verify: service and timer" sh -c "[ $rc -eq 0 ] && [ ! -s '$WORK/verify' ]"
fi
# the postinst of a first install, with every command it may run faked and logged
# (PATH holds only the fakes: anything else it ran would fail the script)
FAKE=$WORK/fake
mkdir -p "$FAKE"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	cat >"$FAKE/$c" <<EOF
#!/bin/sh
echo "$c \$*" >>"$WORK/calls"
case "$c \$1 \$2" in
"deb-systemd-helper debian-installed"*) exit 1 ;;	# a first install
"deb-systemd-helper --quiet was-enabled") exit 0 ;;	# its default: true
esac
exit 0
EOF
	chmod +x "$FAKE/$c"
done
: >"$WORK/calls"
env -i PATH="$FAKE" /bin/sh "$WORK/postinst" configure >"$WORK/postinst.out" 2>&1
rc=$?
cat "$WORK/calls"
check "postinst configure (first install) exits 0" [ "$rc" -eq 0 ]
check "postinst neither enables nor starts a unit" \
	sh -c "! grep -Eq '(^deb-systemd-helper enable|^deb-systemd-invoke (start|restart)|^systemctl .*(enable|start))' '$WORK/calls'"
# its start is behind [ -d /run/systemd/system ], this machine's: read the script instead
check "postinst has no deb-systemd-invoke (starts nothing on a systemd host either)" \
	sh -c "! grep -q deb-systemd-invoke '$WORK/postinst'"

# ---- lintian ------------------------------------------------------------------------------
if ! command -v lintian >/dev/null 2>&1; then
	sk "lintian is not installed (apt-get install --no-install-recommends lintian)"
else
	CHANGES=$WORK/o/deb/thpeval_${VERSION}_$ARCH.changes
	lintian --info --pedantic "$CHANGES" >"$WORK/lintian" 2>&1
	rc=$?
	grep -v '^running with root privileges' "$WORK/lintian"
	# an unused override would be an I: line (unused-override)
	check "lintian --info --pedantic: exit 0, no tag (E, W, I, P, X) but the overridden ones" \
		sh -c "[ $rc -eq 0 ] && ! grep -Eq '^[EWIPX]: ' '$WORK/lintian'"
	lintian --show-overrides "$CHANGES" 2>&1 | grep '^O: ' >"$WORK/overridden"
	cat "$WORK/overridden"
	check "lintian: the overrides apply, and each is explained by a comment above it" \
		sh -c "[ \$(wc -l <'$WORK/overridden') -eq \$(grep -c '^[^#]' debian/thpeval.lintian-overrides) ] &&
			awk '/^#/ { c = 1; next } /^[^ ]/ { if (!c) exit 1; c = 0 }' debian/thpeval.lintian-overrides"
fi

# ---- apt: does every dependency resolve? ----------------------------------------------------
if ! apt-cache policy libc6 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -qv '(none)'; then
	sk "apt-get --simulate: apt has no package lists here (apt-get update)"
else
	: >"$WORK/empty-status"
	apt-get -o Dir::State::status="$WORK/empty-status" -o Debug::NoLocking=1 \
		install --simulate "$DEB" >"$WORK/apt" 2>&1
	rc=$?
	tail -n 3 "$WORK/apt"
	echo "apt-get --simulate from an empty system: $(grep -c '^Inst ' "$WORK/apt") packages"
	check "apt-get install --simulate from an empty system resolves every dependency" \
		sh -c "[ $rc -eq 0 ] && grep -q '^Inst thpeval ' '$WORK/apt'"
	for p in libvirt-daemon-system libvirt-daemon-driver-qemu qemu-system-x86 libguestfs0 supermin linux-image-amd64; do
		check "apt pulls $p" grep -q "^Inst $p " "$WORK/apt"
	done
fi
finish
