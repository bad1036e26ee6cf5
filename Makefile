# One file ties the build together. `make demo` and `make test` are the two
# commands a person needs; everything else is for working on the project.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
BUILD     := build
SITE      := $(BUILD)/site
PORT      ?= 8080
FUZZTIME  ?= 30s
PKGS_NATIVE := ./surface/... ./cmd/... ./internal/... ./hostbridge/... ./client/... ./mcpfacade/...
WASMFLAGS := -trimpath -ldflags="-s -w"

.PHONY: all demo site test test-native test-js test-e2e chromium check fmt vet cross fuzz bench clean

all: check test

## demo: build everything and serve the demo app on 127.0.0.1:$(PORT).
demo: site
	$(GO) run ./cmd/demo -dir $(SITE) -addr 127.0.0.1:$(PORT)

## site: the demo site with the surface runtime under /pling/.
site:
	rm -rf $(SITE) && mkdir -p $(SITE)/pling
	cp -R web/. $(SITE)/
	cp js/*.js js/*.d.ts $(SITE)/pling/
	cp "$(GOROOT)/lib/wasm/wasm_exec.js" $(SITE)/pling/wasm_exec.js
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $(SITE)/pling/surface.wasm ./wasm

.PHONY: extension test-client

## extension: the unpacked Manifest V3 extension in build/extension, with the
## client library in it (a module for its pages, a classic script for its
## content script). Load it at chrome://extensions; see extension/README.md.
extension:
	rm -rf $(BUILD)/extension && mkdir -p $(BUILD)/extension
	cp extension/manifest.json extension/*.js extension/*.html extension/*.css $(BUILD)/extension/
	cp js/client/pling-client.js js/client/pling-client.d.ts $(BUILD)/extension/
	node js/client/classic.mjs js/client/pling-client.js > $(BUILD)/extension/pling-client.classic.js

## test: every test that exists: native (the wasip1 build under wazero included),
## GOOS=js under Node, and headless Chromium.
test: test-native test-js test-client test-e2e

test-native:
	$(GO) test -race -count=1 $(PKGS_NATIVE)

test-js:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(GOROOT)/lib/wasm/go_js_wasm_exec" ./hostbridge/... ./wasm/...

## test-client: the client library's unit tests, with Node's own runner.
test-client:
	node --test js/client/

## chromium: install Debian's Chromium when it is missing (never a downloaded browser).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

test-e2e: site extension chromium
	$(GO) test -count=1 ./e2e/...

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
	$(GO) test -run=NONE -fuzz='^FuzzDecode$$' -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/
	$(GO) test -run=NONE -fuzz='^FuzzCheckValue$$' -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/
	$(GO) test -run=NONE -fuzz='^FuzzFoldKey$$' -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/
	$(GO) test -run=NONE -fuzz='^FuzzHandle$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzDescribeInput$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzParseResponse$$' -fuzztime=$(FUZZTIME) ./client/

## bench: kernel micro-benchmarks.
bench:
	$(GO) test -run=NONE -bench=. -benchmem -count=5 $(PKGS_NATIVE)

clean:
	rm -rf $(BUILD)
