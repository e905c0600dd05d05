// Package archive moves threads that have gone quiet out of ClickHouse
// into files: each thread as a JSONL export (package transfer) compressed
// with zstd, one file per thread, read back and checked against the
// database before the thread is removed from it. convtrace archive and
// serve --archive-after run it; convtrace import restores a file.
package archive
