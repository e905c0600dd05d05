-- Search that skips what cannot match, on servers with data-skipping
-- indexes (20.1 and later; none on 18.16, which scans): an n-gram bloom
-- filter of each 1,024-row granule's lowercased content, so that a search
-- for a rare phrase reads the granules that may hold it, and the set of
-- speakers of each granule, which the search's "or the speaker matches"
-- needs to skip granules too. The n-gram filter is 16 KB per granule of
-- 1,024 turns, about 160 MB at ten million turns. The indexes
-- cover parts written after this migration; older parts are read as
-- before until merged (or ALTER TABLE conversations MATERIALIZE INDEX).
-- viewer/query/search.go uses them when system.data_skipping_indices
-- lists them.
{{- if .SkipIndexes}}
ALTER TABLE conversations ADD INDEX {{ifNotExists}}idx_content_ngrams lowerUTF8(content) TYPE ngrambf_v1(3, 16384, 3, 0) GRANULARITY 1;
ALTER TABLE conversations ADD INDEX {{ifNotExists}}idx_speakers speaker TYPE set(1024) GRANULARITY 1
{{- end}}
