VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build test bench
build:
	go build -ldflags "-s -w -X main.version=$(VERSION)" -o celld ./cmd/celld

# Every test, with MinIO installed (once) and started on 127.0.0.1.
test:
	./scripts/test

bench:
	./scripts/test -run XXX -bench . -benchtime 1x
