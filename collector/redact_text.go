package collector

import "strings"

// Tests on text the redaction patterns share.

// randomToken tells a key (sk-Ab3…, random letters and digits) from
// kebab-case words that happen to start with sk- (sk-learn-…): it has a
// digit, and an upper-case letter or a run of 20 letters and digits.
func randomToken(s string) bool {
	if !hasDigit(s) {
		return false
	}
	run := 0
	for _, c := range []byte(s) {
		switch {
		case 'A' <= c && c <= 'Z':
			return true
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			if run++; run >= 20 {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// containsFold reports whether s contains word, which is lower-case
// ASCII, in any case.
func containsFold(s, word string) bool {
	lower, upper := word[0], word[0]-'a'+'A'
	// The next place of each case of the first letter, found with
	// IndexByte (vectorised) and looked for again only once passed.
	next := func(c byte, from int) int {
		if j := strings.IndexByte(s[from:], c); j >= 0 {
			return from + j
		}
		return len(s)
	}
	lo, up := next(lower, 0), next(upper, 0)
	for {
		i := min(lo, up)
		if i+len(word) > len(s) {
			return false
		}
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
		if i == lo {
			lo = next(lower, i+1)
		} else {
			up = next(upper, i+1)
		}
	}
}
