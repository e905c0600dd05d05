package topology

import (
	"strings"
	"testing"
)

// A DSN says the cluster and the database; a DSN that names a cluster
// gets the settings of every connection to one, and the driver never
// sees the parameter.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		dsn, cluster, database, err string
	}{
		{dsn: "clickhouse://127.0.0.1:9000/convtrace", database: "convtrace"},
		{dsn: "clickhouse://127.0.0.1:9000", database: DefaultDatabase},
		{dsn: "clickhouse://127.0.0.1:9000/default", database: DefaultDatabase},
		{dsn: "tcp://u:p@ch-1a:9000/traces?cluster=prod&dial_timeout=1s", cluster: "prod", database: "traces"},
		{dsn: "postgres://x/y", err: "scheme must be clickhouse://"},
	} {
		c, err := Parse(tc.dsn)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %+v, %v; want an error saying %q", tc.dsn, c, err, tc.err)
			}
			continue
		}
		if err != nil || c.Name != tc.cluster || c.Database != tc.database || c.DSN != tc.dsn {
			t.Errorf("Parse(%q) = %+v, %v; want cluster %q, database %q", tc.dsn, c, err, tc.cluster, tc.database)
		}
		opts, err := parseDSN(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, sync := opts.Settings["insert_distributed_sync"]; sync != (tc.cluster != "") {
			t.Errorf("parseDSN(%q) settings %v: cluster settings %v, want %v", tc.dsn, opts.Settings, sync, tc.cluster != "")
		}
		if _, leaked := opts.Settings[ClusterParam]; leaked {
			t.Errorf("parseDSN(%q) sends %s to the server as a setting", tc.dsn, ClusterParam)
		}
	}
}

// DSNWithCluster sets, replaces and removes the cluster, keeping the rest.
func TestDSNWithCluster(t *testing.T) {
	for _, tc := range []struct{ dsn, name, want string }{
		{"clickhouse://h:9000/db", "c", "clickhouse://h:9000/db?cluster=c"},
		{"clickhouse://h:9000/db?cluster=a&dial_timeout=1s", "b", "clickhouse://h:9000/db?cluster=b&dial_timeout=1s"},
		{"clickhouse://h:9000/db?cluster=a", "", "clickhouse://h:9000/db"},
	} {
		got, err := DSNWithCluster(tc.dsn, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("DSNWithCluster(%q, %q) = %q, %v; want %q", tc.dsn, tc.name, got, err, tc.want)
		}
	}
}
