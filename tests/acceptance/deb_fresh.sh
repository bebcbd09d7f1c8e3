#!/bin/bash
# Acceptance test of the Debian package on a fresh Debian 12: `apt-get
# install ./thpeval_*.deb` in a bare bookworm root resolves and installs every
# dependency, and `thpeval run --host-thp=always` works from the installed package.
#
#   1. the package: `make deb` (into a temporary O=, so build/deb/ stays the
#      user's), or DEB=path;
#   2. a bare bookworm root: `debootstrap --variant=minbase`, kept as a tarball
#      under DEB_FRESH_DIR (/var/tmp/thpeval-deb-fresh) and reused while its
#      .complete marker is there (FRESH=1 bootstraps anew); every run unpacks it
#      into a new root, so the package is always installed into a pristine system;
#   3. in that root, as a fresh install would: sources for bookworm,
#      bookworm-updates and bookworm-security (the host's mirrors, else
#      deb.debian.org; MIRROR= and SECURITY_MIRROR= override), `apt-get update &&
#      apt-get install -y ./thpeval_*.deb` with Recommends (apt's default), a
#      policy-rc.d that starts no service; which of libvirt, QEMU, libguestfs,
#      supermin and a kernel came in, how many packages, how much was downloaded;
#   4. the installed files: thpeval --version, its libraries resolved, the man
#      page, the guest program found in /usr/libexec/thpeval, the schema, the
#      nightly units installed but not enabled, a guest kernel in /boot;
#   5. the root's own virtlogd and libvirtd (its /run is a tmpfs of its own, so
#      they do not meet the host's at /run/libvirt; they run with the root as
#      their / by pivot_root, as libvirt needs: start_daemons says why); then
#      the installed thpeval, chrooted, runs the 2x2 grid with short memset
#      cells under TCG: exit 0, results.json of this version, valid against the
#      installed schema, cells valid by their own evidence, the guest image built
#      in the root (supermin from the root's packages and kernel), the host's
#      THP and hugepage pool settings as before. RUN=0 stops after 4 (no guest
#      booted, no host knob written).
#
# Everything runs in a private mount namespace (unshare -m --propagation
# private): the root (bound onto itself: a mount point, as libvirt needs its /
# to be), its /proc, /sys, /dev (with /sys/fs/cgroup, /dev/pts and
# /dev/hugepages: recursive binds) and /run exist only there and go with it,
# also after a crash. The root shares the host's network: should the install
# mark libvirt's 'default' network for autostart (bookworm's does not), the
# link is removed before the root's libvirtd starts, as that network would put
# a bridge, dnsmasq and NAT rules on the host that outlive the daemon; the
# host's network links are compared before and after. The root's daemons are
# stopped by their pids at the end, on failure too (EXIT trap), then any
# process left in the root; the root is deleted (KEEP=1 keeps it), the logs of
# the run (apt's, libvirt's, thpeval's output, results and guest console logs)
# kept in DEB_FRESH_DIR/last-run.
#
# Needs root, debootstrap, unshare, pivot_root, jq and network access to the
# Debian archive: a few hundred MB are downloaded each run (the package's
# dependencies; the bare bootstrap once more when not cached). Takes 5-10 min
# here (mostly apt and the TCG guests). Not part of `make check`: `make
# deb-fresh`. Section 5 boots guests and writes the host's THP knobs: on a
# shared machine run it under the host lock, with -o so the root's daemons do
# not hold it: flock -o /tmp/thpeval-host.lock tests/acceptance/deb_fresh.sh.
# Exits 77 without root or debootstrap.
# Last line: "deb_fresh: N passed, N failed, N skipped".
# shellcheck disable=SC2016	# the $ of dpkg-query's and jq's formats are theirs
set -u
SELF=$(readlink -f "$0")
cd "$(dirname "$SELF")/../.." || exit 1

early_skip() {
	echo "SKIP: $1"
	echo "deb_fresh: 0 passed, 0 failed, 1 skipped"
	exit 77
}

