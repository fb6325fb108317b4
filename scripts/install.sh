#!/usr/bin/env bash
# Installs or removes Scroll Off as a system service: `make install` / `make uninstall` call this.
#
#   scripts/install.sh install   [--bin-dir DIR] [--manuals DIR]
#        the program from DIR (default .build/release), the manual pages and completions from the
#        manuals DIR (default .build/manuals, which `make release` writes: scripts/generate-manuals.sh)
#   scripts/install.sh uninstall                   PURGE=1 also removes the database, config and group
#
# One program serves both commands: `scrolloff-dns` is installed stripped, and `scrolloff` is a
# link to it (the program is the CLI when started under that name; docs/benchmarks.md, "Installed size").
#
# Locations come from the environment, as make passes them: PREFIX (/usr/local), DESTDIR (empty),
# SYSCONFDIR (/etc), UNITDIR ($PREFIX/lib/systemd/system, which systemd searches), STATEDIR
# (/var/lib/scrolloff). With DESTDIR set (packaging, tests) nothing outside DESTDIR is touched:
# no group, no chown, no systemctl. Running it twice is fine; an edited config is never overwritten.
set -Eeuo pipefail

action=${1:-}
shift || true
bin_dir=.build/release
manuals=.build/manuals
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) bin_dir=${2:?--bin-dir needs a folder}; shift 2 ;;
    --manuals) manuals=${2:?--manuals needs a folder}; shift 2 ;;
    *) echo "install.sh: unknown argument $1 (see the comment at the top of scripts/install.sh)" >&2; exit 2 ;;
  esac
done

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
SYSCONFDIR=${SYSCONFDIR:-/etc}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
STATEDIR=${STATEDIR:-/var/lib/scrolloff}
PURGE=${PURGE:-}
GROUP=scrolloff
UNIT=scrolloff-dns.service
# `scrolloff watch --notify` as a user unit, beside the system one's folder (…/systemd/user).
WATCH_UNIT=scrolloff-watch.service

source_dir=$(cd "$(dirname "$0")/.." && pwd)
bin=$DESTDIR$PREFIX/bin
share=$DESTDIR$PREFIX/share/scrolloff
doc=$DESTDIR$PREFIX/share/doc/scrolloff
units=$DESTDIR$UNITDIR
man1=$DESTDIR$PREFIX/share/man/man1
bash_completions=$DESTDIR$PREFIX/share/bash-completion/completions
fish_completions=$DESTDIR$PREFIX/share/fish/vendor_completions.d
# Where Debian's zsh looks: vendor-completions for packages in /usr, site-functions for /usr/local.
if [ "$PREFIX" = /usr ]; then zsh_completions=$DESTDIR/usr/share/zsh/vendor-completions
else zsh_completions=$DESTDIR$PREFIX/share/zsh/site-functions; fi
user_units=$DESTDIR$(dirname "$UNITDIR")/user
confdir=$DESTDIR$SYSCONFDIR/scrolloff
state=$DESTDIR$STATEDIR

is_root() { [ "$(id -u)" -eq 0 ]; }
# A step that fails (most often: writing to /usr/local or /etc as a normal user) says what to do.
trap 'echo "install.sh: the step above failed; to install system-wide run it as root: sudo make $action" >&2' ERR
# systemctl only for the real system: no DESTDIR, root, and systemd running as init.
manages_system() { [ -z "$DESTDIR" ] && is_root && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }

# The unit as shipped names /usr/local/bin, /etc/scrolloff and /var/lib/scrolloff; follow the
# chosen locations. StateDirectory= only covers /var/lib, so ReadWritePaths keeps the real one.
render_unit() {
  sed -e "s|/usr/local/bin/|$PREFIX/bin/|g" \
      -e "s|/usr/local/share/|$PREFIX/share/|g" \
      -e "s|/etc/scrolloff/|$SYSCONFDIR/scrolloff/|g" \
      -e "s|/var/lib/scrolloff|$STATEDIR|g" \
      "$source_dir/etc/systemd/$UNIT"
}

