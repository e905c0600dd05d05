// Package topology is where a convtrace database lives and how to reach
// it: a Cluster names the ClickHouse cluster the tables are spread over
// (none on one server), the database and the DSN; Conn is a connection
// that carries its Cluster. On a cluster it lists the servers shard by
// shard (system.clusters), runs a statement on one replica of each shard
// (OnShards) and connects to every replica (Replicas).
//
// It knows no table but conversations, whose engine says which cluster a
// database is on (ClusterOf); the DDL and migrations are package ddl's,
// which runs its cluster work through this package
// (docs/architecture.md, "Cluster").
package topology
