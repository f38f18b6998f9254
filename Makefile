# HybridInference: the two commands a newcomer needs are `make demo` and `make test`.
# Each provisions what it needs first (llama.cpp, the models), idempotently and cached.

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Where scripts/common.sh puts llama.cpp (one source of truth for the pinned version).
LLAMA_PREFIX := $(shell bash -c '. scripts/common.sh && echo "$$LLAMA_PREFIX"')
HI_MODELS := $(shell bash -c '. scripts/common.sh && echo "$$HI_MODELS"')

# The build finds llama.pc here; the binaries find libllama here (rpath, and the
# library path for anything run through make).
export PKG_CONFIG_PATH := $(LLAMA_PREFIX)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
export LD_LIBRARY_PATH := $(LLAMA_PREFIX)/lib$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
export HYBRID_TEST_TINY_MODEL ?= $(HI_MODELS)/tiny-random-llama.gguf

SWIFT_LINK := -Xlinker -rpath -Xlinker $(LLAMA_PREFIX)/lib
PROMPT ?= Why is the sky blue?

.PHONY: help setup build test test-gpu bench-gpu lint walls docs sanitize demo bench fuzz clean

help:
	@echo "make demo   - set up, then answer a prompt on the default on-device model (hybrid with GEMINI_API_KEY)"
	@echo "make test   - set up, then lint, check the module walls, build the docs and run the whole test suite"
	@echo "make test-gpu - the GPU tests on llama.cpp's Vulkan build (set up apart, LLAMA_GPU=vulkan; lavapipe without a GPU)"
	@echo "make docs   - the DocC documentation, warnings as errors, into .build/docs (part of make test)"
	@echo "make sanitize - the local and session suites under AddressSanitizer and ThreadSanitizer (a few minutes)"
	@echo "make bench  - benchmarks beside llama-bench, llama-server and curl; writes the tables of Benchmarks/RESULTS.md (BENCH_STEPS=\"render parity\" for some)"
	@echo "make bench-gpu - the GPU row of Benchmarks/RESULTS.md: every layer on the Vulkan device beside llama-bench -ngl 99"
	@echo "make fuzz   - libFuzzer on the SSE parser, response decoding, GGUF check, chat templates, schema grammars, the JSON prefix parser, the HTTP/1.1 response parser and the image check (FUZZ_SECONDS=60 each, at once)"
	@echo "make setup  - only provision llama.cpp and the models (PREFIX=... to choose where llama.cpp goes)"

setup:
	@scripts/setup.sh --default-model

build: setup
	swift build $(SWIFT_LINK)

# The style is .swift-format at the root; `swift format format -i -r Sources Tests Benchmarks Fuzz` applies it.
# Also checks the generator of Benchmarks/RESULTS.md's tables on canned benchmark output.
lint:
	swift format lint --strict -r Sources Tests Benchmarks Fuzz Examples Package.swift
	python3 scripts/test-results-tables.py

# The module walls (the Architecture article, "Modules and walls"): the targets'
# dependencies, and a cloud-only app built with no llama.cpp.
walls:
	scripts/check-walls.sh

# The DocC catalog (Sources/HybridInference/HybridInference.docc) against the public API:
# symbol graphs extracted from the debug build (no rebuild), docc warnings as errors.
docs: setup
	scripts/docs.sh $(SWIFT_LINK)

test: setup lint walls docs
	swift build --build-tests $(SWIFT_LINK)
	scripts/check-fuzz-entries.sh $(SWIFT_LINK)
	scripts/check-transport-twins.sh $(SWIFT_LINK)
	# The attention decisions the tests make go to a directory of the run's own, not the user's cache.
	# GPUTests are make test-gpu's (a Vulkan build on lavapipe): left out here, not skipped.
	attention=$$(mktemp -d) && HYBRID_INFERENCE_ATTENTION_DIR=$$attention HYBRID_REQUIRE_PREREQUISITES=1 \
		swift test --skip-build --skip GPUTests $(SWIFT_LINK); status=$$?; rm -rf "$$attention"; exit $$status

# Not part of `make test`: llama.cpp's Vulkan build in a prefix of its own (LLAMA_GPU=vulkan,
# ~17 min the first time on 2 shared cores), the package built against it into .build-gpu, and the
# GPUTests suite, which skips elsewhere. See README, "GPUs".
test-gpu:
	scripts/test-gpu.sh

# Not part of `make test`: two more full builds (.build/asan, .build/tsan). See README, Tests.
sanitize: setup
	scripts/sanitize.sh address thread

demo: setup
	@mkdir -p .build
	@echo "hybrid-inference: building hybrid-chat (release; quiet when up to date)..." >&2
	@swift build -c release --product hybrid-chat $(SWIFT_LINK) > .build/demo-build.log 2>&1 \
		|| { cat .build/demo-build.log >&2; exit 1; }
	@.build/release/hybrid-chat "$(PROMPT)"

bench: setup
	LLAMA_BENCH=ON scripts/setup-llama.sh
	swift build -c release $(SWIFT_LINK)
	scripts/run-benchmarks.sh

# The GPU row of Benchmarks/RESULTS.md (not part of `make bench`): the Vulkan build and a
# release build against it in .build-gpu, every layer on the GPU beside llama-bench -ngl 99.
bench-gpu:
	LLAMA_GPU=vulkan scripts/setup.sh --default-model
	gpu=$$(LLAMA_GPU=vulkan bash -c '. scripts/common.sh && echo "$$LLAMA_PREFIX"') && \
		devices=$$(scripts/vulkan-visible-devices.sh) && \
		PKG_CONFIG_PATH=$$gpu/lib/pkgconfig LD_LIBRARY_PATH=$$gpu/lib \
		swift build -c release --scratch-path .build-gpu --product local-benchmark -Xlinker -rpath -Xlinker $$gpu/lib && \
		env PKG_CONFIG_PATH=$$gpu/lib/pkgconfig LD_LIBRARY_PATH=$$gpu/lib LLAMA_GPU=vulkan BENCH_STEPS=gpu \
		BENCH_BIN=.build-gpu/release $${devices:+GGML_VK_VISIBLE_DEVICES=$$devices} scripts/run-benchmarks.sh

# libFuzzer targets in Fuzz/ (not part of `make test`): builds them with
# swiftc -sanitize=fuzzer,address and runs all of them at once for FUZZ_SECONDS;
# FUZZ_MERGE=1 minimises the new inputs into Fuzz/corpus/<target>.
FUZZ_SECONDS ?= 60
fuzz: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

clean:
	rm -rf .build
