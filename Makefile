# The README's commands. `make run` and `make test` work on a fresh Debian 12 machine.
SWIFT ?= swift
# Builds share one scratch folder; CI starts from a clean clone, so this is its only build.
SWIFT_FLAGS ?=
# Extra arguments for `make run`, for example ARGS="--listen 127.0.0.1:0".
ARGS ?=
FUZZ_SECONDS ?= 300

.PHONY: all deps test-deps build release run test fuzz fuzz-smoke bench clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS)

# Starts the helper in the foreground with the embedded defaults (not root: ~/.local/state/scrolloff, port 5300).
run: release
	$$($(SWIFT) build -c release --show-bin-path)/scrolloff-dns start $(ARGS)

# Builds everything and runs every test (unit, property, end to end with real DNS clients).
test: test-deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS) && $(MAKE) --no-print-directory fuzz-smoke

# libFuzzer on the DNS codec (parse → serialize → parse) for FUZZ_SECONDS; fails on any crash.
fuzz:
	SWIFT=$(SWIFT) scripts/fuzz.sh $(FUZZ_SECONDS)

# The short run `make test` does, about a minute.
fuzz-smoke:
	SWIFT=$(SWIFT) scripts/fuzz.sh 60

clean:
	rm -rf .build