# ---- into a private mount namespace ----------------------------------------------------
if [ -z "${DEB_FRESH_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || early_skip "a fresh Debian root needs root (debootstrap, chroot, mounts)"
	command -v debootstrap >/dev/null 2>&1 ||
		early_skip "debootstrap is missing (apt-get install --no-install-recommends debootstrap)"
	for c in unshare chroot pivot_root jq dpkg-deb; do
		command -v "$c" >/dev/null 2>&1 || early_skip "$c is missing"
	done
	[ "$(dpkg --print-architecture)" = amd64 ] ||
		early_skip "the package is amd64 only (debian/control); this machine is $(dpkg --print-architecture)"
	exec unshare -m --propagation private env DEB_FRESH_NS=1 "$BASH" "$SELF" "$@"
fi

IT_NAME=deb_fresh IT_TMP=thpeval-deb-fresh
. tests/integration/lib.sh
# lib.sh's EXIT trap restores the host's thpeval and removes the host's domains:
# this script's belong to the root, fresh_cleanup below
trap - EXIT

CACHE=${DEB_FRESH_DIR:-/var/tmp/thpeval-deb-fresh}
TARBALL=$CACHE/bookworm-minbase.tar
MARKER=$CACHE/.complete
ENV_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
R="" R_ID=""	# the root of this run, its device:inode
LIBVIRTD_PID="" VIRTLOGD_PID="" RUN_STARTED=""

check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else ko "$name"; fi
}
# shellcheck disable=SC2317	# called through check
jqe() { jq -e "$@" >/dev/null; }

# a command in the root, with a clean environment
inroot() {
	env -i PATH="$ENV_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
		chroot "$R" "$@"
}

# the URI the host's apt sources give for suite $1: deb822 .sources files, then
# one-line sources.list files; empty when none does
host_mirror() {
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			awk -v s="$1" 'BEGIN { RS = "" } {
				t = u = su = ""; en = 1
				n = split($0, l, "\n")
				for (i = 1; i <= n; i++) {
					if (l[i] ~ /^#/) continue
					k = tolower(l[i]); v = l[i]; sub(/^[^:]*:[ \t]*/, "", v)
					if (k ~ /^types:/) t = v
					else if (k ~ /^uris:/) u = v
					else if (k ~ /^suites:/) su = v
					else if (k ~ /^enabled:/ && tolower(v) ~ /^no/) en = 0
				}
				if (en && index(" " t " ", " deb ") && index(" " su " ", " " s " ")) {
					split(u, w, " "); print w[1]
				}
			}' "$f"
		done
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			awk -v s="$1" '$1 == "deb" {
				i = 2
				if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == s) print $i
			}' "$f"
		done
	} | head -n 1
}

# the host's THP knobs (lib.sh) and its hugetlb pools
host_snapshot() {
	local f
	thp_snapshot
	for f in /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages \
		/sys/kernel/mm/hugepages/hugepages-*/nr_overcommit_hugepages; do
		[ -r "$f" ] && printf '%s=%s\n' "${f#/sys/kernel/mm/hugepages/}" "$(cat "$f")"
	done
	return 0
}

# whether process $1's root directory is this run's root: the same directory
# (device:inode), whether it got there by chroot or by pivot_root (readlink of
# /proc/PID/root says '/' for a process of another mount namespace)
in_root() {
	[ -n "$1" ] && [ -n "$R_ID" ] && [ "$(stat -L -c %d:%i "/proc/$1/root" 2>/dev/null)" = "$R_ID" ]
}

# the pids of processes in this run's root
root_pids() {
	local p
	for p in /proc/[0-9]*; do
		in_root "${p#/proc/}" && echo "${p#/proc/}"
	done
}

# stop PID when it is a process of the root: TERM, then KILL after 15 s
stop_pid() {
	local pid=$1
	in_root "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 75); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null
}

