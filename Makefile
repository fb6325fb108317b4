# The README's commands. `make run` and `make test` work on a fresh Debian 12 machine.
SWIFT ?= swift
# Builds share one scratch folder; CI starts from a clean clone, so this is its only build.
SWIFT_FLAGS ?=
# Extra arguments for `make run`, for example ARGS="--listen 127.0.0.1:0".
ARGS ?=
FUZZ_SECONDS ?= 300
# When set, `make fuzz` runs this many inputs instead of FUZZ_SECONDS (FUZZ_RUNS=10000000: the 10 M-run target).
FUZZ_RUNS ?=
# `make install` locations (scripts/install.sh); DESTDIR stages into a folder for packaging.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
STATEDIR ?= /var/lib/scrolloff
# `make uninstall PURGE=1` also removes the database, the configuration and the group.
PURGE ?=

.PHONY: all deps test-deps deb-deps build release run test fuzz fuzz-smoke bench clean install uninstall deb deb-test

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

deb-deps:
	@scripts/install-deps.sh --deb

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# The Swift runtime is linked in, so installed binaries keep working whatever happens to the
# toolchain they were built with (they need only Debian's libc, libstdc++, libcurl and libsqlite3).
# Each function gets its own section, in every module, so that the link can place the helper's
# working code together (Package.swift, scripts/link-order.sh). bench/ builds through this target.
RELEASE_FLAGS ?= --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections

# SwiftPM does not count the link order (scripts/link-order/) as an input of the link: a newer
# order removes the helper binary, so that this build links it again with the new order.
# Then the manual pages and completions, from the programs' own argument parsers, into .build/manuals.
release: deps
	@bin="$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)"; \
	    if [ scripts/link-order/scrolloff-dns.txt -nt "$$bin/scrolloff-dns" ]; then rm -f "$$bin/scrolloff-dns"; fi
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS)
	SWIFT=$(SWIFT) scripts/generate-manuals.sh "$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)" .build/manuals

# Starts the helper in the foreground with the embedded defaults (not root: ~/.local/state/scrolloff, port 5300).
run: release
	$$($(SWIFT) build -c release --show-bin-path)/scrolloff-dns start $(ARGS)

# Builds everything and runs every test (unit, property, end to end with real DNS clients).
test: test-deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	/usr/bin/python3 scripts/check-catalog.py
	SWIFT=$(SWIFT) SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/run-tests.sh && $(MAKE) --no-print-directory fuzz-smoke

# libFuzzer on the DNS codec (parse → serialize → parse) and the TCP framer, then on the control
# API's decoding (every endpoint's body, queries, path ids, the page's forms), for FUZZ_SECONDS
# each, or FUZZ_RUNS inputs each when set; fails on any crash.
fuzz:
	SWIFT=$(SWIFT) FUZZ_RUNS=$(FUZZ_RUNS) scripts/fuzz.sh $(FUZZ_SECONDS)

# The short run `make test` does, about a minute: 30 s for each target.
fuzz-smoke:
	SWIFT=$(SWIFT) FUZZ_RUNS= scripts/fuzz.sh 30

# Installs the release program (stripped; `scrolloff` a link to `scrolloff-dns`), the manual pages and
# completions, the curated lists, the unit and the sample config (as root).
# Builds them first only when this user owns the checkout (root on a fresh machine): sudo in a
# user's checkout would leave a root-owned .build behind, and sudo's secure_path often has no
# swift, so then a missing or stale build stops here with what to run. Either way
# `git pull && sudo make install` never installs the previous build.
install:
	@if [ ! -x .build/release/scrolloff-dns ] || [ ! -f .build/manuals/man1/scrolloff.1 ] \
	    || [ -n "$$(find Package.swift Sources scripts/link-order -newer .build/release/scrolloff-dns -print -quit)" ]; then \
	    if [ "$$(stat -c %u .)" = "$$(id -u)" ]; then $(MAKE) --no-print-directory release || exit 1; \
	    else echo 'the release build is missing or older than the sources: run `make release` as yourself, then `sudo make install`' >&2; \
	    exit 1; fi; fi
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" SYSCONFDIR="$(SYSCONFDIR)" UNITDIR="$(UNITDIR)" STATEDIR="$(STATEDIR)" \
		scripts/install.sh install --bin-dir .build/release

# Stops and removes the service; keeps the database and an edited config unless PURGE=1.
uninstall:
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" SYSCONFDIR="$(SYSCONFDIR)" UNITDIR="$(UNITDIR)" STATEDIR="$(STATEDIR)" \
		PURGE="$(PURGE)" scripts/install.sh uninstall

# The Debian package scrolloff_VERSION_ARCH.deb in this folder, from the release build, staged by
# scripts/install.sh (packaging/debian/, scripts/build-deb.sh); lintian checks it when installed.
deb: release deb-deps
	scripts/build-deb.sh

# Installs that package into a clean Debian 12 root and runs it there (scripts/deb-test.sh, as root).
deb-test: deb
	scripts/deb-test.sh

clean:
	rm -rf .build
