package rdb

import "errors"

var errLZF = errors.New("damaged LZF data")

// lzfDecompress expands LZF data (the compression Redis applies to RDB
// strings over 20 bytes) into exactly n bytes, or fails: every literal run
// and back reference is checked against both buffers.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			run := ctrl + 1
			if run > len(in)-i || run > n-len(out) {
				return nil, errLZF
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, errLZF
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errLZF
		}
		back := (ctrl&0x1f)<<8 | int(in[i])
		i++
		ref := len(out) - back - 1
		length += 2
		if ref < 0 || length > n-len(out) {
			return nil, errLZF
		}
		for j := 0; j < length; j++ { // may overlap what it writes
			out = append(out, out[ref+j])
		}
	}
	if len(out) != n {
		return nil, errLZF
	}
	return out, nil
}
