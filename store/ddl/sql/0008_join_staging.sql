-- The halves of OTLP calls that wait to be joined: GenAI spans that carry
-- no content, and the log records that carry it (kind 0 span, 1 log
-- record). The collector stores them here before it acknowledges them, so
-- that whichever collector instance sees a call complete, or its join
-- window end, writes its turns, after a crash or restart too. A kind 2 row
-- records that turns were written: how many records they merged, and the
-- sort key each turn was first written with, which later writes keep.
-- payload is the record as a one-record OTLP protobuf request. A plain
-- MergeTree keeps every copy of a record delivered twice: readers take the
-- earliest, which a replacing merge could drop. Hourly partitions let the
-- collector drop what is past the late window.
CREATE TABLE IF NOT EXISTS join_staging
(
    trace_id    String,
    span_id     String,
    record_id   String,
    kind        UInt8,
    pos         UInt32,
    received_ns UInt64,
    merged      UInt32,
    payload     String{{codec}},
    ts          DateTime DEFAULT toDateTime(intDiv(received_ns, 1000000000))
)
ENGINE = MergeTree
PARTITION BY intDiv(toUInt32(ts), 3600)
ORDER BY (trace_id, span_id, record_id)