do_install() {
  if [ ! -x "$bin_dir/scrolloff-dns" ]; then
    echo "install.sh: $bin_dir/scrolloff-dns is missing; build it first with \`make release\` (as your own user)." >&2
    exit 1
  fi
  for page in scrolloff.1 scrolloff-dns.1; do
    if [ ! -f "$manuals/man1/$page" ]; then
      echo "install.sh: $manuals/man1/$page is missing; \`make release\` writes it (scripts/generate-manuals.sh)." >&2
      exit 1
    fi
  done

  install -d -m 0755 "$bin" "$share" "$doc" "$units" "$confdir" "$man1" "$bash_completions" "$zsh_completions" "$fish_completions"
  # Stripped: the symbols are half the file and nothing reads them at run time (Package.swift:
  # nothing looks a symbol up by name). Written beside and renamed, so a running helper keeps its file.
  strip --strip-unneeded --remove-section=.comment -o "$bin/.scrolloff-dns.new" "$bin_dir/scrolloff-dns"
  chmod 0755 "$bin/.scrolloff-dns.new"
  mv -f "$bin/.scrolloff-dns.new" "$bin/scrolloff-dns"
  ln -sfn scrolloff-dns "$bin/scrolloff"

  install -m 0644 "$manuals/man1/scrolloff.1" "$manuals/man1/scrolloff-dns.1" "$man1/"
  for name in scrolloff scrolloff-dns; do
    install -m 0644 "$manuals/completions/bash/$name" "$bash_completions/$name"
    install -m 0644 "$manuals/completions/zsh/_$name" "$zsh_completions/_$name"
    install -m 0644 "$manuals/completions/fish/$name.fish" "$fish_completions/$name.fish"
  done

  # The curated catalog, replaced whole so a list removed upstream does not linger. The helper
  # finds it next to its binary: $PREFIX/bin/scrolloff-dns → $PREFIX/share/scrolloff/blocklists.
  rm -rf "$share/blocklists.new"
  cp -R "$source_dir/blocklists" "$share/blocklists.new"
  find "$share/blocklists.new" -type d -exec chmod 0755 {} +
  find "$share/blocklists.new" -type f -exec chmod 0644 {} +
  rm -rf "$share/blocklists"
  mv "$share/blocklists.new" "$share/blocklists"
  install -m 0644 "$source_dir/README.md" "$doc/README.md"

  render_unit > "$units/$UNIT.tmp"
  chmod 0644 "$units/$UNIT.tmp"
  mv "$units/$UNIT.tmp" "$units/$UNIT"
  install -d -m 0755 "$user_units"
  sed -e "s|/usr/local/bin/|$PREFIX/bin/|g" "$source_dir/etc/systemd/$WATCH_UNIT" > "$user_units/$WATCH_UNIT"; chmod 0644 "$user_units/$WATCH_UNIT"

  # Never overwrite a configuration someone may have edited; put the new sample beside it.
  local config=$confdir/scrolloff.toml
  local config_note
  if [ ! -e "$config" ]; then
    install -m 0644 "$source_dir/etc/scrolloff.toml" "$config"
    config_note="installed the sample configuration $SYSCONFDIR/scrolloff/scrolloff.toml"
  elif cmp -s "$source_dir/etc/scrolloff.toml" "$config"; then
    rm -f "$config.new"
    config_note="kept $SYSCONFDIR/scrolloff/scrolloff.toml (same as the sample)"
  else
    install -m 0644 "$source_dir/etc/scrolloff.toml" "$config.new"
    config_note="kept your $SYSCONFDIR/scrolloff/scrolloff.toml; the new sample is beside it as scrolloff.toml.new (compare with: diff $SYSCONFDIR/scrolloff/scrolloff.toml{,.new})"
  fi

  local group_note
  if [ -n "$DESTDIR" ]; then
    group_note="group $GROUP not created: DESTDIR is set (a package's postinst should run: groupadd --system $GROUP)"
  elif ! is_root; then
    group_note="group $GROUP not created: that needs root (sudo groupadd --system $GROUP)"
  elif getent group "$GROUP" >/dev/null; then
    group_note="group $GROUP exists already"
  else
    groupadd --system "$GROUP"
    group_note="created the system group $GROUP"
  fi

  # The database and downloaded lists: root only (SPEC §11).
  install -d -m 0700 "$state"
  if [ -z "$DESTDIR" ] && is_root; then chown root:root "$state"; fi

  local reload_note="systemd is not running here (or DESTDIR is set): no daemon-reload"
  if manages_system; then
    systemctl daemon-reload
    reload_note="systemd reloaded its units"
    # Not restarted here: that would drop DNS for a moment at a time the person did not choose.
    if systemctl is-active --quiet "$UNIT"; then
      reload_note="$reload_note; the running helper still uses the old programs: sudo systemctl restart scrolloff-dns"
    fi
  fi

  cat <<MSG
Installed Scroll Off into ${DESTDIR:-/}:
  $PREFIX/bin/scrolloff-dns, and $PREFIX/bin/scrolloff (a link to it)
  the manual pages (man scrolloff, man scrolloff-dns) and bash, zsh and fish completions
  $PREFIX/share/scrolloff/blocklists (the curated lists)
  $UNITDIR/$UNIT
  $config_note
  $group_note
  $STATEDIR (0700, the database)
  $reload_note

Next:
  1. Let yourself use the CLI: sudo usermod -aG $GROUP \$USER, then log out and in again.
  2. Start the helper now and at every boot: sudo systemctl enable --now scrolloff-dns
  3. Point your resolver at 127.0.0.1 (README, "Install as a service": systemd-resolved,
     NetworkManager, /etc/resolv.conf or your router).
  4. Check everything: scrolloff doctor
MSG
}

