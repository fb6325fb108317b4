#!/usr/bin/env bash
# Writes the manual pages and shell completions of `scrolloff` and `scrolloff-dns`, generated from
# their argument parsers, so they say what the programs parse and never drift from them:
#
#   scripts/generate-manuals.sh BIN_DIR OUT_DIR
#
#   OUT_DIR/man1/scrolloff.1, OUT_DIR/man1/scrolloff-dns.1      (mdoc, one page each, every verb)
#   OUT_DIR/completions/bash/scrolloff, …/bash/scrolloff-dns
#   OUT_DIR/completions/zsh/_scrolloff, …/zsh/_scrolloff-dns
#   OUT_DIR/completions/fish/scrolloff.fish, …/fish/scrolloff-dns.fish
#
# BIN_DIR holds scrolloff-dns (the CLI is the same program run under the name `scrolloff`). The
# pages come from swift-argument-parser's own `generate-manual` tool, built once from the checkout
# SwiftPM already fetched (the version Package.resolved pins) into .build/generate-manual; the
# completions from the programs' `--generate-completion-script`. `make release` runs this into
# .build/manuals, where `make install` and `make deb` take them from.
set -Eeuo pipefail

bin_dir=${1:?usage: scripts/generate-manuals.sh BIN_DIR OUT_DIR}
out=${2:?usage: scripts/generate-manuals.sh BIN_DIR OUT_DIR}
SWIFT=${SWIFT:-swift}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
parser=$source_dir/.build/checkouts/swift-argument-parser
scratch=$source_dir/.build/generate-manual

program=$bin_dir/scrolloff-dns
if [ ! -x "$program" ]; then
  echo "generate-manuals.sh: $program is missing; build it first (make release)." >&2
  exit 1
fi
if [ ! -f "$parser/Package.swift" ]; then
  echo "generate-manuals.sh: $parser is missing; it appears after the first build (swift build resolves it)." >&2
  exit 1
fi

# SwiftPM makes a product of each executable target of the package it builds, so the tool builds
# on its own, without the rest of swift-argument-parser's examples or this package. Scratch path
# of its own: a build here never touches this package's .build/debug or .build/release. The tool
# is kept between runs; a checkout of another version (Package.resolved changed) rebuilds it.
tool=$scratch/release/generate-manual
stamp=$scratch/parser-version
version=$(git -C "$parser" rev-parse HEAD 2>/dev/null || echo unknown)
if [ ! -x "$tool" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
  echo "Building swift-argument-parser's generate-manual (once, into $scratch)…"
  # shellcheck disable=SC2086
  "$SWIFT" build -c release --package-path "$parser" --scratch-path "$scratch" --product generate-manual ${SWIFT_FLAGS:-} >&2
  echo "$version" >"$stamp"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The CLI is scrolloff-dns started under the name `scrolloff` (ScrollOffCLI.isCLI), as the link
# installed beside it is.
ln -s "$(cd "$(dirname "$program")" && pwd)/scrolloff-dns" "$work/scrolloff"
ln -s "$(cd "$(dirname "$program")" && pwd)/scrolloff-dns" "$work/scrolloff-dns"

# The page's date: the last commit's, so the same sources give the same page (reproducible
# packages); today's outside a git checkout.
date=$(git -C "$source_dir" log -1 --format=%cs 2>/dev/null || date -u +%F)

mkdir -p "$out/man1" "$out/completions/bash" "$out/completions/zsh" "$out/completions/fish"
for name in scrolloff scrolloff-dns; do
  "$tool" "$work/$name" --output-directory "$out/man1" --date "$date" --section 1
  [ -s "$out/man1/$name.1" ] || { echo "generate-manuals.sh: no page was written for $name" >&2; exit 1; }
  # bash-completion sources the file, so it has no #! line of its own (lintian: bash-completion-with-hashbang).
  "$work/$name" --generate-completion-script bash | sed '1{/^#!/d}' >"$out/completions/bash/$name"
  "$work/$name" --generate-completion-script zsh >"$out/completions/zsh/_$name"
  "$work/$name" --generate-completion-script fish >"$out/completions/fish/$name.fish"
done
echo "Wrote the manual pages and completions of scrolloff and scrolloff-dns to $out"
