# One file ties the build together. `make demo` and `make test` are the two
# commands a person needs; everything else is for working on the project.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
BUILD     := build
SITE      := $(BUILD)/site
# The browser tests assemble a site of their own, so that `make test` never
# deletes the files under a running `make demo`.
TEST_SITE := $(BUILD)/test-site
PORT      ?= 8080
FUZZTIME  ?= 30s
PKGS_NATIVE := ./surface/... ./cmd/... ./internal/... ./hostbridge/... ./client/... ./mcpfacade/... ./bench/... ./redisstate/...
WASMFLAGS := -trimpath -ldflags="-s -w"

.PHONY: all demo site test-site test test-native test-js test-e2e chromium redis check fmt vet cross fuzz bench clean

all: check test

## demo: build everything and serve the demo app on 127.0.0.1:$(PORT).
## REDIS=127.0.0.1:6379 keeps its rate budget and replay claims in that Redis.
demo: site
	@echo "== starting the demo server (cmd/demo)"
	$(GO) run ./cmd/demo -dir $(SITE) -addr 127.0.0.1:$(PORT)$(if $(REDIS), -redis $(REDIS))

## site: the demo site with the surface runtime under /pling/.
site:
	$(call assemble-site,$(SITE))

## test-site: the same site in build/test-site, for the browser tests.
test-site:
	$(call assemble-site,$(TEST_SITE))

# assemble-site builds a site in $(1): web/, then the runtime under pling/
# (internal/sitebuild: the first script bundled, the files it loads later
# and surface.wasm under content-hashed names), then .br and .gz beside
# every text and wasm file. surface.wasm is the step that takes long with an
# empty build cache; its brotli, some seconds more, is kept in
# $(BUILD)/compress-cache by content.
define assemble-site
	@echo "== assembling $(1)"
	rm -rf $(1) && mkdir -p $(1)/pling
	cp -R web/. $(1)/
	@echo "== building surface.wasm (GOOS=js; about a minute with an empty build cache)"
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $(1).surface.wasm ./wasm
	$(GO) run ./internal/sitebuild/cmd/sitebuild -js js -wasm $(1).surface.wasm -out $(1)/pling -compress $(1) -cache $(BUILD)/compress-cache
endef

.PHONY: extension test-client package

PKG := $(BUILD)/package
## package: the npm package of the page runtime, the client library and the
## React binding, as build/package/pling-surface.tgz (and under npm's own
## name beside it). Its version is package/package.json's.
package:
	rm -rf $(PKG) && mkdir -p $(PKG)
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $(PKG)/surface.wasm ./wasm
	$(GO) run ./internal/sitebuild/cmd/sitebuild -q -package package -js js -wasm $(PKG)/surface.wasm -out $(PKG)/pling-surface
	cd $(PKG) && npm pack ./pling-surface --ignore-scripts --loglevel=error >/dev/null && cp pling-surface-*.tgz pling-surface.tgz
	@echo "== $(PKG)/pling-surface.tgz"

