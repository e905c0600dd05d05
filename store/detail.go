package store

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// Caps on what the detail pane shows of a span's row at first: its first
// DetailAttributes attributes, resource attributes and events, each value
// cut to DetailValueRunes runes. SpanAttributes reads them all when asked.
const (
	DetailAttributes = 50
	DetailValueRunes = 1024
)

// SpanAttributes is what the spans table holds of one span beside what the
// waterfall draws: its attributes, its resource's and its events' names
// and times, each list possibly capped, with the count of all.
type SpanAttributes struct {
	Attributes      []schema.Attr `json:"attributes"`
	AttributesTotal int           `json:"attributes_total"`
	Resource        []schema.Attr `json:"resource"`
	ResourceTotal   int           `json:"resource_total"`
	EventNames      []string      `json:"-"`
	EventTimesNS    []uint64      `json:"-"`
	EventsTotal     int           `json:"events_total"`
	// ContentInTurns says the row left out the span's content attributes,
	// which its turns hold (schema.KeyContentInTurns).
	ContentInTurns bool `json:"-"`
}

// Capped says a list or a value was cut.
func (a SpanAttributes) Capped() bool {
	return a.AttributesTotal > len(a.Attributes) || a.ResourceTotal > len(a.Resource) || a.EventsTotal > len(a.EventNames)
}

// selectSpanAttributes reads the attributes, resource and events of
// {span} of {trace}, each list cut to its first {entries} and each value to
// {runes} runes, and whether the row carries the content marker
// (schema.KeyContentInTurns). Copies of a span delivered twice are the
// same span: any one does.
const selectSpanAttributes = `
SELECT arraySlice(attributes.key, 1, {entries}) AS attr_keys,
       arrayMap(v -> substringUTF8(v, 1, {runes}), arraySlice(attributes.value, 1, {entries})) AS attr_values,
       length(attributes.key) AS attr_total,
       arraySlice(resource.key, 1, {entries}) AS res_keys,
       arrayMap(v -> substringUTF8(v, 1, {runes}), arraySlice(resource.value, 1, {entries})) AS res_values,
       length(resource.key) AS res_total,
       arraySlice(events.name, 1, {entries}) AS event_names,
       arraySlice(events.time_ns, 1, {entries}) AS event_times,
       length(events.name) AS events_total,
       arrayExists((k, v) -> k = '` + schema.KeyContentInTurns + `' AND v = '` + schema.ContentInTurns + `', attributes.key, attributes.value) AS content_in_turns
FROM spans
WHERE trace_id = {trace} AND span_id = {span}
LIMIT 1`

// spanAttributes is selectSpanAttributes of a span, entries and runes
// capped at n and m.
func spanAttributes(traceID, spanID string, n, m uint64) sqlText {
	return sqlf(selectSpanAttributes, holes{"trace": arg(traceID), "span": arg(spanID), "entries": arg(n), "runes": arg(m)})
}

// allEntries is a cap that keeps every entry and every value whole.
const allEntries = uint64(1) << 31

// ReadSpanAttributes returns a span's attributes, resource and events,
// capped (DetailAttributes, DetailValueRunes) unless all; found is false
// when the spans table has no row of it (a call still running has only
// turns).
func (s Store) ReadSpanAttributes(ctx context.Context, traceID, spanID string, all bool) (a SpanAttributes, found bool, err error) {
	n, m := uint64(DetailAttributes), uint64(DetailValueRunes)
	if all {
		n, m = allEntries, allEntries
	}
	q := spanAttributes(traceID, spanID, n, m)
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return a, false, fmt.Errorf("query span attributes: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return a, false, fmt.Errorf("read span attributes: %w", err)
		}
		return a, false, nil
	}
	var (
		keys, values, resKeys, resValues []string
		attrTotal, resTotal, eventsTotal uint64
		contentInTurns                   uint8
	)
	if err := rows.Scan(&keys, &values, &attrTotal, &resKeys, &resValues, &resTotal,
		&a.EventNames, &a.EventTimesNS, &eventsTotal, &contentInTurns); err != nil {
		return a, false, fmt.Errorf("scan span attributes: %w", err)
	}
	a.Attributes, a.Resource = zipAttrs(keys, values), zipAttrs(resKeys, resValues)
	a.AttributesTotal, a.ResourceTotal, a.EventsTotal = int(attrTotal), int(resTotal), int(eventsTotal)
	a.ContentInTurns = contentInTurns == 1
	return a, true, rows.Err()
}

// SpanNotFound is the error of a trace that has no span with the id: a
// 404 to the handlers, naming both.
func SpanNotFound(traceID, spanID string) error {
	return notFoundError(fmt.Sprintf("trace %q has no span %q", traceID, spanID))
}
