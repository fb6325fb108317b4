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
           man-db  # ManualPageTests renders the generated manual pages with man
           postgresql  # initdb/pg_ctl: SharedStoreTests start their own server on a Unix socket (no service)
           openssl  # a CA and a server certificate for the household server's TLS (SharedStoreCopyEndToEndTests)
           python3-pip  # installs selenium-axe-python below (not in Debian)
           dbus libnotify-bin python3-dbus python3-gi)  # watch --notify on a real session bus (WatchNotifyTests)

# `make deb` and its test (scripts/build-deb.sh, scripts/deb-test.sh): dpkg-shlibdeps, strip, lintian;
# mmdebstrap builds the clean Debian 12 root from Debian's packages, dig asks the helper in it.
deb_pkgs=(dpkg-dev binutils lintian mmdebstrap bind9-dnsutils man-db)

# What scripts/link-order.sh runs the helper under and talks to it with.
profile_pkgs=(valgrind binutils dnsmasq-base bind9-dnsutils python3 curl)

want=("${build_pkgs[@]}")
[ "${1:-}" = "--test" ] && want+=("${test_pkgs[@]}")
[ "${1:-}" = "--profile" ] && want+=("${profile_pkgs[@]}")
[ "${1:-}" = "--deb" ] && want+=("${deb_pkgs[@]}")

# axe-core for the browser tests' accessibility checks (HouseholdBrowserEndToEndTests): Debian does
# not package it, so it comes from PyPI. selenium-axe-python bundles axe-core 4.9 (WCAG 2.1 rules);
# axe-selenium-python's last release for Debian 12's Python 3.11 bundles axe-core 3.1, which has none.
pip_test() {
  [ "${1:-}" = "--test" ] || return 0
  /usr/bin/python3 -c 'import selenium_axe_python' 2>/dev/null && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "Missing Python package: sudo /usr/bin/python3 -m pip install --break-system-packages selenium-axe-python==2.2.0" >&2
    return 0
  fi
  /usr/bin/python3 -m pip install -q --break-system-packages selenium-axe-python==2.2.0
}

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { pip_test "${1:-}"; exit 0; }

if [ "$(id -u)" -ne 0 ]; then
  echo "Missing Debian packages: ${missing[*]}" >&2
  echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
  pip_test "${1:-}"
  exit 0
fi
echo "Installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Packages with a service (unbound) must not start it: tests start their own copies on loopback.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
pip_test "${1:-}"
