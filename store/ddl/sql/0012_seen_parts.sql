-- What each summary the viewer keeps has read of conversations: per
-- partition, the range of block numbers whose rows it has read. A part of
-- conversations inside that range holds no row the summary has not read (a
-- merge or a mutation of rows it read); only the rows of the other parts
-- are read to learn what changed. The row with the highest computed_ns
-- wins. See viewer/query/changes.go.
CREATE TABLE IF NOT EXISTS seen_parts
(
    summary     String,
    computed_ns UInt64,
    partitions  Array(String),
    min_blocks  Array(Int64),
    max_blocks  Array(Int64)
)
ENGINE = ReplacingMergeTree(computed_ns)
ORDER BY summary