# the root's virtlogd -d and libvirtd -d, without this script's descriptors above
# stderr (a caller's flock or pipes), in a mount namespace of their own whose root
# mount is the root (pivot_root, as a container's; its other mounts detached):
# libvirt makes each QEMU's /dev from a helper that enters QEMU's mount namespace
# (setns), which puts the helper at that namespace's root mount. Chrooted, that
# is the host's /, the root's /dev in QEMU's namespace stays empty and QEMU
# cannot open /dev/ptmx ("-chardev pty: Failed to create PTY: No such file or
# directory"). Their pids from their pid files in the root's /run (a tmpfs both
# namespaces share, as they share the sockets in it); 1 when either is not up
# with its socket in 30 s.
start_daemons() {
	local _
	(
		for fd in "/proc/$BASHPID/fd/"*; do
			n=${fd##*/}
			[ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
		done
		# shellcheck disable=SC2016	# the inner shell's $1 and $2
		exec unshare -m --propagation private sh -c 'cd "$1" && pivot_root . . && umount -l . && cd / &&
			exec env -i PATH="$2" LANG=C.UTF-8 sh -c "virtlogd -d && libvirtd -d"' sh "$R" "$ENV_PATH" \
			</dev/null >>"$WORK/daemons.out" 2>&1
	)
	for _ in $(seq 1 150); do
		[ -z "$VIRTLOGD_PID" ] && [ -s "$R/run/virtlogd.pid" ] && VIRTLOGD_PID=$(cat "$R/run/virtlogd.pid")
		[ -z "$LIBVIRTD_PID" ] && [ -s "$R/run/libvirtd.pid" ] && LIBVIRTD_PID=$(cat "$R/run/libvirtd.pid")
		[ -n "$VIRTLOGD_PID" ] && [ -n "$LIBVIRTD_PID" ] &&
			[ -S "$R/run/libvirt/virtlogd-sock" ] && [ -S "$R/run/libvirt/libvirt-sock" ] && return 0
		sleep 0.2
	done
	return 1
}

# undo whatever of the run is still there: the root's domains and host settings
# (its thpeval's journal), its daemons, any process left in it, its mounts, the root
# itself (unless KEEP=1), the work directory. Quiet; safe to call twice.
fresh_cleanup() {
	local d p
	if [ -n "$R" ] && [ -n "$LIBVIRTD_PID" ] && kill -0 "$LIBVIRTD_PID" 2>/dev/null; then
		for d in $(inroot virsh -c qemu:///system list --all --name 2>/dev/null); do
			inroot virsh -c qemu:///system destroy "$d" >/dev/null 2>&1
			inroot virsh -c qemu:///system undefine "$d" >/dev/null 2>&1
		done
	fi
	[ -n "$RUN_STARTED" ] && inroot thpeval host restore >/dev/null 2>&1
	RUN_STARTED=""
	stop_pid "$LIBVIRTD_PID"
	stop_pid "$VIRTLOGD_PID"
	LIBVIRTD_PID="" VIRTLOGD_PID=""
	if [ -n "$R" ] && [ -d "$R" ]; then
		for p in $(root_pids); do stop_pid "$p"; done
		rm -rf "$CACHE/last-run" && mkdir -p "$CACHE/last-run/libvirt" &&
			cp -p "$WORK"/*.log "$WORK"/*.out "$WORK"/*.err "$CACHE/last-run/" 2>/dev/null
		cp -pr "$R/var/log/libvirt/." "$CACHE/last-run/libvirt/" 2>/dev/null
		[ -d "$R/root/run" ] && cp -pr "$R/root/run" "$CACHE/last-run/run" 2>/dev/null
		mountpoint -q "$R" && { umount -R "$R" 2>/dev/null || umount -R -l "$R"; }
		if [ "${KEEP:-0}" = 1 ]; then
			echo "KEEP=1: the root stays in $R" >&2
		elif grep -Eq " ${R}[/ ]" /proc/self/mountinfo; then
			echo "deb_fresh: something is still mounted under $R: not deleting it" >&2
		else
			rm -rf --one-file-system "$R"
		fi
	fi
	R="" R_ID=""
	rm -rf "$WORK"
}
trap fresh_cleanup EXIT
trap 'exit 130' INT TERM

T0=$SECONDS
TIMES=""
phase_done() {	# NAME START: the phase's seconds into TIMES
	TIMES="$TIMES, $1 $((SECONDS - $2)) s"
	echo "-- $1: $((SECONDS - $2)) s"
}

# ---- 1. the package --------------------------------------------------------------------
t=$SECONDS
if [ -n "${DEB:-}" ]; then
	DEB=$(readlink -f "$DEB")
	if [ ! -f "$DEB" ]; then
		ko "DEB=$DEB: no such file"
		finish
	fi
else
	if ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1; then
		sk "make deb needs dpkg-buildpackage and debhelper (apt-get install --no-install-recommends dpkg-dev debhelper); or give DEB=path"
		finish
	fi
	make --no-print-directory deb O="$WORK/o" WERROR=1 >"$WORK/make.log" 2>&1
	rc=$?
	DEB=""
	for f in "$WORK"/o/deb/thpeval_*.deb; do [ -f "$f" ] && DEB=$f; done
	if [ "$rc" -ne 0 ] || [ -z "$DEB" ]; then
		tail -n 30 "$WORK/make.log"
		ko "make deb builds the package (exit $rc)"
		finish
	fi
fi
VERSION=$(dpkg-deb -f "$DEB" Version)
ok "the package: $(basename "$DEB") ($(stat -c %s "$DEB") bytes)"
phase_done package "$t"

# ---- 2. a bare bookworm root --------------------------------------------------------------
MIRROR=${MIRROR:-$(host_mirror bookworm)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SECURITY_MIRROR:-$(host_mirror bookworm-security)}
SECURITY_MIRROR=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
mkdir -p "$CACHE"
t=$SECONDS
if [ "${FRESH:-0}" = 1 ] || [ ! -f "$MARKER" ] || [ ! -f "$TARBALL" ]; then
	rm -f "$MARKER" "$TARBALL"
	B=$CACHE/bootstrap
	rm -rf --one-file-system "$B"
	echo "debootstrap --variant=minbase bookworm $B $MIRROR"
	debootstrap --variant=minbase bookworm "$B" "$MIRROR" >"$WORK/debootstrap.log" 2>&1
	rc=$?
	# what it downloaded, before the bare root's archive cache is emptied
	dl=$(du -sk "$B/var/cache/apt/archives" 2>/dev/null | cut -f1)
	if [ "$rc" -ne 0 ] || [ ! -x "$B/usr/bin/apt-get" ]; then
		tail -n 20 "$WORK/debootstrap.log"
		ko "debootstrap --variant=minbase bookworm (exit $rc; its log above)"
		rm -rf --one-file-system "$B"
		finish
	fi
	rm -f "$B"/var/cache/apt/archives/*.deb
	tar -C "$B" --numeric-owner -cpf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL" &&
		printf 'bookworm minbase from %s on %s; downloaded %s KiB\n' "$MIRROR" "$(date -u +%FT%TZ)" "${dl:-?}" >"$MARKER"
	rm -rf --one-file-system "$B"
	[ -f "$MARKER" ] || { ko "the bare root could not be stored in $TARBALL"; finish; }
	ok "debootstrap --variant=minbase bookworm: a bare root ($(cat "$MARKER"))"
	phase_done debootstrap "$t"
else
	ok "the cached bare root: $TARBALL ($(cat "$MARKER"); FRESH=1 bootstraps anew)"
fi

t=$SECONDS
R=$(mktemp -d "$CACHE/root.XXXXXX") && R=$(readlink -f "$R") && R_ID=$(stat -c %d:%i "$R")
if ! tar -C "$R" --numeric-owner -xpf "$TARBALL"; then
	ko "unpacking $TARBALL into $R"
	finish
fi
# the root a mount point of its own: libvirt starts each QEMU in a mount namespace
# whose / it makes a slave (mount(MS_SLAVE|MS_REC) on /), which fails with EINVAL
# where / is a plain directory, as a chroot's is ("Failed disable mount
# propagation out of the root filesystem: Invalid argument": no guest starts)
mount --bind "$R" "$R" &&
	mount -t proc proc "$R/proc" &&
	mount --rbind /sys "$R/sys" &&
	mount --rbind /dev "$R/dev" &&
	mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$R/run"
rc=$?
check "a new root from the bare one, a mount point, with /proc, /sys, /dev and its own /run ($R)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || finish
# the mounts are this namespace's: the caller's namespace sees none of them
if [ "$(readlink "/proc/$PPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]; then
	check "the root's mounts are private: none under $R in the caller's namespace" \
		sh -c "! grep -Eq ' ${R}[/ ]' /proc/$PPID/mountinfo"
fi
cp /etc/resolv.conf "$R/etc/resolv.conf"
cat >"$R/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY_MIRROR bookworm-security main
EOF
printf '#!/bin/sh\n# deb_fresh: no service starts in the test root\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
cp "$DEB" "$R/tmp/"
chmod 644 "$R/tmp/$(basename "$DEB")"
phase_done unpack "$t"

# ---- 3. apt-get install ./thpeval_*.deb ---------------------------------------------------
t=$SECONDS
n0=$(inroot dpkg-query -W -f='${db:Status-Abbrev}\n' | grep -c '^ii')
inroot apt-get update >"$WORK/apt-update.log" 2>&1
rc=$?
tail -n 3 "$WORK/apt-update.log"
check "apt-get update in the root" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || finish
inroot sh -c 'cd /tmp && apt-get install -y ./thpeval_*.deb' >"$WORK/apt-install.log" 2>&1
rc=$?
grep -E '^(Need to get|After this operation|[0-9]+ upgraded)' "$WORK/apt-install.log"
if [ "$rc" -ne 0 ]; then
	tail -n 30 "$WORK/apt-install.log"
	ko "apt-get install -y ./$(basename "$DEB") (exit $rc; its log's end above)"
	finish
fi
ok "apt-get install -y ./$(basename "$DEB") exits 0"
n1=$(inroot dpkg-query -W -f='${db:Status-Abbrev}\n' | grep -c '^ii')
# "Need to get 438 MB/438 MB of archives.": what is left to fetch / the total
DL=$(sed -n 's/^Need to get \([^/]*\).* of archives\.$/\1/p' "$WORK/apt-install.log")
echo "packages: $n0 in the bare root, $n1 after the install: $((n1 - n0)) pulled in (${DL:-?} downloaded)"
check "thpeval $VERSION is installed (dpkg: install ok installed)" \
	[ "$(inroot dpkg-query -W -f='${Status} ${Version}' thpeval 2>/dev/null)" = "install ok installed $VERSION" ]
inroot dpkg --audit >"$WORK/audit" 2>&1
check "every package is configured (dpkg --audit says nothing)" sh -c "[ ! -s '$WORK/audit' ] || { cat '$WORK/audit'; false; }"
check "apt-get check: the dependencies are consistent" sh -c "env -i PATH='$ENV_PATH' chroot '$R' apt-get check >/dev/null"
# what a run needs, pulled in by the package's Depends (debian/control) and their own
PULLED=""
for p in libvirt-daemon-system libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 \
	libguestfs0 supermin linux-image-amd64; do
	v=$(inroot dpkg-query -W -f='${db:Status-Abbrev}|${Version}' "$p" 2>/dev/null)
	case $v in
	"ii |"*) ok "apt pulled $p ${v#*|}"; PULLED="$PULLED $p=${v#*|}" ;;
	*) ko "apt pulled $p (dpkg says: '${v:-not known}')" ;;
	esac
done
kpkgs=$(inroot dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 'linux-image-[0-9]*' 2>/dev/null |
	awk '$1 == "ii" { print $2 "=" $3 }' | tr '\n' ' ')
check "a versioned kernel package came with linux-image-amd64 (${kpkgs% })" [ -n "$kpkgs" ]
PULLED="$PULLED $kpkgs"
phase_done apt "$t"

# ---- 4. the installed files ---------------------------------------------------------------
t=$SECONDS
out=$(inroot thpeval --version 2>&1)
check "thpeval --version: '$out'" [ "$out" = "thpeval $VERSION" ]
inroot ldd /usr/bin/thpeval >"$WORK/ldd" 2>&1
check "every library of /usr/bin/thpeval resolves in the root (ldd)" \
	sh -c "! grep -q 'not found' '$WORK/ldd' && grep -q libvirt '$WORK/ldd' && grep -q libguestfs '$WORK/ldd'"
man=/usr/share/man/man1/thpeval.1.gz
if [ -x "$R/usr/bin/man" ]; then
	check "man -w thpeval finds thpeval(1)" [ "$(inroot man -w thpeval 2>/dev/null)" = "$man" ]
else
	check "thpeval(1) is installed ($man; no man-db in the root to ask)" gzip -t "$R$man"
fi
G=/usr/libexec/thpeval/thpeval-guest
check "the guest program is installed executable ($G)" [ -x "$R$G" ]
inroot "$G" workloads >"$WORK/guest-workloads" 2>&1
inroot thpeval workloads >"$WORK/workloads" 2>&1
rc=$?
check "thpeval workloads finds $G (exit 0, its list, memset in it)" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$WORK/workloads' '$WORK/guest-workloads' && grep -qx memset '$WORK/workloads'"
check "the schema is installed and is JSON (/usr/share/thpeval/results.schema.json)" \
	jqe 'has("$schema") or has("properties")' "$R/usr/share/thpeval/results.schema.json"
check "thpeval-nightly.service and .timer are installed" \
	sh -c "[ -f '$R/lib/systemd/system/thpeval-nightly.service' ] && [ -f '$R/lib/systemd/system/thpeval-nightly.timer' ]"
check "neither is enabled by the install" \
	sh -c "! ls '$R'/etc/systemd/system/*.wants/thpeval-nightly.* >/dev/null 2>&1"
k=""
for f in "$R"/boot/vmlinuz-*; do [ -f "$f" ] && k="$k ${f##*/}"; done
check "a guest kernel is in the root's /boot:${k:- none}" [ -n "$k" ]
phase_done static "$t"

# ---- 5. thpeval run --host-thp=always from the installed package -----------------------------
t=$SECONDS
if [ "${RUN:-1}" = 0 ]; then
	sk "thpeval run in the root: RUN=0"
elif [ ! -w "$THP/enabled" ]; then
	sk "thpeval run in the root: the host's THP sysfs is not writable ($THP/enabled)"
else
	# the 'default' network's autostart (libvirt-daemon-config-network, a Recommends)
	for f in "$R"/etc/libvirt/qemu/networks/autostart/*.xml; do
		[ -e "$f" ] || continue
		echo "network autostart link removed for the root's libvirtd: ${f#"$R"}"
		rm -f "$f"
	done
	links_before=$(ls /sys/class/net)
	host_libvirtd=""
	[ -S /run/libvirt/libvirt-sock ] && host_libvirtd=$(cat /run/libvirtd.pid 2>/dev/null)
	start_daemons
	rc=$?
	[ "$rc" -eq 0 ] || cat "$WORK/daemons.out"
	check "the root's virtlogd -d and libvirtd -d run (pids ${VIRTLOGD_PID:-none} and ${LIBVIRTD_PID:-none}), their sockets in the root's /run" \
		[ "$rc" -eq 0 ]
	check "they run with the root as their / (pivot_root), in a mount namespace of their own" \
		sh -c "[ \"\$(stat -L -c %d:%i /proc/$LIBVIRTD_PID/root)\" = '$R_ID' ] &&
			[ \"\$(readlink /proc/$LIBVIRTD_PID/ns/mnt)\" != \"\$(readlink /proc/self/ns/mnt)\" ]"
	inroot virsh -c qemu:///system version >"$WORK/virsh-version" 2>&1
	if grep -q 'Running hypervisor: QEMU' "$WORK/virsh-version"; then
		ok "the root's libvirtd answers virsh in the root ($(grep 'Running hypervisor' "$WORK/virsh-version"))"
	else
		cat "$WORK/virsh-version"
		tail -n 20 "$WORK/libvirtd.out" "$R/var/log/libvirt/libvirtd.log" 2>/dev/null
		ko "the root's libvirtd answers virsh in the root (QEMU driver)"
	fi

	before=$(host_snapshot)
	RUN_STARTED=1
	# 1 boot per host setting, 32M memset cells in 512M guests: the 2x2 grid, a few
	# minutes under TCG with the guest image built first
	it_run 1800 720 "$WORK/run.out" "$WORK/run.err" env -i PATH="$ENV_PATH" HOME=/root LANG=C.UTF-8 \
		chroot "$R" thpeval run --host-thp=always --guest-thp=always --workloads=memset \
		--boots=1 --target-ci=none --memory=512M --size=32M --db=none --out=/root/run
	echo "thpeval run: exit $it_rc in $((SECONDS - it_t0)) s"
	grep -Ei 'image|accel|tcg|kvm' "$WORK/run.err" | head -n 5
	if ! it_over "thpeval run in the root"; then
		[ "$it_rc" -eq 0 ] || tail -n 15 "$WORK/run.err"
		check "thpeval run --host-thp=always from the installed package exits 0" [ "$it_rc" -eq 0 ]
		J=$R/root/run/results.json
		check "results.json written (--out in the root)" [ -s "$J" ]
		if [ -s "$J" ]; then
			echo "accel: $(jq -r '.accel + " (" + (.accel_reason // "") + "), image " + (.image_id // "?") +
				", libvirt " + .host.libvirt_version + ", QEMU " + .host.hypervisor_version' "$J")"
			grep -h -m1 -o 'Linux version [^ ]*' "$R"/root/run/guests/*.console.log 2>/dev/null | sort -u | sed 's/^/guest kernel: /'
			# shellcheck disable=SC2016	# jq's $v
			check "results.json: thpeval $VERSION, the 4 cells of host x guest THP never/always" \
				jqe --arg v "$VERSION" '.thpeval_version == $v and
					([.cells[] | select(.variant == null) | .host_thp + "/" + .guest_thp] | sort) ==
					["always/always", "always/never", "never/always", "never/never"]' "$J"
			check "every cell has repetitions, coverage evidence and a validity" \
				jqe '[.cells[] | .reps_ok > 0 and .coverage.host_huge_pct != null and
					.coverage.guest_huge_pct != null and has("valid")] | all' "$J"
			mm=$(validity_mismatches "$J")
			check "every cell's validity follows its coverage evidence (thpeval's rule)" [ "$mm" = "[]" ]
			[ "$mm" = "[]" ] || echo "   $mm"
			gn=$(jq '[.cells[] | select(.guest_thp == "never") | .coverage.guest_huge_pct] | max' "$J")
			ga=$(jq '[.cells[] | select(.guest_thp == "always") | .coverage.guest_huge_pct] | min' "$J")
			check "guest coverage follows the guest THP setting (never max $gn%, always min $ga%)" \
				jqe -n "$gn < 1 and $ga > 50"
			nv=$(jq '[.cells[] | select(.valid)] | length' "$J")
			nc=$(jq '.cells | length' "$J")
			hbad=$(jq '[.cells[] | select((.valid | not) and .host_thp != "never")] | length' "$J")
			f2m=$(free_2m_mib)
			if [ "$nv" = "$nc" ]; then
				ok "all $nc cells valid"
			elif [ "$hbad" = $((nc - nv)) ] && [ "$f2m" -lt 1024 ]; then
				sk "$((nc - nv)) of $nc cells invalid, all host-always: $f2m MiB of host memory free in 2M blocks now"
			else
				ko "$nv of $nc cells valid: $(jq -c '[.cells[] | select(.valid | not) | .invalid_reason]' "$J")"
			fi
			if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
				/usr/bin/python3 - "$R/usr/share/thpeval/results.schema.json" "$J" >"$WORK/schema.out" 2>&1 <<'EOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
errors = list(jsonschema.Draft7Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errors[:3]:
    print("   %s: %s" % ("/".join(map(str, e.path)), e.message))
sys.exit(1 if errors else 0)
EOF
				rc=$?
				cat "$WORK/schema.out"
				check "results.json is valid against the installed schema" [ "$rc" -eq 0 ]
			else
				sk "results.json against the installed schema: python3-jsonschema is not installed here"
			fi
		fi
		check "the guest image was built in the root (/var/cache/thpeval/images: $(du -sh "$R/var/cache/thpeval/images" 2>/dev/null | cut -f1))" \
			sh -c "[ -n \"\$(ls -A '$R/var/cache/thpeval/images' 2>/dev/null)\" ]"
	fi
	doms=$(inroot virsh -c qemu:///system list --all --name 2>/dev/null | sed '/^$/d' | tr '\n' ' ')
	check "no domain left in the root's libvirtd${doms:+: $doms}" [ -z "$doms" ]
	inroot thpeval host restore >/dev/null 2>&1
	RUN_STARTED=""
	after=$(host_snapshot)
	check "host THP and hugepage pool settings identical before and after" [ "$before" = "$after" ]
	[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after")

	pids="$LIBVIRTD_PID $VIRTLOGD_PID"
	stop_pid "$LIBVIRTD_PID"
	stop_pid "$VIRTLOGD_PID"
	LIBVIRTD_PID="" VIRTLOGD_PID=""
	left=$(root_pids | tr '\n' ' ')
	[ -n "$left" ] && ps -o pid,args -p "${left// /,}"
	check "the root's daemons stopped ($pids), no process left in the root" [ -z "$left" ]
	links_after=$(ls /sys/class/net)
	check "the host's network links as before ($(echo "$links_after" | tr '\n' ' '))" [ "$links_before" = "$links_after" ]
	if [ -n "$host_libvirtd" ]; then
		check "the host's libvirtd (pid $host_libvirtd) still runs and answers" \
			sh -c "kill -0 $host_libvirtd && virsh -c qemu:///system version >/dev/null 2>&1"
	fi
	phase_done run "$t"
fi

fresh_cleanup
echo "deb_fresh: times: ${TIMES#, }; total $((SECONDS - T0)) s"
echo "deb_fresh: pulled in:$PULLED; $((n1 - n0)) packages, ${DL:-?} downloaded by apt"
finish
