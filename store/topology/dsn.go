package topology

import (
	"fmt"
	"net/url"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// DefaultDatabase is the database used when a DSN names none.
const DefaultDatabase = "convtrace"

// ClusterParam is the DSN parameter that names the ClickHouse cluster
// convtrace's tables are spread over, as in
// clickhouse://host:9000/convtrace?cluster=NAME. It is not a server setting.
const ClusterParam = "cluster"

// DSNWithCluster returns dsn naming the cluster name (none when empty).
func DSNWithCluster(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	q := u.Query()
	if name == "" {
		q.Del(ClusterParam)
	} else {
		q.Set(ClusterParam, name)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Parse reads a clickhouse-go DSN such as
// clickhouse://127.0.0.1:9000/convtrace: its cluster (ClusterParam, none
// for one server) and its database (DefaultDatabase when it names none).
func Parse(dsn string) (Cluster, error) {
	opts, err := parseDSN(dsn)
	if err != nil {
		return Cluster{}, err
	}
	return Cluster{Name: dsnCluster(dsn), Database: opts.Auth.Database, DSN: dsn}, nil
}

func dsnCluster(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return u.Query().Get(ClusterParam)
}

// parseDSN returns the driver's options for dsn: a DSN that names a
// cluster gets ClusterSettings.
func parseDSN(dsn string) (*clickhouse.Options, error) {
	cluster := dsnCluster(dsn)
	if cluster != "" {
		var err error
		if dsn, err = DSNWithCluster(dsn, ""); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	if u.Scheme != "clickhouse" && u.Scheme != "tcp" {
		return nil, fmt.Errorf("parse clickhouse DSN %q: scheme must be clickhouse:// (or tcp://), like clickhouse://127.0.0.1:9000/convtrace", dsn)
	}
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	if opts.Auth.Database == "" || opts.Auth.Database == "default" {
		opts.Auth.Database = DefaultDatabase
	}
	if cluster != "" {
		if opts.Settings == nil {
			opts.Settings = clickhouse.Settings{}
		}
		for k, v := range ClusterSettings() {
			opts.Settings[k] = v
		}
	}
	return opts, nil
}

// ClusterSettings are the settings of every connection to a cluster: inserts
// acknowledged once stored, identical blocks kept, lagging replicas read last.
// distributed_product_mode must be in the servers' profile instead
// (docs/design/cluster.md).
func ClusterSettings() clickhouse.Settings {
	return clickhouse.Settings{
		"insert_distributed_sync":                   1,
		"insert_deduplicate":                        0,
		"max_replica_delay_for_distributed_queries": 1,
	}
}
