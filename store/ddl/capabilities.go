package ddl

import (
	"fmt"
	"strconv"
	"strings"
)

// Capabilities is what a ClickHouse server supports beyond the portable
// subset every supported version shares.
type Capabilities struct {
	Version string // as the server reports it, e.g. "18.16.1" or "26.7.2.1"

	// LowCardinalitySetting means LowCardinality columns are experimental
	// and DDL that declares them needs allow_experimental_low_cardinality_type=1
	// (18.x; later servers reject the setting).
	LowCardinalitySetting bool
	Codecs                bool // column CODEC(...) clauses, 19.1 and later
	TTL                   bool // table TTL clauses, 19.6 and later
	SkipIndexes           bool // data-skipping indexes without an experimental setting, 20.1 and later
	LightweightDelete     bool // DELETE FROM without a setting, 23.3 and later; before, ALTER TABLE … DELETE
}

// DetectCapabilities derives capabilities from a server version string as
// returned by SELECT version().
func DetectCapabilities(version string) (Capabilities, error) {
	major, minor, err := parseVersion(version)
	if err != nil {
		return Capabilities{}, err
	}
	atLeast := func(ma, mi int) bool { return major > ma || (major == ma && minor >= mi) }
	return Capabilities{
		Version:               version,
		LowCardinalitySetting: !atLeast(19, 0),
		Codecs:                atLeast(19, 1),
		TTL:                   atLeast(19, 6),
		SkipIndexes:           atLeast(20, 1),
		LightweightDelete:     atLeast(23, 3),
	}, nil
}

func parseVersion(v string) (major, minor int, err error) {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("parse server version %q: want MAJOR.MINOR[...]", v)
	}
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, fmt.Errorf("parse server version %q: %w", v, err)
	}
	if minor, err = strconv.Atoi(parts[1]); err != nil {
		return 0, 0, fmt.Errorf("parse server version %q: %w", v, err)
	}
	return major, minor, nil
}
