package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "the exposition does not parse:\n%s", body)
	return fams
}

// value is the value of family name's sample whose key label is key ("" for
// a family without labels).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name, key string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no family %s", name)
	for _, m := range f.GetMetric() {
		k := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "key" {
				k = l.GetValue()
			}
		}
		if k != key {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		}
	}
	t.Fatalf("no sample of %s for key %q", name, key)
	return 0
}

// TestScrape: a scrape shows every served filter, one sample a family a
// key, with the snapshot's figures, beside the server's, the Go runtime's
// and the process's; each scrape takes a new snapshot.
func TestScrape(t *testing.T) {
	var scrapes atomic.Int64
	swap := time.Unix(1_800_000_000, 500_000_000)
	snap := func() Snapshot {
		n := scrapes.Add(1)
		return Snapshot{
			Server: Server{Uptime: 90 * time.Second, ConnectedClients: 3, CommandsProcessed: uint64(1000 * n),
				RejectedAuth: 7, Keys: 3, OpenKeys: 2},
			Filters: []Filter{
				{Key: "whitelist", Variant: "partitioned", Items: 100000, Capacity: 100000, Bits: 1 << 21, Bytes: 1 << 18,
					FillRatio: 0.45, EstimatedFPR: 9e-5, TargetFPR: 1e-4, Lookups: 123456, LastSwap: swap, Swaps: 3},
				{Key: "crawl", Variant: "growing", Items: 5, Capacity: 100, Bits: 1024, Bytes: 128, TargetFPR: 0.01,
					Adds: 5, WALBytes: 80, FsyncLag: 250 * time.Millisecond},
				{Key: `odd "key"\n`, Variant: "standard"},
			},
		}
	}
	srv := httptest.NewServer(Handler(snap))
	defer srv.Close()

	fams := scrape(t, srv.URL+"/metrics")
	require.Equal(t, 100000.0, value(t, fams, "bloomkit_filter_items", "whitelist"))
	require.Equal(t, 5.0, value(t, fams, "bloomkit_filter_items", "crawl"))
	require.Equal(t, 0.45, value(t, fams, "bloomkit_filter_fill_ratio", "whitelist"))
	require.Equal(t, 9e-5, value(t, fams, "bloomkit_filter_estimated_false_positive_rate", "whitelist"))
	require.Equal(t, 1e-4, value(t, fams, "bloomkit_filter_target_false_positive_rate", "whitelist"))
	require.Equal(t, 123456.0, value(t, fams, "bloomkit_filter_lookups_total", "whitelist"))
	require.Equal(t, 5.0, value(t, fams, "bloomkit_filter_adds_total", "crawl"))
	require.Equal(t, 1_800_000_000.5, value(t, fams, "bloomkit_filter_last_swap_timestamp_seconds", "whitelist"))
	require.Equal(t, 0.0, value(t, fams, "bloomkit_filter_last_swap_timestamp_seconds", "crawl"))
	require.Equal(t, 80.0, value(t, fams, "bloomkit_filter_wal_bytes", "crawl"))
	require.Equal(t, 0.25, value(t, fams, "bloomkit_filter_wal_fsync_lag_seconds", "crawl"))
	require.Equal(t, 0.0, value(t, fams, "bloomkit_filter_items", `odd "key"\n`), "a key with quotes and a newline is escaped, not lost")
	require.Len(t, fams["bloomkit_filter_items"].GetMetric(), 3)
	require.Equal(t, dto.MetricType_COUNTER, fams["bloomkit_filter_lookups_total"].GetType())
	require.Equal(t, dto.MetricType_GAUGE, fams["bloomkit_filter_fill_ratio"].GetType())
	require.Equal(t, 90.0, value(t, fams, "bloomkit_uptime_seconds", ""))
	require.Equal(t, 7.0, value(t, fams, "bloomkit_rejected_auth_total", ""))
	require.Equal(t, 1000.0, value(t, fams, "bloomkit_commands_processed_total", ""))
	require.Contains(t, fams, "go_goroutines")
	require.Contains(t, fams, "process_resident_memory_bytes")
	for name, f := range fams {
		require.NotEmpty(t, f.GetHelp(), "%s has no HELP", name)
	}

	fams = scrape(t, srv.URL+"/metrics")
	require.Equal(t, 2000.0, value(t, fams, "bloomkit_commands_processed_total", ""), "a scrape takes a new snapshot")

	resp, err := http.Get(srv.URL + "/other")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
