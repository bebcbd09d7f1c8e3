#!/bin/bash
# Check that orchestrator/ keeps its layers: every dependency points down.
#
# The orchestrator is layered, top to bottom:
#   orchestrator/cmd -> run -> report -> history -> analysis -> model -> base
# where base is orchestrator/virt/, host/, images/ and lib/. A file may depend on
# headers of its own layer or of any layer below it, never above; system headers
# are not looked at. This script fails (exit 1, one line per violation) on:
#   - an upward dependency, direct or through other headers (the compiler's own
#     `$CC -MM -MG` list of each .c and .h under orchestrator/, so nothing is
#     kept by hand); an indirect one names the include chain the compiler took;
#   - a dependency on an existing repository file outside the layers (guest/,
#     tests/, ...);
#   - an include circle among orchestrator modules (a module is a .c and its .h
#     of the same path stem), each elementary circle printed once; only
#     circles within one layer are listed, since one through two layers has an
#     upward dependency, reported on its own line;
#   - a .c or .h in orchestrator/ that is not in one of the layer folders.
# Last line: "layers: N files checked, N violations". Exit 2 on a usage error or
# when the compiler cannot run.
#
#   tools/layers.sh [--root=DIR] [--cc=CC] [-IDIR|-DX|-UX|-isystemDIR|-iquoteDIR]...
#
# --root is the checkout to check (default: the one this script lives in); the
# compiler runs there with the project's flags (-std=gnu11 -D_GNU_SOURCE -I.,
# the Makefile's PKGS through pkg-config as -isystem) plus any flags given.
#
# Direct includes (for the circles and for the chain an indirect violation is
# reported through) come from the same compiler run: `-H` prints every header it
# opens with its depth, so each line's parent is the last line one level up. That
# is the compiler's own resolution under the real flags and #if's, not a second
# parser of #include lines. One gap, harmless here: a header already read through
# the same lookup earlier in a translation unit is not printed again, so that
# repeated direct edge is missing; the header is then reachable through the
# earlier chain, and every header is also checked as its own translation unit,
# so reachability between modules (and so every circle) is unchanged; only the
# printed circle may route through that chain.
set -u

usage() {
	echo "usage: tools/layers.sh [--root=DIR] [--cc=CC] [-IDIR|-DX|-UX|-isystemDIR|-iquoteDIR]..." >&2
	exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd -P) || exit 2
cc=gcc
extra=()
for a in "$@"; do
	case $a in
	--root=?*) root=${a#--root=} ;;
	--cc=?*) cc=${a#--cc=} ;;
	-I?* | -D?* | -U?* | -isystem?* | -iquote?*) extra+=("$a") ;;
	-h | --help)
		sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
		exit 0
		;;
	*)
		echo "layers: unknown argument '$a'" >&2
		usage
		;;
	esac
done

if ! abs=$(cd "$root" 2>/dev/null && pwd -P); then
	echo "layers: cannot enter the root '$root': pass --root=DIR, a thpeval checkout" >&2
	exit 2
fi
root=$abs
if [ ! -d "$root/orchestrator" ]; then
	echo "layers: no orchestrator/ under '$root': pass --root=DIR, a thpeval checkout" >&2
	exit 2
fi
if ! "$cc" -E -x c /dev/null >/dev/null 2>&1; then
	echo "layers: cannot run the compiler '$cc': install gcc (tools/deps.sh) or pass --cc=CC" >&2
	exit 2
fi
cd "$root" || exit 2

flags=(-std=gnu11 -D_GNU_SOURCE -I.)
# the libraries' include directories as system ones, so -MM leaves them out
if [ -f Makefile ] && command -v "${PKG_CONFIG:-pkg-config}" >/dev/null 2>&1; then
	pkgs=$(sed -n 's/^PKGS[[:space:]]*:\{0,1\}=[[:space:]]*//p' Makefile)
	# shellcheck disable=SC2086 # one word per package
	for f in $("${PKG_CONFIG:-pkg-config}" --cflags-only-I $pkgs 2>/dev/null); do
		flags+=("-isystem${f#-I}")
	done
fi
flags+=("${extra[@]}")

