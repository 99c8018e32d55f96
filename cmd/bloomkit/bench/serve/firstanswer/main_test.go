package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/serve"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The test binary is also the server firstanswer starts: with
// FIRSTANSWER_TEST_DIR set it serves that folder on FIRSTANSWER_TEST_ADDR.
func TestMain(m *testing.M) {
	if dir := os.Getenv("FIRSTANSWER_TEST_DIR"); dir != "" {
		os.Exit(serveFor(dir, os.Getenv("FIRSTANSWER_TEST_ADDR")))
	}
	os.Exit(m.Run())
}

func serveFor(dir, addr string) int {
	cfg := serve.Defaults()
	cfg.Dir, cfg.Addr = dir, addr
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.New(cfg)
	if err != nil {
		return 2
	}
	if err := s.Serve(context.Background()); err != nil {
		return 1
	}
	return 0
}

func freeAddr(t *testing.T) string {
	t.Helper()
	cfg := serve.Defaults()
	cfg.Dir, cfg.Addr = t.TempDir(), "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.New(cfg)
	require.NoError(t, err)
	addr := s.Addr().String()
	s.Shutdown()
	return addr
}

// TestCountLog counts the digests of a real digest log.
func TestCountLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.bloom.log")
	l, err := mmapstore.CreateLog(path, mmapstore.LogInfo{Scheme: bloomkit.Scheme2, Seed: 7, Base: 40})
	require.NoError(t, err)
	ds := make([]bloomkit.Digest, 10000)
	for i := range ds {
		ds[i] = bloomkit.Digest{H1: uint64(i)*0x9e3779b97f4a7c15 + 1}
	}
	require.NoError(t, l.Append(ds))
	require.NoError(t, l.Append(ds[:123]))
	require.NoError(t, l.Close())
	var out bytes.Buffer
	require.NoError(t, run([]string{"-count-log", path}, &out))
	require.Equal(t, "digests=10123 base=40\n", out.String())
	require.Error(t, run([]string{"-count-log", filepath.Join(t.TempDir(), "none.log")}, io.Discard))
}
