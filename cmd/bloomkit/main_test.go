package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bloomkitBinary builds the command once per test run: the tests run the
// real binary, as a user would.
func bloomkitBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bloomkit")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

func TestDemo(t *testing.T) {
	bin := bloomkitBinary(t)
	dir := t.TempDir()
	out, errOut, code := runBinary(t, bin, "demo", "-n", "200000", "-p", "0.01", "-trials", "400000", "-dir", dir)
	require.Zero(t, code, "stderr: %s", errOut)
	require.Contains(t, out, "false negatives  0 of 200000")
	require.Contains(t, out, "verify checksum")
	m := regexp.MustCompile(`false positives  (\d+) of 400000`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	fp, _ := strconv.Atoi(m[1])
	// Formula: 4000 expected, sd 63; the demo's keys are fixed, so this is
	// deterministic, and 1.1 x target is 6 sd away.
	require.Less(t, fp, 4400, out)
	require.Greater(t, fp, 3600, out)
	_, err := os.Stat(filepath.Join(dir, "demo.bloom"))
	require.NoError(t, err, "-dir keeps the file")
}

func TestErrorsExitTwoWithOneLine(t *testing.T) {
	bin := bloomkitBinary(t)
	for _, args := range [][]string{
		{"demo", "-p", "2"},
		{"demo", "-p", "NaN"},
		{"demo", "-n", "0"},
		{"demo", "-n", "abc"},
		{"demo", "extra"},
		{"nosuchcommand"},
		{},
	} {
		_, errOut, code := runBinary(t, bin, args...)
		require.Equal(t, 2, code, "%q: %s", args, errOut)
		require.NotEmpty(t, errOut, "%q", args)
		require.NotContains(t, errOut, "goroutine", "%q: no stack trace", args)
		require.NotContains(t, errOut, "panic", "%q", args)
	}
	_, errOut, _ := runBinary(t, bin, "demo", "-p", "2")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %q", errOut)
	out, _, code := runBinary(t, bin, "help")
	require.Zero(t, code)
	require.Contains(t, out, "demo")
	_, errOut, code = runBinary(t, bin, "demo", "-h")
	require.Zero(t, code)
	require.Contains(t, errOut, "-trials")
}
