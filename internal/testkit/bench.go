package testkit

import (
	"os"
	"strconv"
	"testing"
)

// BenchTurnsEnv overrides how many synthetic turns a benchmark generates.
const BenchTurnsEnv = "CONVTRACE_BENCH_TURNS"

// BenchTurns returns how many turns a benchmark generates: $CONVTRACE_BENCH_TURNS,
// else def.
func BenchTurns(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv(BenchTurnsEnv)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: not a number of turns", BenchTurnsEnv, s)
	}
	return n
}
