package genai

import "testing"

func TestParseNormalizes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "OTel shape: arguments as a JSON string become JSON, result kept, unknown parts kept",
			in: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":"{\"b\": 1, \"a\": [true]}"}]},
			      {"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":{"ok":true}}]},
			      {"role":"user","parts":[{"type":"blob","modality":"image","mime_type":"image/png","content":"iVBO"}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":{"a":[true],"b":1}}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":{"ok":true}}]},` +
				`{"role":"user","parts":[{"content":"iVBO","mime_type":"image/png","modality":"image","type":"blob"}]}]`,
		},
		{
			name: "chat-completions shape: content parts, tool calls, tool result",
			in: `[{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},
			      {"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"g","arguments":"not json"}}]},
			      {"role":"tool","tool_call_id":"c2","content":"done <ok> & fine"}]`,
			want: `[{"role":"user","parts":[{"type":"text","content":"Look:"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}]},` +
				`{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"g","arguments":"not json"}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"c2","response":"done <ok> & fine"}]}]`,
		},
		{
			name: "Anthropic shape: thinking, tool_use, tool_result",
			in: `[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","id":"toolu_1","name":"ls","input":{"dir":"."}}]},
			      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.go"}]}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"reasoning","content":"hmm"},{"type":"tool_call","id":"toolu_1","name":"ls","arguments":{"dir":"."}}]},` +
				`{"role":"user","parts":[{"type":"tool_call_response","id":"toolu_1","response":"a.go"}]}]`,
		},
		{
			name: "large numbers keep their digits",
			in:   `[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"id":9007199254740993}}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"id":9007199254740993}}]}]`,
		},
	}
	for _, tt := range tests {
		ms, ok := Parse(tt.in)
		if !ok {
			t.Errorf("%s: Parse(%s) failed", tt.name, tt.in)
			continue
		}
		if got := Render(ms); got != tt.want {
			t.Errorf("%s: normalized\n  %s\n got %s\nwant %s", tt.name, tt.in, got, tt.want)
		}
	}
	if _, ok := Parse("plain text"); ok {
		t.Error("Parse accepted text that is no JSON array")
	}
}
