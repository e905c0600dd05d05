INSERT INTO latency_crossing (project, day, computed_ns, thread_id, trace_id, span_id, model, provider, phase, speaker,
    duration_ns, ttft_ns, failed)
SELECT piece_project, piece_day, toUInt64(?), piece_thread, trace_id, span_id, piece_model, piece_provider, piece_phase,
       piece_speaker, piece_duration, piece_ttft, piece_failed
FROM 
(
    SELECT any(project) AS piece_project, toUInt32(intDiv(start_ns, 86400000000000)) AS piece_day,
           trace_id, span_id, any(thread_id) AS piece_thread,
           any(model) AS piece_model, any(provider) AS piece_provider, any(phase) AS piece_phase, any(speaker) AS piece_speaker,
           toUInt8(countIf(cost_source != '') > 0) AS piece_ends,
           maxIf(duration_ns, cost_source != '') AS piece_duration,
           max(ttft_ns) AS piece_ttft,
           max(toUInt8(role = 'error' OR status = 'error')) AS piece_failed,
           toUInt8(maxIf(start_ns, cost_source != '') >= piece_day * 86400000000000 + piece_duration) AS piece_whole
    FROM conversations
    PREWHERE ts >= toDateTime(?) AND ts < toDateTime(?) AND start_ns >= ? AND start_ns < ?
    WHERE (cost_source != '' OR role = 'error' OR status = 'error')
      AND has(?, toUInt32(intDiv(start_ns, 86400000000000)))
    GROUP BY piece_day, trace_id, span_id
)
WHERE piece_ends AND NOT piece_whole
-- $1 = 3
-- $2 = 86400
-- $3 = 259200
-- $4 = 86400000000000
-- $5 = 259200000000000
-- $6 = [1 2]
