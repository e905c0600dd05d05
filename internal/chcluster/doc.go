// Package chcluster runs a ClickHouse cluster on one machine for tests:
// ZooKeeper (Debian's zookeeper package, run standalone with its own
// configuration and data folder on a free loopback port) and clickhouse
// servers as shards × replicas, each managed by store/chserver with
// the cluster's remote_servers, its own macros (shard, replica), the
// ZooKeeper node and the distributed DDL queue. Stop stops everything it
// started, bounded in time.
package chcluster
