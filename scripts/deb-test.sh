#!/usr/bin/env bash
# The Debian package in a clean Debian 12 root, as a new user would meet it (`make deb-test`, and
# .ci/run after `make test`). As root:
#
#   scripts/deb-test.sh [scrolloff_VERSION_ARCH.deb]     (default: the one `make deb` left here)
#
# 1. A clean bookworm root from Debian's packages (mmdebstrap, variant apt: the essential packages
#    and apt). Its tarball is kept in .build/deb-test/ so a second run skips this; CI's fresh clone
#    has none and builds it.
# 2. `apt-get install ./scrolloff_*.deb` in it (chroot), which fetches the dependencies from the
#    same mirror; the group, the state folder, the enabled unit, the manual pages are checked, and
#    installing it again keeps an edited /etc/scrolloff/scrolloff.toml.
# 3. `scrolloff-dns check-config`, then the helper started in the root (no systemd in a chroot: run
#    directly, in a network namespace of its own so it answers on port 53 as installed), asked DNS
#    questions with dig and CLI questions with the installed `scrolloff`, as root and as a member
#    of the group scrolloff.
# 4. `apt-get remove`: the configuration, the database and the group stay; `apt-get purge`: they
#    go, and nothing named scrolloff is left anywhere in the root.
# Everything is undone on every path: the helper, the namespace, the mounts (a private mount
# namespace of its own, and traps), the root's folder.
set -Eeuo pipefail

