package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/convtrace/convtrace/collector"
)

// redactFlags are the flags of the commands that store content: whether
// well-known secrets are redacted before storage, and the user's patterns.
type redactFlags struct {
	on       onOff
	patterns string
}

func (f *redactFlags) register(fs *flag.FlagSet) {
	f.on = true
	fs.Var(&f.on, "redact", "replace well-known secrets (OpenAI, Anthropic, Google and AWS keys, GitHub and bearer tokens, private keys) by [REDACTED:kind] before storage: on or off")
	fs.StringVar(&f.patterns, "redact-patterns", "", "file of more secrets to redact, one a line: a kind name, blank space, a Go regexp (# starts a comment)")
}

// option returns the redaction the flags ask for.
func (f *redactFlags) option() (collector.RedactOption, error) {
	switch {
	case !bool(f.on) && f.patterns != "":
		return nil, errors.New("--redact-patterns needs --redact=on")
	case !bool(f.on):
		return collector.WithoutRedaction(), nil
	case f.patterns == "":
		return collector.WithRedactPatterns(), nil
	}
	ps, err := collector.LoadRedactPatterns(f.patterns)
	if err != nil {
		return nil, fmt.Errorf("--redact-patterns: %w", err)
	}
	return collector.WithRedactPatterns(ps...), nil
}

// onOff is a boolean flag that reads on and off as well as true and false.
type onOff bool

func (b *onOff) String() string {
	if b != nil && bool(*b) {
		return "on"
	}
	return "off"
}

func (b *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1", "yes":
		*b = true
	case "off", "false", "0", "no":
		*b = false
	default:
		return fmt.Errorf("%q: want on or off", s)
	}
	return nil
}

func (b *onOff) IsBoolFlag() bool { return true }
