#!/bin/sh
# Start virtlogd and libvirtd if they are not running (there may be no systemd),
# and wait until libvirtd's socket answers. Needs root.
set -eu

SOCK=/run/libvirt/libvirt-sock

if [ "$(id -u)" -ne 0 ]; then
	echo "thpeval: starting libvirtd needs root; skipping (use --connect to reach a running one)" >&2
	exit 0
fi
# hugetlbfs before libvirtd: it looks for hugetlbfs mounts when it starts, and the
# --host-backing=hugetlbfs reference arm needs one
if ! grep -q ' hugetlbfs ' /proc/mounts && [ -d /sys/kernel/mm/hugepages ]; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null ||
		echo "thpeval: cannot mount hugetlbfs on /dev/hugepages (the hugetlbfs arm will not run)" >&2
fi
# and one of 1G pages where the host offers them, for --host-backing=...,hugetlbfs-1g
if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ] &&
	! grep -q ' hugetlbfs .*pagesize=1024M' /proc/mounts; then
	mkdir -p /dev/hugepages1G
	mount -t hugetlbfs -o pagesize=1G hugetlbfs /dev/hugepages1G 2>/dev/null ||
		echo "thpeval: cannot mount hugetlbfs of 1G pages on /dev/hugepages1G (the hugetlbfs-1g arm will not run)" >&2
fi
# /dev/kvm as udev leaves it (Debian's 50-udev-default.rules: group kvm, mode 0660). With no
# udev, a node made outside this root can keep a group id that names another group here
# (ssl-cert on one machine of this kind), so the QEMU user (libvirt-qemu, in group kvm)
# cannot open it. libvirt's capability probe may override file permissions and finds
# KVM, its check as the QEMU user does not, and it takes its cache of QEMU's
# capabilities for stale: it probes QEMU again before every guest it starts (most of
# a boot under TCG: doc/install.md). thpeval's choice of KVM or TCG does not change.
if [ -c /dev/kvm ] && getent group kvm >/dev/null 2>&1 && [ "$(stat -c %G /dev/kvm)" != kvm ] &&
	[ "$(stat -c %a /dev/kvm)" != 666 ]; then
	was=$(stat -c '%U:%G %a' /dev/kvm)
	if chgrp kvm /dev/kvm && chmod 0660 /dev/kvm; then
		echo "thpeval: /dev/kvm was $was, now root:kvm 0660 as udev's rule has it (libvirt re-probed QEMU before every guest)" >&2
	fi
fi
if ! pgrep -x virtlogd >/dev/null 2>&1; then
	virtlogd -d
fi
if ! pgrep -x libvirtd >/dev/null 2>&1; then
	# Under a reaper (tini -s, a child subreaper): libvirtd double-forks QEMU, and
	# where PID 1 is slow to reap orphans (containers, microVMs) every guest
	# teardown would wait for it; tini reaps them at once.
	if command -v tini >/dev/null 2>&1; then
		mkdir -p /var/log/libvirt
		setsid tini -s -- libvirtd </dev/null >>/var/log/libvirt/libvirtd-stdout.log 2>&1 &
	else
		libvirtd -d
	fi
fi
i=0
while [ ! -S "$SOCK" ]; do
	i=$((i + 1))
	if [ "$i" -gt 100 ]; then
		echo "thpeval: libvirtd did not create $SOCK within 10 s; see /var/log/libvirt/libvirtd.log" >&2
		exit 1
	fi
	sleep 0.1
done
