#!/bin/sh
# Hosts-mode figures (SPEC §10): writing a 100,000-domain section (target <= 200 ms), then the cost
# of a glibc lookup through that file, which `getent` reads line by line on every call. The lookups
# run in a private mount namespace with the file bind-mounted over /etc/hosts (root), so the real
# /etc/hosts is never touched. Usage: bench/hosts.sh [domain-count]
set -eu
cd "$(dirname "$0")/.."
count=${1:-100000}
swift build -c release --product scrolloff-bench >&2
bin=$(swift build -c release --show-bin-path)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin/scrolloff-bench" hosts "$count" "$dir/hosts" || true
lines=$(wc -l < "$dir/hosts")
printf '127.0.0.1 localhost\n::1 localhost\n' > "$dir/small"
unshare -m sh -c "
  mount --bind '$dir/hosts' /etc/hosts
  last=\$(grep '^0.0.0.0 ' /etc/hosts | tail -1 | cut -d' ' -f2)
  for name in \"\$last\" not-listed.example; do
    start=\$(date +%s%N)
    i=0; while [ \$i -lt 20 ]; do getent -s files ahostsv4 \"\$name\" >/dev/null || true; i=\$((i+1)); done
    end=\$(date +%s%N)
    echo \"  getent through $lines lines, \$name: \$(( (end - start) / 20000000 )) ms per lookup (process start included)\"
  done
  mount --bind '$dir/small' /etc/hosts
  start=\$(date +%s%N)
  i=0; while [ \$i -lt 20 ]; do getent -s files ahostsv4 not-listed.example >/dev/null || true; i=\$((i+1)); done
  end=\$(date +%s%N)
  echo \"  getent through a two-line file: \$(( (end - start) / 20000000 )) ms per lookup (the process start alone)\"
"
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
