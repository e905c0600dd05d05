SELECT count()
FROM system.data_skipping_indices
WHERE database = currentDatabase() AND table = ? AND name IN ('idx_content_ngrams', 'idx_speakers')
-- $1 = conversations_local
