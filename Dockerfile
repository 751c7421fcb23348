# celld: a static binary on a minimal base, run as a non-root user.
#
#   docker build -t celld --build-arg VERSION=$(git describe --tags --always) .
#   docker run -e CELLD_BUCKET=s3://fleet -e AWS_ACCESS_KEY_ID=… -e AWS_SECRET_ACCESS_KEY=… \
#     -p 8080:8080 -v celld-state:/var/lib/celld celld
#
# The build flags are the release flags (goreleaser.yaml); a test
# (packaging/packaging_test.go) builds the binary with exactly this line.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/celld ./cmd/celld
# The state volume's mount point, owned by the runtime user (a new named
# volume takes this ownership).
RUN mkdir -p /out/var/lib/celld/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/celld /usr/local/bin/celld
COPY --from=build --chown=65532:65532 /out/var/lib/celld /var/lib/celld
# Resident cells' SQLite files: a cache of the bucket (the bucket is the
# truth), kept on a volume so a restart of the same node resumes without a
# restore. One volume per node: the node locks it.
ENV CELLD_WATCH=/var/lib/celld/state \
    CELLD_ADDR=0.0.0.0:8080 \
    CELLD_INTERNAL_ADDR=0.0.0.0:8081
VOLUME ["/var/lib/celld"]
USER 65532:65532
# 8080: Worker traffic and /__celld/health. 8081: peers and the operator
# API (/state, /shutdown): keep it on a private network.
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/celld"]
CMD ["serve"]
