// Package ddl owns convtrace's tables in ClickHouse: the DDL of every
// table as embedded .sql templates (sql/), the versioned migrations that
// apply them, detection of what the connected server supports, changes in
// place (Mutator, SetRetention), and opening a database, for writers (Open,
// which creates it) and for readers (OpenExisting, which creates nothing).
// The row types and attribute keys are package schema's; connections and
// the servers of a cluster, package topology's.
//
// The same Go code writes to every supported server, from ClickHouse 18.16
// (Debian 12's package) to 26.x: column types stay inside the portable
// subset and the decorations newer servers offer (codecs, TTL, data-skipping
// indexes) are added to the DDL only when the server has them.
//
// The same DDL also runs on a ClickHouse cluster (WithCluster, ForCluster):
// every statement ON CLUSTER, each table a Replicated*MergeTree local
// table under a Distributed table of the old name, sharded so that a
// thread lives on one shard (docs/architecture.md, "Cluster"); an ALTER of
// a local table runs on a replica of each shard (topology.Cluster.OnShards).
package ddl