source_dir=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm
mirror=${DEB_TEST_MIRROR:-http://deb.debian.org/debian}
cache=$source_dir/.build/deb-test

if [ "$(id -u)" -ne 0 ]; then
  echo "deb-test.sh: needs root (chroot, mounts, a network namespace): sudo scripts/deb-test.sh" >&2
  exit 1
fi
for tool in mmdebstrap dig ip unshare chroot; do
  command -v "$tool" >/dev/null || { echo "deb-test.sh: $tool is missing: scripts/install-deps.sh --deb" >&2; exit 1; }
done

# Mounts made from here on die with this process, whatever stops it.
if [ -z "${DEB_TEST_PRIVATE_MOUNTS:-}" ]; then
  DEB_TEST_PRIVATE_MOUNTS=1 exec unshare --mount --propagation private "$0" "$@"
fi

deb=${1:-}
if [ -z "$deb" ]; then
  shopt -s nullglob
  debs=("$source_dir"/scrolloff_*.deb)
  [ ${#debs[@]} -eq 1 ] || { echo "deb-test.sh: expected one scrolloff_*.deb in $source_dir (make deb), found ${#debs[@]}" >&2; exit 1; }
  deb=${debs[0]}
fi
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")

started=$(date +%s)
step() { echo "== deb-test [$(( $(date +%s) - started )) s] $*"; }
fail() { echo "deb-test.sh: FAILED: $*" >&2; exit 1; }

root=$(mktemp -d /tmp/scrolloff-deb-test.XXXXXX)
netns=deb-test-$$
helper_pid=
cleanup() {
  local status=$?
  if [ -n "$helper_pid" ] && kill -0 "$helper_pid" 2>/dev/null; then
    kill -TERM "$helper_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$helper_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$helper_pid" 2>/dev/null || true
  fi
  ip netns delete "$netns" 2>/dev/null || true
  for mount in "$root/dev/pts" "$root/dev" "$root/proc"; do
    mountpoint -q "$mount" 2>/dev/null && umount -l "$mount"
  done
  rm -rf --one-file-system "$root"
  if [ "$status" -eq 0 ]; then step "passed"; else echo "== deb-test: failed after $(( $(date +%s) - started )) s" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
leftovers() { find "$root" -xdev -name '*scrolloff*' ! -path "$root/tmp/*" | sed "s|^$root||" | sort; }

# 1. The clean root. The tarball's name carries what it is made of, so a change makes a new one.
tarball=$cache/$suite-apt-$(echo "$mirror" | md5sum | cut -c1-8).tar
if [ ! -s "$tarball" ]; then
  step "building a clean $suite root with mmdebstrap from $mirror (cached in $cache)"
  mkdir -p "$cache"
  # --format: mmdebstrap guesses it from the name's extension, and "x.tar.part" would be a folder.
  mmdebstrap --quiet --variant=apt --mode=root --format=tar "$suite" "$tarball.part" "$mirror"
  mv "$tarball.part" "$tarball"
else
  step "a clean $suite root from the cached $tarball"
fi
tar -xf "$tarball" -C "$root"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No services start in a root (policy-rc.d, as in Debian's build chroots).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

# 2. Install, as the README says.
step "apt-get install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get update -qq
in_root apt-get install -y -qq "./tmp/$(basename "$deb")" >"$root/tmp/install.log" 2>&1 \
  || { cat "$root/tmp/install.log"; fail "apt-get install"; }
grep -q "sudo usermod -aG scrolloff" "$root/tmp/install.log" || { cat "$root/tmp/install.log"; fail "postinst did not say what to do next"; }
in_root getent group scrolloff >/dev/null || fail "postinst did not create the group scrolloff"
[ "$(stat -c '%a %U' "$root/var/lib/scrolloff")" = "700 root" ] || fail "/var/lib/scrolloff is not 0700 root"
[ -L "$root/etc/systemd/system/multi-user.target.wants/scrolloff-dns.service" ] || fail "the unit was not enabled"
[ "$(readlink "$root/usr/bin/scrolloff")" = scrolloff-dns ] || fail "/usr/bin/scrolloff is not a link to scrolloff-dns"
grep -qx /etc/scrolloff/scrolloff.toml "$root/var/lib/dpkg/info/scrolloff.conffiles" || fail "scrolloff.toml is not a conffile"
for page in scrolloff scrolloff-dns; do
  man -l "$root/usr/share/man/man1/$page.1.gz" 2>/dev/null | grep -q "$page" || fail "man $page does not render"
done
for completion in usr/share/bash-completion/completions/scrolloff usr/share/zsh/vendor-completions/_scrolloff \
                  usr/share/fish/vendor_completions.d/scrolloff.fish; do
  [ -s "$root/$completion" ] || fail "/$completion is missing"
done

# An edited configuration is the admin's: installing the package again (an upgrade runs the same
# steps) keeps it, as dpkg keeps an edited conffile, and says the next steps only the first time.
echo "# edited by deb-test" >>"$root/etc/scrolloff/scrolloff.toml"
in_root apt-get install -y -qq --reinstall "./tmp/$(basename "$deb")" >"$root/tmp/reinstall.log" 2>&1 \
  || { cat "$root/tmp/reinstall.log"; fail "apt-get install --reinstall"; }
[ "$(tail -n 1 "$root/etc/scrolloff/scrolloff.toml")" = "# edited by deb-test" ] || fail "installing again replaced the edited configuration"
! grep -q "sudo usermod" "$root/tmp/reinstall.log" || fail "installing again repeated the first install's next steps"

# 3. The installed programs.
step "scrolloff-dns check-config"
in_root scrolloff-dns check-config || fail "check-config on the installed /etc/scrolloff/scrolloff.toml"

step "starting the helper in the root, in network namespace $netns"
ip netns add "$netns"
ip -n "$netns" link set lo up
# A root install's defaults (/etc/scrolloff/scrolloff.toml, /var/lib/scrolloff, /run/scrolloff), on
# 127.0.0.1:53 only (a namespace may have no IPv6), with an upstream where nothing answers: what
# this asks is answered by the helper itself. The household page is off: this test is not about it.
mkdir -p "$root/run/scrolloff"
ip netns exec "$netns" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin LC_ALL=C.UTF-8 \
  scrolloff-dns start --listen 127.0.0.1:53 --upstream 127.0.0.1:5399 --web-listen off >"$root/tmp/helper.out" 2>"$root/tmp/helper.err" &
helper_pid=$!
for _ in $(seq 300); do
  grep -q "listening" "$root/tmp/helper.out" 2>/dev/null && [ -S "$root/run/scrolloff/control.sock" ] && break
  kill -0 "$helper_pid" 2>/dev/null || { cat "$root/tmp/helper.err"; fail "the helper exited at start"; }
  sleep 0.1
done
[ -S "$root/run/scrolloff/control.sock" ] || { cat "$root/tmp/helper.err"; fail "the helper did not open its control socket within 30 s"; }

in_netns_dig() { ip netns exec "$netns" dig @127.0.0.1 -p 53 +tries=1 +time=3 "$@"; }
# The canary that turns Firefox's own DoH off is answered NXDOMAIN by the helper itself.
in_netns_dig use-application-dns.net | grep -q "status: NXDOMAIN" || fail "dig use-application-dns.net was not NXDOMAIN"
# A CLI question as root, then one as a member of the group (the socket is 0660 root:scrolloff).
in_root scrolloff status >"$root/tmp/status.out" || { cat "$root/tmp/status.out"; fail "scrolloff status as root"; }
in_root useradd --create-home --groups scrolloff member
# Numeric ids: chroot would look names up in this machine's files, not the root's.
member_ids=$(in_root id -u member):$(in_root id -g member)
group_id=$(in_root getent group scrolloff | cut -d: -f3)
chroot --userspec="$member_ids" --groups="$group_id" "$root" /usr/bin/env -i PATH=/usr/bin HOME=/home/member \
  scrolloff status --json >"$root/tmp/status.json" || { cat "$root/tmp/status.json"; fail "scrolloff status as a member of scrolloff"; }
in_root scrolloff block instagram --reason "deb test" || fail "scrolloff block instagram"
[ "$(in_netns_dig +short www.instagram.com A)" = "0.0.0.0" ] || fail "www.instagram.com is not blocked after scrolloff block"
kill -TERM "$helper_pid"
wait "$helper_pid" || fail "the helper did not stop cleanly on SIGTERM"
helper_pid=
# systemd removes the unit's RuntimeDirectory when it stops; here the test made it.
rm -rf "$root/run/scrolloff"

# 4. Remove keeps the configuration, the database and the group; purge takes them.
step "apt-get remove scrolloff"
in_root apt-get remove -y -qq scrolloff >/dev/null
[ ! -e "$root/usr/bin/scrolloff-dns" ] && [ ! -e "$root/usr/bin/scrolloff" ] || fail "the programs are still there after remove"
[ -f "$root/etc/scrolloff/scrolloff.toml" ] || fail "remove took the configuration"
[ -n "$(ls -A "$root/var/lib/scrolloff")" ] || fail "remove took the database"
in_root getent group scrolloff >/dev/null || fail "remove took the group"
in_root dpkg-query -W -f='${db:Status-Abbrev}' scrolloff | grep -q '^rc' || fail "dpkg does not list scrolloff as removed with its configuration"

step "apt-get purge scrolloff"
in_root apt-get purge -y -qq scrolloff >/dev/null
! in_root getent group scrolloff >/dev/null || fail "purge left the group"
left=$(leftovers)
[ -z "$left" ] || fail "purge left these behind: $left"
! in_root dpkg-query -W scrolloff >/dev/null 2>&1 || fail "dpkg still knows scrolloff after purge"