## extension: the unpacked Manifest V3 extension in build/extension, with the
## client library in it (its modules for its pages, as classic.mjs lists
## them, and a classic script for its content script). Load it at
## chrome://extensions; see extension/README.md.
extension:
	rm -rf $(BUILD)/extension && mkdir -p $(BUILD)/extension
	cp extension/manifest.json extension/*.js extension/*.html extension/*.css $(BUILD)/extension/
	modules=$$(node js/client/classic.mjs --modules js/client/pling-client.js) && cp $$modules js/pling-protocol.d.ts $(BUILD)/extension/
	sed 's|"../pling-protocol.js"|"./pling-protocol.js"|' js/client/pling-client.d.ts > $(BUILD)/extension/pling-client.d.ts
	node js/client/classic.mjs js/client/pling-client.js > $(BUILD)/extension/pling-client.classic.js
	cat $(BUILD)/extension/pling-client.classic.js mcpfacade/caller.js > $(BUILD)/extension/page.js

.PHONY: screenshots

## screenshots: the README's pictures (docs/img/demo.png, docs/img/extension-panel.png),
## taken in headless Chromium from the current site and extension.
screenshots: site extension chromium
	$(GO) run ./internal/screenshots -site $(SITE) -extension $(BUILD)/extension -out docs/img

## test: every test that exists: native (the wasip1 build under wazero included),
## GOOS=js under Node, and headless Chromium.
test: test-native test-js test-client test-e2e

test-native: redis
	@echo "== native tests with the race detector: one ok or FAIL line per package as it finishes; the first takes minutes while the race build compiles"
	$(GO) test -race -count=1 $(PKGS_NATIVE)

## test-js: the GOOS=js packages under Node. The runner is Go's
## wasm_exec_node.js plus one line: it hands the JS tests the Go object, so
## that they can call the module's entry exports as loadSurface does.
## internal/sprint has a js-only implementation, compared with fmt there.
test-js:
	@echo "== GOOS=js tests under Node (hostbridge, wasm, internal/sprint)"
	GOROOT="$(GOROOT)" GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="node --stack-size=8192 $(CURDIR)/hostbridge/testdata/exec_node.js" ./hostbridge/... ./wasm/... ./internal/sprint/

## test-client: the client library's unit tests (and those of pling-mcp's caller in the page,
## and the extension's module bounds), with Node's own runner.
test-client:
	@echo "== client library tests under node --test"
	node --test js/client/ js/test/webmcp.test.mjs js/test/loading.test.mjs js/test/rules.test.mjs js/test/protocol-types.test.mjs mcpfacade/caller.test.mjs extension/test/

## chromium: install Debian's Chromium when it is missing (never a downloaded browser).
chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "== chromium is missing: installing Debian's chromium package with apt-get (needs root)"; apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

## redis: install Debian's redis-server when it is missing. Tests start their
## own instance on a free loopback port, without persistence, and stop it.
redis:
	@command -v redis-server >/dev/null 2>&1 || { echo "== redis-server is missing: installing Debian's redis-server package with apt-get (needs root)"; apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }

test-e2e: test-site extension package chromium redis
	@echo "== browser tests in headless Chromium on $(TEST_SITE) (one package: its ok or FAIL line comes after a few minutes; the MCP and bundler tests run npm ci once per lock file)"
	$(GO) test -count=1 -timeout=25m ./e2e/...

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
	$(GO) test -run=NONE -fuzz='^FuzzValue$$' -fuzztime=$(FUZZTIME) ./internal/jsonread/
	$(GO) test -run=NONE -fuzz='^FuzzCheckValue$$' -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/
	$(GO) test -run=NONE -fuzz='^FuzzFoldKey$$' -fuzztime=$(FUZZTIME) ./surface/internal/strictjson/
	$(GO) test -run=NONE -fuzz='^FuzzValidate$$' -fuzztime=$(FUZZTIME) ./surface/internal/schema/
	$(GO) test -run=NONE -fuzz='^FuzzFormats$$' -fuzztime=$(FUZZTIME) ./surface/internal/schema/
	$(GO) test -run=NONE -fuzz='^FuzzECMAPattern$$' -fuzztime=$(FUZZTIME) ./surface/internal/schema/
	$(GO) test -run=NONE -fuzz='^FuzzGoRegexp$$' -fuzztime=$(FUZZTIME) ./surface/internal/schema/
	$(GO) test -run=NONE -fuzz='^FuzzHandle$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzExchange$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzReplyCap$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzDescribeInput$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzAppendJSON$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzParseView$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzParseActions$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzPlainResult$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzMemoryGuard$$' -fuzztime=$(FUZZTIME) ./surface/
	$(GO) test -run=NONE -fuzz='^FuzzParseResponse$$' -fuzztime=$(FUZZTIME) ./client/
	$(GO) test -run=NONE -fuzz='^FuzzHandler$$' -fuzztime=$(FUZZTIME) ./redisstate/
	$(GO) test -run=NONE -fuzz='^FuzzFilter$$' -fuzztime=$(FUZZTIME) ./mcpfacade/internal/devtools/

BENCH := $(BUILD)/bench
.PHONY: bench-profile bench-trace bench-boundary bench-brotli bench-site

## bench: the kernel micro-benchmarks natively and under GOOS=js (Node), then
## one cross-origin-isolated headless Chromium run of every target against
## its baseline. Prints the table and writes build/bench/latest.md; exits
## non-zero only when a measurement could not be taken. Then what shared
## limits cost (build/bench/shared.md). See bench/README.md.
bench: chromium redis bench-brotli bench-site site
	$(GO) run ./bench -dir $(BENCH) -demo $(SITE)
	$(GO) run ./bench/shared -dir $(BENCH) -site $(SITE)

## bench-profile: the browser benchmarks once more with Chromium's CPU
## profiler on, over a surface.wasm that keeps its function names.
bench-profile: chromium bench-site
	GOOS=js GOARCH=wasm $(GO) build -trimpath -o $(BENCH)/surface.wasm ./wasm
	rm -f $(BENCH)/site/pling/surface.*
	$(GO) run ./internal/sitebuild/cmd/sitebuild -q -js js -wasm $(BENCH)/surface.wasm -out $(BENCH)/site/pling
	GOOS=js GOARCH=wasm $(GO) build -trimpath -o $(BENCH)/site/bench/hello.wasm ./bench/hello
	$(GO) run ./internal/sitebuild/cmd/sitebuild -q -compress $(BENCH)/site -cache $(BUILD)/compress-cache
	$(GO) run ./bench -dir $(BENCH) -profile

## bench-trace: the round trips once more, each split into stages at the
## page's own hooks (registry, session, executor, audit), against the same
## split of each baseline; writes build/bench/stages.md.
bench-trace: chromium bench-site
	$(GO) run ./bench -dir $(BENCH) -trace

## bench-boundary: what each way of calling across the Go/JS boundary
## costs, in Node (no browser): js.FuncOf against //go:wasmexport, and a
## host call passing text as JS strings against a shared Uint8Array.
bench-boundary:
	GOOS=js GOARCH=wasm $(GO) build -trimpath -o $(BENCH)/boundary.wasm ./bench/boundary
	node bench/boundary/boundary.mjs $(BENCH)/boundary.wasm

bench-brotli:
	@command -v brotli >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y brotli; }

# bench-site assembles build/bench/site: the runtime as `site` builds it, the
# benchmark pages, the baseline hello.wasm, and MCP-B bundled from the
# bench-only npm dependencies (bench/package-lock.json).
bench-site:
	rm -rf $(BENCH)/site && mkdir -p $(BENCH)/site/pling $(BENCH)/site/bench $(BENCH)/npm
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $(BENCH)/surface.wasm ./wasm
	$(GO) run ./internal/sitebuild/cmd/sitebuild -q -js js -wasm $(BENCH)/surface.wasm -out $(BENCH)/site/pling
	cp "$(GOROOT)/lib/wasm/wasm_exec.js" $(BENCH)/site/pling/wasm_exec.js
	GOOS=js GOARCH=wasm $(GO) build $(WASMFLAGS) -o $(BENCH)/site/bench/hello.wasm ./bench/hello
	cp bench/web/*.html bench/web/*.js $(BENCH)/site/bench/
	rm -f $(BENCH)/site/bench/*.entry.js
	cp bench/package.json bench/package-lock.json bench/web/*.entry.js $(BENCH)/npm/
	npm ci --prefix $(BENCH)/npm --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(BENCH)/npm && node_modules/.bin/esbuild mcpb-page.entry.js --bundle --format=esm --platform=browser --target=chrome120 --log-level=warning --outfile=../site/bench/mcpb-page.js
	cd $(BENCH)/npm && node_modules/.bin/esbuild mcp-client.entry.js --bundle --format=iife --platform=browser --target=chrome120 --log-level=warning --outfile=../site/bench/mcp-client.js
	$(GO) run ./internal/sitebuild/cmd/sitebuild -q -compress $(BENCH)/site -cache $(BUILD)/compress-cache

clean:
	rm -rf $(BUILD)
