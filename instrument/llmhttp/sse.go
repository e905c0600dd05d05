package llmhttp

import "bytes"

// maxLine bounds the bytes an SSE parser keeps for one unfinished line, so
// a stream that never sends a newline cannot grow memory without end.
const maxLine = 16 << 20

// sseParser splits a server-sent event stream, fed in arbitrary pieces,
// into events and hands each event's data to emit.
type sseParser struct {
	emit    func(event string, data []byte)
	line    []byte // the unfinished line
	event   string
	data    []byte
	hasData bool
	skip    bool // the current line exceeded maxLine and is dropped
}

func (p *sseParser) write(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.append(b)
			return
		}
		p.append(b[:i])
		p.endLine()
		b = b[i+1:]
	}
}

func (p *sseParser) append(b []byte) {
	if p.skip {
		return
	}
	if len(p.line)+len(b) > maxLine {
		p.line, p.skip = p.line[:0], true
		return
	}
	p.line = append(p.line, b...)
}

func (p *sseParser) endLine() {
	line := bytes.TrimSuffix(p.line, []byte("\r"))
	skip := p.skip
	p.line, p.skip = p.line[:0], false
	switch {
	case skip:
	case len(line) == 0:
		p.dispatch()
	case line[0] == ':': // a comment
	default:
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			p.event = string(value)
		case "data":
			if p.hasData {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, value...)
			p.hasData = true
		}
	}
}

// flush dispatches the last event of a stream that did not end with a
// blank line.
func (p *sseParser) flush() {
	if len(p.line) > 0 {
		p.endLine()
	}
	p.dispatch()
}

func (p *sseParser) dispatch() {
	if p.hasData {
		p.emit(p.event, p.data)
	}
	p.event, p.data, p.hasData = "", p.data[:0], false
}
