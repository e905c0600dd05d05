package collector_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/convtrace/convtrace/collector"
)

// A team's own secrets, redacted besides the built-in kinds: pass the
// patterns to NewTracerProvider, NewExporter or NewIngester with
// WithRedactPatterns.
func ExampleParseRedactPatterns() {
	file := `# kind, blank space, a Go regexp; with a group, only the group is replaced
internal_host  \b[a-z0-9-]+\.corp\.example\.com\b
db_password    (?i)db_password\s*=\s*(\S+)
`
	ps, err := collector.ParseRedactPatterns(strings.NewReader(file))
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range ps {
		fmt.Println(p.Kind)
	}
	_ = collector.WithRedactPatterns(ps...)
	// Output:
	// internal_host
	// db_password
}
