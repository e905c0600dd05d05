package topology_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/store/topology"
)

// A DSN names the cluster a database is spread over, if any.
func ExampleParse() {
	dsn, err := topology.DSNWithCluster("clickhouse://ch-1a:9000/convtrace", "prod")
	if err != nil {
		log.Fatal(err)
	}
	c, err := topology.Parse(dsn)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Name, c.Database)
	// Output: prod convtrace
}

// An ALTER of a Replicated local table runs on one replica of each shard,
// which replication carries to the others.
func ExampleCluster_OnShards() {
	ctx := context.Background()
	c, err := topology.Parse("clickhouse://ch-1a:9000/convtrace?cluster=prod")
	if err != nil {
		log.Fatal(err)
	}
	conn, err := c.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	err = c.OnShards(ctx, conn, func(one driver.Conn) error {
		return one.Exec(ctx, "ALTER TABLE spans_local DROP PARTITION 2024")
	})
	if err != nil {
		log.Fatal(err)
	}
}
