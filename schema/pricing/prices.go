package pricing

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/convtrace/convtrace/schema"
)

// Price is what one model family costs, in US dollars per million tokens.
type Price struct {
	// Pattern is an anchored, case-insensitive regular expression on the
	// model name, once a provider prefix and a date or version suffix are
	// taken off (see Prices.Lookup).
	Pattern    string
	Provider   string
	Input      float64 // uncached input tokens
	Output     float64 // output tokens
	CacheRead  float64 // input tokens read from the prompt cache
	CacheWrite float64 // input tokens written to the prompt cache
	Reasoning  float64 // reasoning tokens, a part of the output
	Checked    string  // date of the published price this follows

	re *regexp.Regexp
}

// Prices is a price table: the first entry whose pattern matches a model
// prices it. The zero value prices nothing.
type Prices struct {
	entries []Price
	memo    *lookupMemo
}

// lookupMemo remembers the price of the model names seen, so that ingest
// matches a name against the patterns once, not on every call. Model
// names are few; past memoLimit of them (a sender making names up) lookups
// are simply not remembered.
type lookupMemo struct {
	m sync.Map // model name → index of its entry, -1 for none
	n atomic.Int64
}

const memoLimit = 4096

//go:embed prices.yaml
var builtinPrices []byte

// DefaultPrices returns the built-in price table (prices.yaml). It is
// parsed once: every exporter and ingester starts from it.
var DefaultPrices = sync.OnceValue(func() Prices {
	p, err := ParsePrices(builtinPrices)
	if err != nil {
		panic(fmt.Sprintf("pricing: built-in prices.yaml: %v", err)) // embedded: a broken build
	}
	return p
})

// priceFile is the format of prices.yaml and of a user's --prices file. A
// price left out defaults as documented there, so pointers tell "not
// given" from a real price of zero.
type priceFile struct {
	Prices []struct {
		Pattern    string   `yaml:"pattern"`
		Provider   string   `yaml:"provider"`
		Input      *float64 `yaml:"input"`
		Output     *float64 `yaml:"output"`
		CacheRead  *float64 `yaml:"cache_read"`
		CacheWrite *float64 `yaml:"cache_write"`
		Reasoning  *float64 `yaml:"reasoning"`
		Checked    string   `yaml:"checked"`
	} `yaml:"prices"`
}

// ParsePrices reads a price table in the format of prices.yaml, YAML or
// JSON (JSON is YAML too, so one strict decoder reads both). Unknown
// fields, a missing pattern, input or output price, a negative, NaN or
// infinite price and a pattern that does not compile are errors naming the
// entry.
func ParsePrices(data []byte) (Prices, error) {
	var f priceFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Prices{}, fmt.Errorf("decode prices: %w", err)
	}
	p := Prices{memo: &lookupMemo{}}
	for i, e := range f.Prices {
		name := fmt.Sprintf("prices[%d] (%q)", i, e.Pattern)
		if e.Pattern == "" {
			return Prices{}, fmt.Errorf("%s: pattern is missing", name)
		}
		if e.Input == nil || e.Output == nil {
			return Prices{}, fmt.Errorf("%s: input and output prices are required", name)
		}
		pr := Price{Pattern: e.Pattern, Provider: e.Provider, Checked: e.Checked,
			Input: *e.Input, Output: *e.Output, CacheRead: *e.Input, CacheWrite: *e.Input, Reasoning: *e.Output}
		for _, v := range []struct {
			dst *float64
			src *float64
		}{{&pr.CacheRead, e.CacheRead}, {&pr.CacheWrite, e.CacheWrite}, {&pr.Reasoning, e.Reasoning}} {
			if v.src != nil {
				*v.dst = *v.src
			}
		}
		for _, v := range []float64{pr.Input, pr.Output, pr.CacheRead, pr.CacheWrite, pr.Reasoning} {
			if !schema.ValidCost(v) {
				return Prices{}, fmt.Errorf("%s: price %v is not a finite, non-negative number", name, v)
			}
		}
		re, err := regexp.Compile(`^(?i:` + e.Pattern + `)$`)
		if err != nil {
			return Prices{}, fmt.Errorf("%s: pattern: %w", name, err)
		}
		pr.re = re
		p.entries = append(p.entries, pr)
	}
	return p, nil
}

// LoadPrices reads a user's price file (YAML or JSON) and returns it over
// base: the file's entries are tried first, and an entry of base whose
// pattern the file repeats (ignoring case) is dropped.
func LoadPrices(path string, base Prices) (Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Prices{}, fmt.Errorf("read prices: %w", err)
	}
	user, err := ParsePrices(data)
	if err != nil {
		return Prices{}, fmt.Errorf("%s: %w", path, err)
	}
	return user.Over(base), nil
}

