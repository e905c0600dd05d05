// Package transfer moves threads between convtrace databases: Export
// writes the threads a filter selects as a versioned export, a JSON
// envelope or JSON lines, and Import stores one in a database. An export
// stands alone: every column of every turn, with the whole content of
// prompts whose history the database stores once, the spans of the
// threads' traces, their notes and their metadata.
//
// Both stream: an export holds a page of turns at a time, an import a
// batch of records, so memory stays flat for millions of turns. An import
// is idempotent (it stores only the rows the database does not hold, by
// their ids) and treats the export as untrusted input: every record is
// checked, a JSON envelope is refused whole before anything is stored,
// and a JSONL line that is not a valid record is reported by its number
// while the others are stored. Its times follow the one rule of every
// entrance (schema.CheckTime), so what OTLP stored imports back.
//
// An archive file (zstd) is decompressed as it is read, never to disk,
// within a window, a ratio and WithMaxSize. The imports of a process share
// one MemoryBudget, and those into one database store one at a time under
// its import lock (import_claims); both waits are bounded by WithWait,
// past which an import is refused with ErrBusy.
//
// The reads, the existence checks and the writes are store's: turns and
// spans go through store.RowStore, the writer's own path (the history
// split, the summaries' invalidation). Used by convtrace export and import and by the viewer's
// export and import endpoints. The format is in README, "Export and
// import"; the design in docs/architecture.md.
package transfer
