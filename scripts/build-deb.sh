#!/usr/bin/env bash
# Builds the Debian package scrolloff_VERSION_ARCH.deb in the checkout's folder (`make deb`).
#
#   scripts/build-deb.sh [--bin-dir DIR] [--manuals DIR] [--out DIR]
#
# From the release build as `make release` leaves it (DIR .build/release, manuals .build/manuals),
# staged by scripts/install.sh with DESTDIR (the same installer as `make install`, into /usr), plus
# what only a package has: packaging/debian/ (control, maintainer scripts, copyright, changelog,
# conffiles), compressed manual pages, the dependencies dpkg-shlibdeps finds.
# The version is packaging/debian/changelog's and must be the one `scrolloff --version` says.
# Then lintian, when it is installed: the build fails on any error or warning it reports.
set -Eeuo pipefail

bin_dir=.build/release
manuals=.build/manuals
out=.
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) bin_dir=${2:?--bin-dir needs a folder}; shift 2 ;;
    --manuals) manuals=${2:?--manuals needs a folder}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    *) echo "build-deb.sh: unknown argument $1 (see the comment at the top of scripts/build-deb.sh)" >&2; exit 2 ;;
  esac
done

source_dir=$(cd "$(dirname "$0")/.." && pwd)
debian=$source_dir/packaging/debian
for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip; do
  command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool is missing: sudo scripts/install-deps.sh --deb" >&2; exit 1; }
done

version=$(dpkg-parsechangelog -l "$debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
# The CLI's version is the program's (scrolloff-dns run under the name `scrolloff`).
built=$(bash -c 'exec -a scrolloff "$0" --version' "$bin_dir/scrolloff-dns")
if [ "$built" != "$version" ]; then
  echo "build-deb.sh: packaging/debian/changelog says $version but the program says $built;" \
       "add a changelog entry (dch -v $built) or change the version in Sources/scrolloff/ScrollOff.swift." >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/scrolloff
PREFIX=/usr DESTDIR=$stage SYSCONFDIR=/etc UNITDIR=/lib/systemd/system STATEDIR=/var/lib/scrolloff \
  "$source_dir/scripts/install.sh" install --bin-dir "$bin_dir" --manuals "$manuals" >/dev/null

# The state folder is made by postinst, not shipped: dpkg would try to remove it at `apt remove`,
# which keeps the database.
rm -rf "${stage:?}/var"
# Debian compresses manual pages and the changelog (policy 12.3, 12.7); -n keeps no time stamp.
gzip -9n "$stage"/usr/share/man/man1/*.1
gzip -9n -c "$debian/changelog" >"$stage/usr/share/doc/scrolloff/changelog.gz"
install -m 0644 "$debian/copyright" "$stage/usr/share/doc/scrolloff/copyright"
# No lintian overrides: it reports no error or warning. One added later goes in
# usr/share/lintian/overrides/scrolloff, with a comment saying why.

# The libraries the program links (libc, libcurl, libsqlite3, libstdc++, libgcc), as dpkg-shlibdeps
# reads them from the binary; it wants a debian/control to run beside.
mkdir -p "$work/shlibs/debian"
printf 'Source: scrolloff\n\nPackage: scrolloff\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e"$stage/usr/bin/scrolloff-dns" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies for scrolloff-dns" >&2; exit 1; }

install -d -m 0755 "$stage/DEBIAN"
size=$(du -sk --apparent-size "$stage" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$size|" -e "s|@DEPENDS@|$depends|" \
  "$debian/control" >"$stage/DEBIAN/control"
install -m 0644 "$debian/conffiles" "$stage/DEBIAN/conffiles"
for script in postinst prerm postrm; do install -m 0755 "$debian/$script" "$stage/DEBIAN/$script"; done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/scrolloff_${version}_${arch}.deb
# Files owned by root whoever builds it; xz as Debian's own packages.
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "Built $deb ($(du -k "$deb" | cut -f1) KiB; installed size $size KiB)"

if command -v lintian >/dev/null; then
  # Errors and warnings fail the build.
  lintian --fail-on error,warning --info "$deb"
  echo "lintian: no errors or warnings"
else
  echo "lintian is not installed (sudo scripts/install-deps.sh --deb): the package was not checked" >&2
fi
