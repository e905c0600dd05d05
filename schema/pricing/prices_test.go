package pricing

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

func TestPriceLookup(t *testing.T) {
	user, err := ParsePrices([]byte(`
prices:
  - {pattern: 'gpt-5', input: 1, output: 2, checked: 2026-01-01}
  - {pattern: 'acme-[a-z]+', input: 0.5, output: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	prices := user.Over(DefaultPrices())
	cases := []struct {
		model     string
		wantInput float64 // -1: no price
	}{
		{"gpt-5", 1}, // overridden by the user file
		{"GPT-5-2025-08-07", 1},
		{"openai/gpt-5", 1},
		{"gpt-5-mini", 0.25}, // anchored: gpt-5 does not swallow gpt-5-mini
		{"gpt-5-mini-2025-08-07", 0.25},
		{"gpt-4o-2024-08-06", 2.5},
		{"gpt-4o-mini", 0.15},
		{"gpt-4.1-nano", 0.1},
		{"o3", 2},
		{"o3-mini", 1.1},
		{"claude-sonnet-4-5-20250929", 3},
		{"claude-sonnet-4-5", 3},
		{"anthropic/claude-opus-4.1", 15},
		{"claude-opus-4-1-20250805", 15},
		{"claude-opus-4-5", 5},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", 0.8},
		{"claude-3-5-sonnet-latest", 3},
		{"google/gemini-2.5-pro", 1.25},
		{"models/gemini-2.5-flash", 0.3},
		{"gemini-2.0-flash-001", 0.1},
		{"mistral-large-2411", 2},
		{"mistral-large-latest", 2},
		{"deepseek-chat", 0.28},
		{"grok-4-0709", 3},
		{"grok-4-fast-reasoning", 0.2},
		{"acme-turbo", 0.5}, // added by the user file
		{"qwen2.5-coder:32b", -1},
		{"gpt-5x", -1},
		{"my-gpt-5", -1},
		{"", -1},
	}
	for _, c := range cases {
		p, ok := prices.Lookup(c.model)
		got := -1.0
		if ok {
			got = p.Input
		}
		if got != c.wantInput {
			t.Errorf("Lookup(%q): input price %v (pattern %q), want %v", c.model, got, p.Pattern, c.wantInput)
		}
	}
}

func TestPriceCost(t *testing.T) {
	openai := Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25, Reasoning: 10}
	anthropic := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, Reasoning: 15}
	cheapThinking := Price{Input: 1, Output: 4, CacheRead: 1, CacheWrite: 1, Reasoning: 2}
	cases := []struct {
		name  string
		price Price
		usage Usage
		want  float64
	}{
		{"input and output", openai, Usage{In: u32(1_000_000), Out: u32(100_000)}, 1.25 + 1},
		// OpenAI: 800k of the 1M prompt tokens were cached reads.
		{"cache read inside input", openai, Usage{In: u32(1_000_000), CacheRead: u32(800_000)}, 0.2*1.25 + 0.8*0.125},
		// Anthropic as llmhttp stores it: input counts reads and writes.
		{"cache read and write inside input", anthropic, Usage{In: u32(1_100_000), CacheRead: u32(600_000), CacheWrite: u32(400_000)},
			0.1*3 + 0.6*0.3 + 0.4*3.75},
		// Anthropic's own input_tokens (e.g. Claude Code's result line)
		// leave the cache out: input smaller than the cache tokens.
		{"cache outside input", anthropic, Usage{In: u32(1_000), CacheRead: u32(500_000), CacheWrite: u32(100_000)},
			0.001*3 + 0.5*0.3 + 0.1*3.75},
		{"reasoning inside output", cheapThinking, Usage{Out: u32(1_000_000), Reasoning: u32(250_000)}, 0.75*4 + 0.25*2},
		{"reasoning beyond output", cheapThinking, Usage{Out: u32(100_000), Reasoning: u32(200_000)}, 0.1*4 + 0.2*2},
		{"nothing", openai, Usage{}, 0},
	}
	for _, c := range cases {
		if got := c.price.Cost(c.usage); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Cost(%+v) = %v, want %v", c.name, c.usage, got, c.want)
		}
	}
}

func TestPriceTurn(t *testing.T) {
	prices := DefaultPrices()
	cases := []struct {
		name       string
		turn       schema.Turn
		wantCost   *float64
		wantSource string
	}{
		{"provided cost kept", schema.Turn{Model: "gpt-5", TokensIn: u32(1_000_000), CostUSD: f64(0.5)}, f64(0.5), schema.CostProvided},
		{"priced", schema.Turn{Model: "gpt-5-2025-08-07", TokensIn: u32(1_000_000), TokensOut: u32(1_000_000)}, f64(11.25), schema.CostPriced},
		{"cache read priced", schema.Turn{Model: "gpt-5", TokensIn: u32(1_000_000), TokensCacheRead: u32(1_000_000)}, f64(0.125), schema.CostPriced},
		{"unknown model stays NULL", schema.Turn{Model: "qwen2.5-coder:32b", TokensIn: u32(10), TokensOut: u32(10)}, nil, schema.CostUnknown},
		{"no usage, no source", schema.Turn{Model: "gpt-5", Role: schema.RolePrompt}, nil, ""},
	}
	col := slices.Index(schema.TurnColumns, "cost_source")
	for _, c := range cases {
		tu := c.turn
		prices.PriceTurn(&tu)
		// The source stored is price's or, left blank, schema's.
		if source := tu.Values()[col]; source != c.wantSource || (tu.CostUSD == nil) != (c.wantCost == nil) ||
			tu.CostUSD != nil && math.Abs(*tu.CostUSD-*c.wantCost) > 1e-12 {
			t.Errorf("%s: price(%+v) = cost %v source %q, want %v %q", c.name, c.turn, show(tu.CostUSD), source, show(c.wantCost), c.wantSource)
		}
	}

	huge, err := ParsePrices([]byte(`prices: [{pattern: big, input: 1e308, output: 1e308}]`))
	if err != nil {
		t.Fatal(err)
	}
	tu := schema.Turn{Model: "big", TokensIn: u32(4e9), TokensOut: u32(4e9)}
	if huge.PriceTurn(&tu); tu.CostUSD != nil {
		t.Errorf("a cost overflowing to %v was stored, want unknown", *tu.CostUSD)
	}
}

func show(f *float64) any {
	if f == nil {
		return "NULL"
	}
	return *f
}

func TestParsePricesErrors(t *testing.T) {
	cases := []struct{ name, file string }{
		{"unknown field", `{"prices": [{"pattern": "x", "input": 1, "output": 1, "inptu": 2}]}`},
		{"no pattern", `{"prices": [{"input": 1, "output": 1}]}`},
		{"no output", `prices: [{pattern: x, input: 1}]`},
		{"negative", `prices: [{pattern: x, input: 1, output: -1}]`},
		{"NaN", `prices: [{pattern: x, input: .nan, output: 1}]`},
		{"infinite", `prices: [{pattern: x, input: 1, output: 1, cache_read: .inf}]`},
		{"bad pattern", `prices: [{pattern: 'x(', input: 1, output: 1}]`},
	}
	for _, c := range cases {
		if _, err := ParsePrices([]byte(c.file)); err == nil {
			t.Errorf("%s: ParsePrices(%s) gave no error", c.name, c.file)
		}
	}
}

func TestLoadPricesJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"prices": [{"pattern": "claude-sonnet-4[-.]5", "input": 2, "output": 10, "cache_read": 0.2}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrices(path, DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	got, ok := p.Lookup("claude-sonnet-4-5-20250929")
	// An override replaces the built-in entry; unset prices default to
	// input (cache write) and output (reasoning).
	want := Price{Pattern: "claude-sonnet-4[-.]5", Input: 2, Output: 10, CacheRead: 0.2, CacheWrite: 2, Reasoning: 10}
	got.re = nil
	if !ok || got != want {
		t.Errorf("Lookup after LoadPrices = %+v, %v; want %+v", got, ok, want)
	}
	if len(p.entries) != len(DefaultPrices().entries)+1 {
		t.Errorf("%d entries, want the built-in ones plus one", len(p.entries))
	}
	if savings, ok := p.CacheSavings("claude-sonnet-4-5", 1_000_000); !ok || math.Abs(savings-1.8) > 1e-12 {
		t.Errorf("CacheSavings = %v, %v; want 1.8", savings, ok)
	}
}

// Every built-in entry says whose price it is and when it was checked.
func TestDefaultPricesDated(t *testing.T) {
	date := regexp.MustCompile(`^20\d\d-\d\d-\d\d$`)
	providers := map[string]bool{}
	for _, e := range DefaultPrices().entries {
		providers[e.Provider] = true
		if !date.MatchString(e.Checked) || e.Provider == "" || e.Input <= 0 {
			t.Errorf("entry %q: provider %q, checked %q, input %v; want a provider, a YYYY-MM-DD date and a price", e.Pattern, e.Provider, e.Checked, e.Input)
		}
	}
	for _, want := range []string{"openai", "anthropic", "google", "mistral", "deepseek", "xai"} {
		if !providers[want] {
			t.Errorf("no built-in price of %s", want)
		}
	}
}

func u32(n uint32) *uint32   { return &n }
func f64(f float64) *float64 { return &f }

// A turn that names no provider takes its model's from the price table;
// one that names it keeps it, and an unknown model gets none.
func TestPriceTurnNamesProvider(t *testing.T) {
	p := DefaultPrices()
	for _, c := range []struct{ model, provider, want string }{
		{"gpt-4o-mini", "", "openai"},
		{"claude-3-5-haiku-20241022", "", "anthropic"},
		{"claude-3-5-haiku-20241022", "aws.bedrock", "aws.bedrock"},
		{"my-own-model", "", ""},
	} {
		turn := schema.Turn{Model: c.model, Provider: c.provider}
		p.PriceTurn(&turn)
		if turn.Provider != c.want {
			t.Errorf("model %q provider %q: got %q, want %q", c.model, c.provider, turn.Provider, c.want)
		}
	}
}
