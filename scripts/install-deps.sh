#!/usr/bin/env bash
# Installs the Debian packages that building and testing Scroll Off need, when they are missing.
# As root it installs them; otherwise it lists what is missing and carries on (the build may still work).
set -euo pipefail

build_pkgs=(libsqlite3-dev libcurl4-openssl-dev pkg-config)
# Real DNS clients, peers and tools the tests drive (DEVELOPERS.md lists why each is here).
test_pkgs=(bind9-dnsutils knot-dnsutils dnsperf dnsmasq-base unbound faketime python3-dnspython
           python3 iproute2 util-linux procps curl sqlite3 binutils
           e2fsprogs  # mkfs.ext2: WritebackErrorTests' failing disk
           nftables  # the [firewall] table, applied in test namespaces
           systemd  # systemd-analyze verify checks the unit (etc/systemd/)
           chromium chromium-driver python3-selenium  # the household page in a real browser
           dbus libnotify-bin python3-dbus python3-gi)  # watch --notify on a real session bus (WatchNotifyTests)

# What scripts/link-order.sh runs the helper under and talks to it with.
profile_pkgs=(valgrind binutils dnsmasq-base bind9-dnsutils python3 curl)

want=("${build_pkgs[@]}")
[ "${1:-}" = "--test" ] && want+=("${test_pkgs[@]}")
[ "${1:-}" = "--profile" ] && want+=("${profile_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "Missing Debian packages: ${missing[*]}" >&2
  echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "Installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Packages with a service (unbound) must not start it: tests start their own copies on loopback.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
