package store

import (
	"cmp"
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store/page"
)

// defaultCostFrom is where a cost report starts when from is not given:
// UTC midnight 30 days back, a whole first day that the summaries answer,
// where "30d" would start mid-day and read that day live on every request.
func defaultCostFrom(now time.Time) string {
	return now.UTC().AddDate(0, 0, -30).Format(time.DateOnly)
}

// CostDimensions are the names GroupCost groups by, in the order of
// CostCell's fields.
var CostDimensions = []string{"day", "model", "provider", "phase", "speaker", "agent"}

func (c CostCell) dimension(name string) string {
	switch name {
	case "day":
		return c.Day
	case "model":
		return c.Model
	case "provider":
		return c.Provider
	case "phase":
		return c.Phase
	case "speaker":
		return c.Speaker
	case "agent":
		return c.Agent
	}
	return ""
}

// CostTable is a cost report's usage grouped by the dimensions By, one row
// per distinct key, most expensive first (by day: oldest first).
type CostTable struct {
	Name string      `json:"name"`
	By   []string    `json:"by"`
	Rows []CostGroup `json:"rows"`
}

// CostGroup is one row of a CostTable: the values of the table's
// dimensions and the group's usage.
type CostGroup struct {
	Key []string `json:"key"`
	CostUsage
}

// GroupCost folds cells into a table grouped by the dimensions by (names
// of CostDimensions); an unknown name is a *page.ParamError for the field "by".
func GroupCost(cells []CostCell, by []string) (CostTable, error) {
	for _, d := range by {
		if !slices.Contains(CostDimensions, d) {
			return CostTable{}, page.BadParam("by", "%q is not one of %s", d, strings.Join(CostDimensions, ", "))
		}
	}
	t := CostTable{Name: strings.Join(by, "_"), By: by, Rows: []CostGroup{}}
	index := map[string]int{}
	for _, c := range cells {
		key := make([]string, len(by))
		for i, d := range by {
			key[i] = c.dimension(d)
		}
		id := strings.Join(key, "\x00")
		i, ok := index[id]
		if !ok {
			i = len(t.Rows)
			index[id] = i
			t.Rows = append(t.Rows, CostGroup{Key: key})
		}
		t.Rows[i].Add(c.CostUsage)
	}
	byDay := len(by) > 0 && by[0] == "day"
	slices.SortStableFunc(t.Rows, func(a, b CostGroup) int {
		if !byDay {
			if c := compareCost(a.CostUSD, b.CostUSD); c != 0 {
				return c
			}
		}
		return slices.Compare(a.Key, b.Key)
	})
	return t, nil
}

// compareCost orders the most expensive first and unknown costs last.
func compareCost(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*b, *a)
}

// Add adds o's usage to u; a sum stays nil (unknown) while neither side
// knows it.
func (u *CostUsage) Add(o CostUsage) {
	u.Calls += o.Calls
	u.Unpriced += o.Unpriced
	u.TokensIn = AddKnown(u.TokensIn, o.TokensIn)
	u.TokensOut = AddKnown(u.TokensOut, o.TokensOut)
	u.CacheRead = AddKnown(u.CacheRead, o.CacheRead)
	u.CacheWrite = AddKnown(u.CacheWrite, o.CacheWrite)
	u.Reasoning = AddKnown(u.Reasoning, o.Reasoning)
	u.CostUSD = AddKnown(u.CostUSD, o.CostUSD)
	u.CacheSavingsUSD = AddKnown(u.CacheSavingsUSD, o.CacheSavingsUSD)
}

// usdDecimals is the decimal places a cost keeps: a price per million
// tokens times one token needs at most about ten, and more is the noise of
// adding binary floats (0.050199999999999995 for 0.0502).
const usdDecimals = 10