tmp=$(mktemp -d /tmp/thpeval-layers.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

# one record per file: its -MM rule and its -H tree
: >"$tmp/all"
while IFS= read -r f; do
	if ! "$cc" "${flags[@]}" -MM -MG -H -MT "$f" "$f" >"$tmp/mm" 2>"$tmp/h"; then
		why=$(grep -m1 'error' "$tmp/h")
		echo "layers: '$cc -MM' failed on $f: ${why:-no message}; fix the file or pass its include flags" >&2
		exit 2
	fi
	{
		printf '@@file %s\n@@mm\n' "$f"
		cat "$tmp/mm"
		echo "@@h"
		cat "$tmp/h"
	} >>"$tmp/all"
done < <(find orchestrator -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

awk -v root="$root" '
BEGIN {
	rank["cmd"] = 6; rank["run"] = 5; rank["report"] = 4
	rank["history"] = 3; rank["analysis"] = 2; rank["model"] = 1; rank["virt"] = 0; rank["base"] = 0
	MAXCIRCLES = 100; MAXSTEPS = 1000000
	nfiles = 0; nv = 0; cur = ""
}
# a path relative to the root, "." and ".." folded; absolute when outside it
function norm(p,   parts, out, n, k, i, abs, res) {
	if (index(p, root "/") == 1)
		p = substr(p, length(root) + 2)
	abs = substr(p, 1, 1) == "/"
	n = split(p, parts, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (parts[i] == "" || parts[i] == ".")
			continue
		if (parts[i] == ".." && k > 0 && out[k] != "..") {
			k--
			continue
		}
		out[++k] = parts[i]
	}
	res = ""
	for (i = 1; i <= k; i++)
		res = res (i > 1 ? "/" : "") out[i]
	return (abs ? "/" : "") res
}
# cmd .. model, virt, base (host/ images/ lib/), unlayered (elsewhere in
# orchestrator/), outside (elsewhere in the repository) or system
function layer(p,   rest, d) {
	if (p ~ /^\// || p ~ /^\.\.\//)
		return "system"
	if (p ~ /^orchestrator\//) {
		rest = substr(p, 14)
		if (index(rest, "/") == 0)
			return "unlayered"
		d = substr(rest, 1, index(rest, "/") - 1)
		return (d in rank && d != "base") ? d : "unlayered"
	}
	if (p ~ /^(host|images|lib)\//)
		return "base"
	return "outside"
}
function exists(p,   line, r) {
	r = (getline line < p)
	if (r >= 0)
		close(p)
	return r >= 0
}
function top(p) {
	return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : p
}
function module(p) {
	sub(/\.[ch]$/, "", p)
	return p
}
# why file layer lf may not depend on p, or ""
function badfor(lf, p,   lp) {
	lp = layer(p)
	if (lp in rank && rank[lp] > rank[lf])
		return lp " is above " lf
	if (lp == "outside" && exists(p))
		return top(p) " is outside the layers"
	return ""
}
function violation(msg) {
	viol[++nv] = "layers: " msg
}
# the file just read: its own place, then each dependency -MM listed
function finish(   lf, n, deps, i, d, why, chain, links, nl, j, seen) {
	if (cur == "")
		return
	nfiles++
	lf = layer(cur)
	if (lf == "unlayered") {
		violation(cur " is not in a layer folder (cmd, run, report, history, analysis, model, virt)")
		return
	}
	sub(/^[^:]*:/, "", mm)
	n = split(mm, deps, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (deps[i] == "")
			continue
		d = norm(deps[i])
		if (d == cur || d in seen)
			continue
		seen[d] = 1
		why = badfor(lf, d)
		if (why == "")
			continue
		# reached through a header that is itself a violation: that one is reported
		chain = (d in first) ? first[d] : ""
		nl = split(chain, links, / -> /)
		for (j = 1; j <= nl; j++)
			if (badfor(lf, links[j]) != "")
				break
		if (nl > 0 && j <= nl)
			continue
		violation(cur " depends on " d " (" why ")" (chain != "" ? " through " chain : ""))
	}
}
# the module graph keeps the includes within one layer (and those from or to a
# file in no layer folder): a circle through two layers has an upward
# dependency, which is a violation line of its own and breaks the circle once
# fixed; listing those circles as well would only repeat it
function edge(a, b,   ma, mb, la, lb) {
	if (a !~ /^orchestrator\// || b !~ /^orchestrator\//)
		return
	la = layer(a); lb = layer(b)
	if (la != lb && la != "unlayered" && lb != "unlayered")
		return
	ma = module(a); mb = module(b)
	if (ma == mb)
		return
	adj[ma, mb] = 1
	node[ma] = 1; node[mb] = 1
}
$1 == "@@file" {
	finish()
	cur = norm(substr($0, 8)); mm = ""; sect = ""; guards = 0
	split("", first); split("", stack)
	next
}
$0 == "@@mm" { sect = "mm"; next }
$0 == "@@h" { sect = "h"; next }
sect == "mm" {
	line = $0
	sub(/\\$/, "", line)
	mm = mm " " line
	next
}
sect == "h" && /^Multiple include guards may be useful for:/ { guards = 1; next }
sect == "h" && !guards && /^\.+ / {
	depth = index($0, " ") - 1
	p = norm(substr($0, depth + 2))
	if (!(p in first)) {
		chain = ""
		for (i = 1; i < depth; i++)
			chain = chain (i > 1 ? " -> " : "") stack[i]
		first[p] = chain
	}
	stack[depth] = p
	edge(depth == 1 ? cur : stack[depth - 1], p)
	next
}
# each elementary circle once: from its smallest module, through larger ones only
function circles(s, u, d,   list, cnt, k, v, c, i) {
	cnt = split(nb[u], list, " ")
	for (k = 1; k <= cnt; k++) {
		v = list[k] + 0
		if (v == s) {
			c = ""
			for (i = 1; i <= d; i++)
				c = c name[path[i]] " -> "
			violation("include circle: " c name[s])
			ncircles++
		} else if (v > s && !onpath[v]) {
			if (ncircles >= MAXCIRCLES || ++steps > MAXSTEPS) {
				stopped = 1
				return
			}
			onpath[v] = 1; path[d + 1] = v
			circles(s, v, d + 1)
			onpath[v] = 0
		}
	}
}
END {
	finish()
	n = 0
	for (m in node)
		name[++n] = m
	for (i = 2; i <= n; i++) {
		m = name[i]
		for (j = i - 1; j >= 1 && name[j] > m; j--)
			name[j + 1] = name[j]
		name[j + 1] = m
	}
	for (i = 1; i <= n; i++) {
		nb[i] = ""
		for (j = 1; j <= n; j++)
			if ((name[i], name[j]) in adj)
				nb[i] = nb[i] " " j
	}
	ncircles = 0; steps = 0; stopped = 0
	for (s = 1; s <= n && !stopped; s++) {
		onpath[s] = 1; path[1] = s
		circles(s, s, 1)
		onpath[s] = 0
	}
	if (stopped)
		violation("more include circles not listed (" ncircles " shown)")
	for (i = 1; i <= nv; i++)
		print viol[i]
	printf "layers: %d file%s checked, %d violation%s\n", nfiles, nfiles == 1 ? "" : "s", nv, nv == 1 ? "" : "s"
	exit nv > 0
}' "$tmp/all"