// Over returns p's entries followed by the entries of base that p does not
// override (same pattern, ignoring case).
func (p Prices) Over(base Prices) Prices {
	out := Prices{entries: append([]Price(nil), p.entries...), memo: &lookupMemo{}}
	for _, b := range base.entries {
		overridden := false
		for _, e := range p.entries {
			if strings.EqualFold(e.Pattern, b.Pattern) {
				overridden = true
				break
			}
		}
		if !overridden {
			out.entries = append(out.entries, b)
		}
	}
	return out
}

// Model names carry decorations around the family name: a provider or
// router prefix (openai/gpt-5, models/gemini-2.5-pro, Bedrock's
// us.anthropic.claude-…) and a snapshot suffix (-2024-08-06, -20250929,
// @20250929, -0709, -001, -latest, -v1:0). They are taken off before the
// patterns are tried, so a dated name resolves to its family's price.
var (
	modelPrefix = regexp.MustCompile(`^(?:.*/)?(?:[a-z]{2}\.)?(?:anthropic|meta|mistral|cohere|amazon|deepseek|ai21)\.|^.*/`)
	modelSuffix = regexp.MustCompile(`(?i)(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest|v\d+(?::\d+)?))+$`)
)

// family returns model without its provider prefix and snapshot suffix.
func family(model string) string {
	m := modelPrefix.ReplaceAllString(strings.TrimSpace(model), "")
	return modelSuffix.ReplaceAllString(m, "")
}

// Lookup returns the price of model: the first entry matching the whole
// name, else the first matching its family (the name without prefix and
// suffix). ok is false when no entry matches.
func (p Prices) Lookup(model string) (Price, bool) {
	i, ok := p.Index(model)
	if !ok {
		return Price{}, false
	}
	return p.entries[i], true
}

// Entry returns the i-th price of the table, as Index numbers them.
func (p Prices) Entry(i int) Price { return p.entries[i] }

// Index returns the position in the table of the price Lookup finds for
// model: store.Reprice groups models by it.
func (p Prices) Index(model string) (int, bool) {
	if model == "" {
		return 0, false
	}
	if p.memo != nil {
		if i, ok := p.memo.m.Load(model); ok {
			return i.(int), i.(int) >= 0
		}
	}
	i := p.match(model)
	if p.memo != nil && p.memo.n.Load() < memoLimit {
		p.memo.n.Add(1)
		p.memo.m.Store(model, i)
	}
	return i, i >= 0
}

// match returns the index of the entry that prices model, -1 for none.
func (p Prices) match(model string) int {
	for _, name := range []string{strings.TrimSpace(model), family(model)} {
		for i, e := range p.entries {
			if e.re.MatchString(name) {
				return i
			}
		}
	}
	return -1
}

// Cost returns what usage costs at price p, in US dollars: the sum of
// costTerms. Unknown counts are zero here: the caller decides whether a
// call with no counts at all gets a cost.
func (p Price) Cost(u Usage) float64 {
	var usd float64
	for _, t := range costTerms {
		usd += t.tokens(u) * t.price(p)
	}
	return usd / 1e6
}

// CacheSavings returns what cacheRead tokens of model would have cost as
// uncached input, minus what they cost; ok is false for an unknown model.
func (p Prices) CacheSavings(model string, cacheRead uint64) (usd float64, ok bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return float64(cacheRead) * (pr.Input - pr.CacheRead) / 1e6, true
}

// PriceTurn prices a turn with token counts, no cost and a known model
// ("priced"). Every other source (provided, unknown, none) is the one rule
// of schema's Turn.Values and the column DEFAULT, which a turn left blank
// gets. A turn that names no provider takes its model's from the table,
// as a last resort.
func (p Prices) PriceTurn(t *schema.Turn) {
	if t.Provider == "" {
		if pr, ok := p.Lookup(t.Model); ok {
			t.Provider = pr.Provider
		}
	}
	if t.CostUSD != nil || t.CostSource != "" || t.TokensIn == nil && t.TokensOut == nil {
		return
	}
	if pr, ok := p.Lookup(t.Model); ok {
		// An absurd price can still overflow: such a cost stays unknown.
		if c := pr.Cost(Usage{t.TokensIn, t.TokensOut, t.TokensCacheRead, t.TokensCacheWrite, t.TokensReasoning}); schema.ValidCost(c) {
			t.CostUSD, t.CostSource = &c, schema.CostPriced
		}
	}
}
