package ddl_test

import (
	"context"
	"fmt"
	"log"

	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// Bring a database to the current schema; running it again changes nothing.
func ExampleMigrate() {
	ctx := context.Background()
	conn, err := ddl.Open(ctx, "clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := ddl.Migrate(ctx, conn)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("schema version %d on ClickHouse %s\n", res.Version, res.Capabilities.Version)
}

// What a server supports decides the DDL: ClickHouse 18.16 gets the portable
// subset, newer servers codecs, TTL and skip indexes.
func ExampleDetectCapabilities() {
	caps, _ := ddl.DetectCapabilities("18.16.1")
	fmt.Printf("%+v\n", caps)
	// Output: {Version:18.16.1 LowCardinalitySetting:true Codecs:false TTL:false SkipIndexes:false LightweightDelete:false}
}

// On a cluster the DSN names it: Open creates the database on every
// server and Migrate makes every table there, a replicated local table
// under a Distributed one.
func ExampleForCluster() {
	ctx := context.Background()
	dsn, err := topology.DSNWithCluster("clickhouse://ch-1a:9000/convtrace", "convtrace")
	if err != nil {
		log.Fatal(err)
	}
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster())); err != nil {
		log.Fatal(err)
	}
}
