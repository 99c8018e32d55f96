package serve

// glob is a Redis glob pattern (KEYS, SCAN MATCH): * any run of bytes, ?
// one byte, [abc] [^abc] [a-z] one byte of (not of) a set, \x the byte x.
// It matches by dynamic programming over pattern tokens and name bytes, in
// O(len(pattern) * len(name)) steps at most whatever the pattern, where a
// backtracking matcher takes time exponential in the number of stars
// (issue 36: `*a*a*c*?` and more stars against a 200-byte name took seconds).
type glob struct {
	toks  []globTok
	fixed int // tokens that take one byte each
}

type globTok struct {
	kind byte // '*', '?', 'l' (the byte b), '[' (a byte in set)
	b    byte
	set  *[4]uint64
}

func compileGlob(p string) glob {
	var g glob
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '*':
			if n := len(g.toks); n > 0 && g.toks[n-1].kind == '*' {
				continue // ** is *
			}
			g.toks = append(g.toks, globTok{kind: '*'})
			continue
		case c == '?':
			g.toks = append(g.toks, globTok{kind: '?'})
		case c == '\\' && i+1 < len(p):
			i++
			g.toks = append(g.toks, globTok{kind: 'l', b: p[i]})
		case c == '[':
			var set [4]uint64
			i++
			not := i < len(p) && p[i] == '^'
			if not {
				i++
			}
			for ; i < len(p) && p[i] != ']'; i++ {
				switch {
				case p[i] == '\\' && i+1 < len(p):
					i++
					set[p[i]>>6] |= 1 << (p[i] & 63)
				case i+2 < len(p) && p[i+1] == '-':
					lo, hi := p[i], p[i+2]
					if lo > hi {
						lo, hi = hi, lo
					}
					for x := int(lo); x <= int(hi); x++ {
						set[x>>6] |= 1 << (x & 63)
					}
					i += 2
				default:
					set[p[i]>>6] |= 1 << (p[i] & 63)
				}
			}
			if not {
				for w := range set {
					set[w] = ^set[w]
				}
			}
			g.toks = append(g.toks, globTok{kind: '[', set: &set})
		default:
			g.toks = append(g.toks, globTok{kind: 'l', b: c})
		}
		g.fixed++
	}
	return g
}

func (t *globTok) takes(c byte) bool {
	switch t.kind {
	case '?':
		return true
	case 'l':
		return t.b == c
	}
	return t.set[c>>6]&(1<<(c&63)) != 0
}

// match reports whether name matches; row is scratch space (may be nil)
// and is returned for the next call.
func (g *glob) match(name string, row []bool) (bool, []bool) {
	if g.fixed > len(name) {
		return false, row
	}
	// row[j]: the tokens so far match name[:j].
	row = append(row[:0], make([]bool, len(name)+1)...)
	row[0] = true
	for ti := range g.toks {
		t := &g.toks[ti]
		if t.kind == '*' {
			for j := 1; j <= len(name); j++ {
				row[j] = row[j] || row[j-1]
			}
			continue
		}
		any := false
		for j := len(name); j >= 1; j-- {
			row[j] = row[j-1] && t.takes(name[j-1])
			any = any || row[j]
		}
		row[0] = false
		if !any {
			return false, row
		}
	}
	return row[len(name)], row
}
