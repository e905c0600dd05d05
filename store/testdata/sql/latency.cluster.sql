SELECT dim.1 AS dimension, dim.2 AS dim_key,
       sum(cell_calls) AS calls,
       sum(cell_failed) AS failed,
       quantilesExactMerge(0.5, 0.95, 0.99)(cell_duration) AS duration_q,
       sum(cell_ttft_calls) AS ttft_calls,
       quantilesExactIfMerge(0.5, 0.95, 0.99)(cell_ttft) AS ttft_q
FROM
(
    SELECT arrayJoin([('all', ''), ('model', call_model), ('provider', call_provider),
                      ('phase', call_phase), ('speaker', call_speaker)]) AS dim,
           cell_calls, cell_failed, cell_duration, cell_ttft_calls, cell_ttft
    FROM
    (
        SELECT CAST(model AS String) AS call_model, CAST(provider AS String) AS call_provider,
               CAST(phase AS String) AS call_phase, CAST(speaker AS String) AS call_speaker,
               calls AS cell_calls, failed AS cell_failed, duration AS cell_duration,
               ttft_calls AS cell_ttft_calls, ttft AS cell_ttft
        FROM latency_daily
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
  AND (? = '' OR model = ?) AND (? = '' OR provider = ?)
  AND (? = '' OR phase = ?) AND (? = '' OR speaker = ?)
        UNION ALL
        SELECT call_model, call_provider, call_phase, call_speaker,
               count() AS cell_calls,
               sum(call_failed) AS cell_failed,
               quantilesExactState(0.5, 0.95, 0.99)(call_duration) AS cell_duration,
               countIf(call_ttft > 0) AS cell_ttft_calls,
               quantilesExactIfState(0.5, 0.95, 0.99)(call_ttft, call_ttft > 0) AS cell_ttft
        FROM
        (
            SELECT any(piece_model) AS call_model, any(piece_provider) AS call_provider,
                   any(piece_phase) AS call_phase, any(piece_speaker) AS call_speaker,
                   max(piece_duration) AS call_duration,
                   max(piece_ttft) AS call_ttft,
                   max(piece_failed) AS call_failed
            FROM
            (
                SELECT trace_id, span_id,
                       CAST(model AS String) AS piece_model, CAST(provider AS String) AS piece_provider,
                       CAST(phase AS String) AS piece_phase, CAST(speaker AS String) AS piece_speaker,
                       toUInt8(1) AS piece_ends, duration_ns AS piece_duration, ttft_ns AS piece_ttft, failed AS piece_failed
                FROM latency_crossing
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
  AND (? = '' OR model = ?) AND (? = '' OR provider = ?)
  AND (? = '' OR phase = ?) AND (? = '' OR speaker = ?)
                UNION ALL
                SELECT trace_id, span_id,
                       CAST(model AS String) AS piece_model, CAST(provider AS String) AS piece_provider,
                       CAST(phase AS String) AS piece_phase, CAST(speaker AS String) AS piece_speaker, toUInt8(0), toUInt64(0), ttft_ns, toUInt8(1)
                FROM latency_errors
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
  AND (? = '' OR model = ?) AND (? = '' OR provider = ?)
  AND (? = '' OR phase = ?) AND (? = '' OR speaker = ?)
                  AND (trace_id, span_id) IN
                  (
                      SELECT trace_id, span_id
                      FROM latency_crossing
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
                      UNION ALL
                      SELECT trace_id, span_id
                      FROM conversations
                      PREWHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
                      WHERE cost_source != '' AND start_ns < ? + duration_ns
                  )
                UNION ALL
                SELECT trace_id, span_id,
                       CAST(model AS String) AS piece_model, CAST(provider AS String) AS piece_provider,
                       CAST(phase AS String) AS piece_phase, CAST(speaker AS String) AS piece_speaker, CAST(cost_source != '' AS UInt8),
                       if(cost_source != '', duration_ns, 0), ttft_ns, CAST(role = 'error' OR status = 'error' AS UInt8)
                FROM conversations
                PREWHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
                      OR ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
                WHERE (? = '' OR project = ?)
  AND (? = '' OR model = ?) AND (? = '' OR provider = ?)
  AND (? = '' OR phase = ?) AND (? = '' OR speaker = ?)
                  AND (cost_source != '' OR role = 'error' OR status = 'error')
            )
            GROUP BY trace_id, span_id
            HAVING max(piece_ends) > 0
        )
        GROUP BY call_model, call_provider, call_phase, call_speaker
    )
)
GROUP BY dimension, dim_key
ORDER BY dimension, calls DESC, dim_key
-- $1 = 0
-- $2 = 0
-- $3 = p
-- $4 = p
-- $5 = []
-- $6 = gpt-5
-- $7 = gpt-5
-- $8 = 
-- $9 = 
-- $10 = 
-- $11 = 
-- $12 = 
-- $13 = 
-- $14 = 0
-- $15 = 0
-- $16 = p
-- $17 = p
-- $18 = []
-- $19 = gpt-5
-- $20 = gpt-5
-- $21 = 
-- $22 = 
-- $23 = 
-- $24 = 
-- $25 = 
-- $26 = 
-- $27 = 0
-- $28 = 0
-- $29 = p
-- $30 = p
-- $31 = []
-- $32 = gpt-5
-- $33 = gpt-5
-- $34 = 
-- $35 = 
-- $36 = 
-- $37 = 
-- $38 = 
-- $39 = 
-- $40 = 0
-- $41 = 0
-- $42 = p
-- $43 = p
-- $44 = []
-- $45 = 0
-- $46 = 1
-- $47 = 0
-- $48 = 0
-- $49 = 0
-- $50 = 86400
-- $51 = 259201
-- $52 = 86400000000001
-- $53 = 259200000000001
-- $54 = 0
-- $55 = 1
-- $56 = 0
-- $57 = 0
-- $58 = p
-- $59 = p
-- $60 = gpt-5
-- $61 = gpt-5
-- $62 = 
-- $63 = 
-- $64 = 
-- $65 = 
-- $66 = 
-- $67 = 
