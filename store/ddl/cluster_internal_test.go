package ddl

import (
	"strings"
	"testing"
)

// Every distributed ALTER of a local table the cluster DDL holds is one
// Migrate runs shard by shard (config.exec), not ON CLUSTER.
func TestLocalAltersRunByShard(t *testing.T) {
	for _, version := range []string{"18.16.1", "26.7.2.1"} {
		caps, err := DetectCapabilities(version)
		if err != nil {
			t.Fatal(err)
		}
		alters, matched := 0, 0
		for _, m := range Migrations() {
			stmts, err := m.Statements(caps, WithCluster("c"), WithDatabase("db"))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range stmts {
				if strings.HasPrefix(s, "ALTER TABLE") {
					alters++
					if localAlter.MatchString(strings.ReplaceAll(s, "\n", " ")) {
						matched++
					} else {
						t.Errorf("server %s: not run by shard:\n%s", version, s)
					}
				}
			}
		}
		if alters == 0 || matched != alters {
			t.Errorf("server %s: %d of %d ALTERs run by shard", version, matched, alters)
		}
	}
}
