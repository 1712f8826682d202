# asb: run a coding agent in a microsandbox microVM.
#   make demo   install asb and lay down a demo outer folder in ./demo
#   make test   install the real tools (msb, podman, docker, busybox) and run every test
SHELL := /bin/bash
GO ?= go
TOOLS_DIR ?= $(CURDIR)/.tools
BIN_DIR ?= $(CURDIR)/bin
DEMO_DIR ?= $(CURDIR)/demo
export ASB_TOOLS_DIR := $(TOOLS_DIR)

.PHONY: all build install demo test test-fast test-kube test-stand-ins test-msb test-images test-boot test-net test-agent tools examples bench fuzz lint fmt vet staticcheck clean

all: build

# asb is built without cgo: a static executable starts without the dynamic
# loader and the C library, about a fifth faster (docs/startup.md). The
# tests and `make bench` build it the same way (testenv.InstallEnv).
ASB_BUILD_ENV := CGO_ENABLED=0
build:
	$(ASB_BUILD_ENV) $(GO) build -o $(BIN_DIR)/ ./cmd/asb ./cmd/asb-task ./cmd/asb-export

install:
	$(ASB_BUILD_ENV) $(GO) install ./cmd/asb ./cmd/asb-task ./cmd/asb-export

# Installs asb (and the real tools), lays down an outer folder for OpenCode
# in ./demo, and shows what it is: the boundary, the tasks, the commands the
# first `asb task agent` would run, and what this host can run.
ASB_BIN := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
ASB := $(ASB_BIN)/asb
demo: install tools
	@rm -rf "$(DEMO_DIR)"
	@# The msb of `make tools` goes beside asb (a link: msb finds its
	@# libkrunfw through it), unless one is on PATH already.
	@command -v msb >/dev/null 2>&1 || ln -sfn "$(TOOLS_DIR)/bin/msb" "$(ASB_BIN)/msb"
	$(ASB) init --agent opencode --name asb-demo "$(DEMO_DIR)"
	cd "$(DEMO_DIR)" && $(ASB) validate
	cd "$(DEMO_DIR)" && $(ASB) boundary
	cd "$(DEMO_DIR)" && $(ASB) task --list
	cd "$(DEMO_DIR)" && $(ASB) task --dry agent
	PATH="$(ASB_BIN):$$PATH" $(ASB) doctor || true
	@echo
	@echo "asb is installed as $(ASB), msb as $$(PATH="$$PATH:$(ASB_BIN)" command -v msb)."
	@case ":$$PATH:" in *":$(ASB_BIN):"*) ;; *) echo "Add them to PATH first: export PATH=\"$(ASB_BIN):\$$PATH\"";; esac
	@echo "Next: cd $(DEMO_DIR), put your key in secrets.env, asb task agent"

# The real tools the end-to-end tests drive: msb 0.7.2 (npm), podman,
# docker.io and busybox-static (Debian). Idempotent; cached in .tools/.
tools:
	bash scripts/install-tools.sh "$(TOOLS_DIR)"

# Every test, the real-tool ones included (CI runs exactly this).
test: tools
	PATH="$(TOOLS_DIR)/bin:$$PATH" bash scripts/test.sh

# The tiers of `make test`, each alone (docs/testing.md says what each
# covers and costs). test-fast and test-stand-ins install nothing. Every
# go test runs with a TMPDIR of its own, removed after it
# (scripts/private-tmp.sh).
REAL_TEST := PATH="$(TOOLS_DIR)/bin:$$PATH" CI=true bash scripts/test.sh
test-fast:
	ASB_SKIP_REAL_TOOLS=1 bash scripts/private-tmp.sh $(GO) test -short -count=1 ./...
test-stand-ins:
	ASB_SKIP_REAL_TOOLS=1 bash scripts/private-tmp.sh $(GO) test -count=1 ./...
test-msb: tools
	$(REAL_TEST) -run 'TestReal(Msb|MSB|Egress|NetLogLevel|Doctor|HostCheck|ServePort|TaskVMCreate|ConcurrentRuns|LostState|Standalone)'
test-images: tools
	$(REAL_TEST) -run 'TestReal(AgentImage|Preset|PodmanBuild|DockerBuild|TaskImageBuild)'
test-boot: tools
	$(REAL_TEST) -run 'TestRealBoot([^R]|R[^e]|Re[^a]|Rea[^l])'
test-net: tools
	$(REAL_TEST) -run 'TestRealNet(EgressAgreesWithCheck|Promises|Learn|Secret)'
test-agent: tools
	$(REAL_TEST) -run 'TestReal(BootRealImage|NetAgent)'

# The Kubernetes export against a real control plane (kubetest/, a module
# of its own: kube-apiserver, etcd and agent-sandbox's controllers in the
# test process; compiled once, then cached by GOCACHE). make test runs it too.
test-kube:
	cd kubetest && $(GO) test -count=1 -timeout 20m ./...

# Regenerate what is made from asb's own templates: examples/, and the
# presets as Go (schema/presets_own.go).
examples:
	$(GO) test ./examples/ -run TestExamples -update
	$(GO) test ./schema/ -run TestOwnPresetsAreTheManifests -update

# Whole exec'd processes side by side with their floors, and the ratios
# (docs/startup.md). The floor of asb task --list is go-task v3.54.0 as
# released: built from its own module, with its own dependencies.
BENCH_TASK := $(TOOLS_DIR)/bench/bin/task
bench: $(BENCH_TASK)
	bash scripts/private-tmp.sh $(GO) run ./internal/benchmark -task "$(BENCH_TASK)"

$(BENCH_TASK):
	GOBIN="$(TOOLS_DIR)/bench/bin" GOFLAGS=-buildvcs=false $(GO) install github.com/go-task/task/v3/cmd/task@v3.54.0

fuzz:
	bash scripts/fuzz.sh

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd kubetest && $(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	cd kubetest && $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf $(BIN_DIR) $(DEMO_DIR)
