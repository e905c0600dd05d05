FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/convtrace ./cmd/convtrace

FROM debian:bookworm-slim
COPY --from=build /out/convtrace /usr/local/bin/convtrace
USER nobody
ENTRYPOINT ["convtrace"]
