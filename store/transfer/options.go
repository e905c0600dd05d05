package transfer

import "time"

// ImportOption configures Import and ImportReader.
type ImportOption interface{ apply(*importConfig) }

type importConfig struct {
	maxSize int64         // of the export decompressed; 0: no bound
	wait    time.Duration // for room in the memory budget and for the lock; < 0: as long as ctx
}

type importOptionFunc func(*importConfig)

func (f importOptionFunc) apply(c *importConfig) { f(c) }

func newImportConfig(opts []ImportOption) importConfig {
	c := importConfig{wait: -1}
	for _, o := range opts {
		o.apply(&c)
	}
	return c
}

// WithMaxSize bounds an export, decompressed, to n bytes: a larger one is
// refused with ErrTooLarge. n <= 0 means no bound (the default).
func WithMaxSize(n int64) ImportOption {
	return importOptionFunc(func(c *importConfig) { c.maxSize = max(n, 0) })
}

// WithWait bounds how long an import waits for room in the process's
// memory budget and for the database's import lock; past it the import
// is refused with ErrBusy. By default it waits as long as its context
// allows.
func WithWait(d time.Duration) ImportOption {
	return importOptionFunc(func(c *importConfig) { c.wait = max(d, 0) })
}
