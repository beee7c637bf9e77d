# Thin wrapper around CMake. `make demo` and `make test` are the README's quick start.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench gate gate-baseline fuzz check-format format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)

bench: build
	cmake -S . -B $(BUILD)-bench -DCMAKE_BUILD_TYPE=Release && cmake --build $(BUILD)-bench -j $(JOBS) --target bench

# The performance gate (docs/performance.md, "The CI gate"): nsalloc against
# mimalloc 3.4.3 from ../shared/peers on the build of `make test`, judged
# against bench/gate/baseline.json; gate-baseline rewrites that file.
GATE = python3 bench/gate/gate.py --config $(BUILD)/bench/gate/gate-config.json
gate: build
	$(GATE)

gate-baseline: build
	$(GATE) --write-baseline bench/gate/baseline.json

# A long randomized campaign of the differential fuzzer (tests/fuzz/README.md);
# a new seed each time unless FUZZ_SEED is given. Inputs that fail are saved
# in $(BUILD)/fuzz-crash-<seed>-<n>.
FUZZ_SECONDS ?= 300
FUZZ_SEED    ?= $(shell date +%s)
fuzz: configure
	cmake --build $(BUILD) -j $(JOBS) --target fuzz_random
	cd $(BUILD) && tests/fuzz/fuzz_random --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

check-format:
	scripts/check-format.sh

format:
	scripts/check-format.sh --fix

clean:
	rm -rf $(BUILD)
