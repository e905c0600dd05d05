FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/convtrace ./cmd/convtrace

FROM debian:bookworm-slim
# ca-certificates for a secure=true ClickHouse DSN; curl for the health check.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/convtrace /usr/local/bin/convtrace
# A user of its own, and a data folder it writes: the spool of rows not
# stored yet, the archive journal. Mount a volume there to keep them.
RUN useradd --system --uid 10001 --home-dir /var/lib/convtrace --create-home convtrace
ENV CONVTRACE_DATA=/var/lib/convtrace
VOLUME /var/lib/convtrace
USER convtrace
# The viewer, OTLP/HTTP (with /metrics, /healthz and /readyz) and OTLP/gRPC.
EXPOSE 8080 4318 4317
# /readyz answers 200 while ClickHouse answers its pings; it needs no token.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD curl -fsS http://127.0.0.1:4318/readyz || exit 1
ENTRYPOINT ["convtrace"]