do_uninstall() {
  if manages_system; then
    # Stopping first, so the control socket and port 53 are released before the files go.
    systemctl disable --now "$UNIT" 2>/dev/null || true
  fi
  # A stopped helper removed its firewall table; one killed beforehand left it (SPEC §9b: DNS
  # fails closed until it is back). Uninstalling takes it away, and only it.
  if [ -z "$DESTDIR" ] && is_root && command -v nft >/dev/null 2>&1 && nft list table inet scrolloff >/dev/null 2>&1; then
    nft delete table inet scrolloff || true
  fi
  rm -f "$bin/scrolloff" "$bin/scrolloff-dns" "$units/$UNIT" "$man1/scrolloff.1" "$man1/scrolloff-dns.1"
  for name in scrolloff scrolloff-dns; do
    rm -f "$bash_completions/$name" "$zsh_completions/_$name" "$fish_completions/$name.fish"
  done
  rm -f "$user_units/$WATCH_UNIT"
  rm -rf "$share" "$doc"
  if manages_system; then systemctl daemon-reload; fi

  local config=$confdir/scrolloff.toml
  rm -f "$config.new"
  local kept=()
  if [ -n "$PURGE" ]; then
    rm -rf "$confdir" "$state"
    if [ -z "$DESTDIR" ] && is_root && getent group "$GROUP" >/dev/null; then groupdel "$GROUP" || true; fi
    local group_gone=""
    if [ -z "$DESTDIR" ] && is_root; then group_gone=" and group $GROUP"; fi
    echo "Removed Scroll Off, its configuration, its database ($STATEDIR)$group_gone."
    return
  fi
  if [ -e "$config" ] && cmp -s "$source_dir/etc/scrolloff.toml" "$config"; then
    rm -f "$config"
  elif [ -e "$config" ]; then
    kept+=("your edited $SYSCONFDIR/scrolloff/scrolloff.toml")
  fi
  rmdir "$confdir" 2>/dev/null || true
  [ -d "$state" ] && kept+=("the database in $STATEDIR")
  echo "Removed Scroll Off's programs, lists and unit."
  if [ ${#kept[@]} -gt 0 ]; then
    printf 'Kept %s.\n' "$(IFS=,; echo "${kept[*]}" | sed 's/,/ and /g')"
    echo "To remove those too (and group $GROUP): make uninstall PURGE=1"
  fi
  echo "If your resolver points at 127.0.0.1, point it back (README, \"Install as a service\")."
}

case "$action" in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: scripts/install.sh install [--bin-dir DIR] [--manuals DIR] | uninstall   (PREFIX, DESTDIR, SYSCONFDIR, UNITDIR, STATEDIR, PURGE from the environment)" >&2; exit 2 ;;
esac
