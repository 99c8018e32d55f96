package standard

import (
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// TestSpecExample checks the worked example of docs/file-format.md (§11, a
// complete file) against what WriteTo produces, so the specification cannot
// drift from the code: every hex dump line of the example must be the bytes
// at its offset, slot 1 must be a copy of slot 0 and everything the dump
// abbreviates must be zero.
func TestSpecExample(t *testing.T) {
	spec, err := os.ReadFile("../docs/file-format.md")
	require.NoError(t, err)
	text := string(spec)
	start := strings.Index(text, "## 11.")
	require.NotEqual(t, -1, start, "section 11 of docs/file-format.md")
	text = text[start:]
	text = text[:strings.Index(text[3:], "\n## ")+3]

	f, err := NewWithSize(128, 3, WithScheme(hashing.Scheme1))
	require.NoError(t, err)
	f.AddString("bloomkit")
	require.EqualValues(t, 29, f.Capacity())
	require.Equal(t, 0.11998704553539039, f.TargetFPR())
	require.Contains(t, text, "0.11998704553539039")
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	file := buf.Bytes()
	require.Contains(t, text, "("+strconv.Itoa(len(file))+" bytes)")

	line := regexp.MustCompile(`(?m)^([0-9a-f]{4})  ((?:[0-9a-f]{2} )*[0-9a-f]{2})  `)
	described := make([]bool, len(file))
	matches := line.FindAllStringSubmatch(text, -1)
	require.GreaterOrEqual(t, len(matches), 9, "hex dump lines in the example")
	for _, m := range matches {
		off, err := strconv.ParseUint(m[1], 16, 32)
		require.NoError(t, err)
		want, err := hex.DecodeString(strings.ReplaceAll(m[2], " ", ""))
		require.NoError(t, err)
		require.LessOrEqual(t, int(off)+len(want), len(file), "line %s", m[1])
		require.Equal(t, want, file[off:int(off)+len(want)], "bytes at %s", m[1])
		for i := range want {
			described[int(off)+i] = true
		}
	}
	require.Equal(t, file[:4096], file[4096:8192], "slot 1 is a copy of slot 0")
	for i := 0; i < 4096; i++ {
		if !described[i] {
			require.Zero(t, file[i], "byte %#x, abbreviated as zero", i)
		}
	}
}