// roundUSD is v at usdDecimals decimal places, the double nearest that
// decimal, so that JSON and CSV write it in its shortest form.
func roundUSD(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', usdDecimals, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// roundKnown is roundUSD of a known cost; nil stays unknown.
func roundKnown(p *float64) *float64 {
	if p == nil {
		return nil
	}
	r := roundUSD(*p)
	return &r
}

// round rounds u's costs as every cost answer carries them: the cost
// scans and AddKnown pass each sum through it.
func (u *CostUsage) round() {
	u.CostUSD, u.CacheSavingsUSD = roundKnown(u.CostUSD), roundKnown(u.CacheSavingsUSD)
}

// Deref is a chart's value of a sum: 0 when unknown.
func Deref[T uint64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// HitRate is the share of input tokens read from the cache as a
// percentage, — when either count is unknown or there was no input. Input
// includes the cache tokens (schema.InputTokens); rows stored before that
// rule may hold less, so the input is at least the cache tokens and the
// rate never passes 100%.
func (u CostUsage) HitRate() string {
	if u.TokensIn == nil || u.CacheRead == nil || *u.TokensIn == 0 {
		return Unknown
	}
	in := max(*u.TokensIn, *u.CacheRead+Deref(u.CacheWrite))
	return strconv.FormatFloat(100*float64(*u.CacheRead)/float64(in), 'f', 1, 64) + "%"
}

// NoUsageReported is what a report shows for the tokens of a group of
// calls none of which reported usage: not —, which reads as a value lost.
const NoUsageReported = "no usage reported"

// UsageNote is NoUsageReported when u has calls and none reported tokens
// (an unpriced call did), else "" (the sums speak for themselves).
func (u CostUsage) UsageNote() string {
	if u.Calls > 0 && u.Unpriced == 0 && u.TokensIn == nil && u.TokensOut == nil {
		return NoUsageReported
	}
	return ""
}

// Tokens is input plus output tokens, nil when neither is known.
func (u CostUsage) Tokens() *uint64 { return AddKnown(u.TokensIn, u.TokensOut) }

// ParseCostRange reads the range of a cost report as the cost page does:
// from and to are times (RFC 3339, 2006-01-02T15:04, a date) or ages such
// as 24h or 7d; from defaults to UTC midnight 30 days before now, to to
// now. A bad value is a *page.ParamError naming from or to.
func ParseCostRange(from, to string, now time.Time) (CostFilter, error) {
	if strings.TrimSpace(from) == "" {
		from = defaultCostFrom(now)
	}
	fromNS, toNS, err := page.TimeRange(from, to, now)
	if err != nil {
		return CostFilter{}, err
	}
	if toNS == 0 {
		toNS = uint64(now.UnixNano())
	}
	if toNS < fromNS {
		return CostFilter{}, page.BadParam("from", "%q is after now", from)
	}
	return CostFilter{FromNS: fromNS, ToNS: toNS}, nil
}

// costCSVColumns are the usage columns of every cost CSV, after the key.
var costCSVColumns = []string{"calls", "tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write",
	"tokens_reasoning", "cost_usd", "unpriced_calls", "cache_savings_usd"}

// WriteCostCSV writes t as CSV: a header of its dimensions and the usage
// columns, then one record per row. Unknown values are empty fields.
func WriteCostCSV(w io.Writer, t CostTable) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(t.By), costCSVColumns...)); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(csvCells(append(slices.Clone(r.Key), r.Record()...))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCells neutralises cells a spreadsheet would run as a formula (a model,
// speaker or thread name starting with = + - @, a tab or a carriage
// return) by putting a quote before them, as OWASP advises for CSV
// injection; numbers never start so.
func csvCells(cells []string) []string {
	for i, c := range cells {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			cells[i] = "'" + c
		}
	}
	return cells
}

func WriteThreadsCSV(w io.Writer, threads []CostThread) error {
	t := CostTable{By: []string{"thread_id", "project"}}
	for _, th := range threads {
		t.Rows = append(t.Rows, CostGroup{Key: []string{th.ThreadID, th.Project}, CostUsage: th.CostUsage})
	}
	return WriteCostCSV(w, t)
}

// Record is the usage in the order of costCSVColumns, for CSV: exact
// numbers, "" when unknown.
func (u CostUsage) Record() []string {
	count := func(p *uint64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatUint(*p, 10)
	}
	usd := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	return []string{strconv.FormatUint(u.Calls, 10), count(u.TokensIn), count(u.TokensOut), count(u.CacheRead),
		count(u.CacheWrite), count(u.Reasoning), usd(u.CostUSD), strconv.FormatUint(u.Unpriced, 10), usd(u.CacheSavingsUSD)}
}

// FormatCount writes n with thousands separators (1,234,567), as every
// page shows counts.
func FormatCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatUSD writes an amount of dollars with up to four decimals, at least
// two, and below a cent with two significant digits (0.0000066, not 0.00),
// so a cheap call never reads as free.
func FormatUSD(v float64) string {
	decimals := 4
	if a := math.Abs(v); a > 0 && a < 0.01 {
		decimals = 1 - int(math.Floor(math.Log10(a)))
	}
	s := strings.TrimRight(strconv.FormatFloat(v, 'f', decimals, 64), "0")
	if i := strings.IndexByte(s, '.'); len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// Unknown is how a value no call reported shows: never as 0.
const Unknown = "—"
