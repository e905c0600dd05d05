package genai

// Join returns the one message an answer streamed in pieces makes: a
// piece's first text or reasoning runs on from the text before it, a tool call piece that names no new call
// (no id, or the id of one already open) adds to that call's arguments,
// and the last finish reason given is the message's. Joined arguments that
// are JSON become JSON.
func Join(pieces []Message) Message {
	var m Message
	open := map[string]int{} // tool call id → part index
	last := -1               // the last tool call part
	args := map[int]string{} // arguments text of joined calls
	for _, piece := range pieces {
		if m.Role == "" {
			m.Role = piece.Role
		}
		if piece.FinishReason != "" {
			m.FinishReason = piece.FinishReason
		}
		for j, p := range piece.Parts {
			n := len(m.Parts)
			switch {
			case j == 0 && (p.Type == PartText || p.Type == PartReasoning) && n > 0 && m.Parts[n-1].Type == p.Type:
				m.Parts[n-1].Content += p.Content
				continue
			case p.Type == PartToolCall:
				i, known := open[p.ID]
				if p.ID == "" && last >= 0 {
					i, known = last, true
				}
				if known {
					if p.Name != "" && m.Parts[i].Name == "" {
						m.Parts[i].Name = p.Name
					}
					if _, ok := args[i]; !ok {
						args[i] = String(m.Parts[i].Arguments)
					}
					args[i] += String(p.Arguments)
					continue
				}
				if p.ID != "" {
					open[p.ID] = n
				}
				last = n
			}
			m.Parts = append(m.Parts, p)
		}
	}
	for i, a := range args {
		m.Parts[i].Arguments = nil
		if a != "" {
			m.Parts[i].Arguments = jsonOrString(a)
		}
	}
	return m
}
