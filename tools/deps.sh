#!/bin/sh
# Install the Debian packages thpeval needs to build, test and run, if missing.
# Idempotent: does nothing (and needs no network) when everything is present.
set -eu

PKGS="gcc make pkg-config libc6-dev
libvirt-daemon-system libvirt-dev qemu-system-x86 qemu-utils
libguestfs-dev supermin linux-image-amd64
libcmocka-dev libjson-c-dev libsqlite3-dev libpq-dev postgresql libxml2-dev libxml2-utils jq stress-ng tini python3-jsonschema python3-scipy valgrind liblzma-dev clang libclang-rt-14-dev chromium
linux-source-6.1 bc flex bison libelf-dev libssl-dev e2fsprogs xz-utils
dpkg-dev debhelper lintian
ansible-lint shellcheck
ansible-core openssh-server
redis-server redis-tools"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$st" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "thpeval: missing packages:$missing; run as root or: apt-get install$missing" >&2
	exit 1
fi

echo "thpeval: installing missing packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# no daemon of these packages is started by their install (postgresql, redis-server,
# openssh-server): the tests start their own and stop them by pid; policy-rc.d
# says no to every start, and whatever was there before is put back
POLICY=/usr/sbin/policy-rc.d
SAVED=""
if [ -e "$POLICY" ]; then
	SAVED=$(mktemp)
	cp -p "$POLICY" "$SAVED"
fi
restore_policy() {
	if [ -n "$SAVED" ]; then mv -f "$SAVED" "$POLICY"; else rm -f "$POLICY"; fi
}
trap restore_policy EXIT
printf '#!/bin/sh\nexit 101\n' >"$POLICY"
chmod 0755 "$POLICY"
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
