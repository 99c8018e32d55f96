// Package metrics serves `bloomkit serve`'s figures to Prometheus: every
// served filter's own (items, capacity, bits, fill, estimated and target
// rate, lookups and adds, the time of its last swap, its write-ahead log's
// size and fsync lag), the server's (clients, commands, refusals, uptime),
// and the Go runtime's and the process's, in the exposition format that
// Prometheus, Grafana's agents and every scraper read. It is built on the
// Prometheus Go client; the server gives it a function that takes a
// snapshot of its figures, called at each scrape (nothing is counted twice,
// nothing runs between scrapes).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Filter is one served key's figures at a scrape.
type Filter struct {
	Key, Variant string
	Items        uint64  // adds that were new (BF.CARD)
	Capacity     uint64  // the keys it was sized for
	Bits, Bytes  uint64  // its arrays, and the memory or mapping they take
	FillRatio    float64 // the share of bits or slots set
	EstimatedFPR float64 // the rate its fill implies
	TargetFPR    float64 // the rate it was made for
	Lookups      uint64  // lookups of the key since the server started
	Adds         uint64  // adds to the key since the server started
	// LastSwap is when a published file last replaced the served one
	// (zero: never since the server started); Swaps how often.
	LastSwap time.Time
	Swaps    uint64
	// WALBytes is the size of the key's write-ahead log, FsyncLag how long
	// its oldest add not yet fsynced has waited (0: none waits).
	WALBytes uint64
	FsyncLag time.Duration
}

// Server is the server's own figures at a scrape.
type Server struct {
	Uptime              time.Duration
	ConnectedClients    uint64
	CommandsProcessed   uint64
	ConnectionsReceived uint64
	RejectedConnections uint64
	RejectedAuth        uint64
	Keys                uint64 // filter files served
	OpenKeys            uint64 // of them mapped now
}

// Snapshot is what the server reports at a scrape.
type Snapshot struct {
	Server  Server
	Filters []Filter
}

// Handler serves /metrics from snap, called once a scrape.
func Handler(snap func() Snapshot) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&collector{snap: snap},
	)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("bloomkit serve: metrics at /metrics\n"))
	})
	return mux
}

var filterLabels = []string{"key", "variant"}

func filterDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("bloomkit_filter_"+name, help, filterLabels, nil)
}

func serverDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("bloomkit_"+name, help, nil, nil)
}

// One description a family; the order is the exposition's.
var (
	dItems     = filterDesc("items", "Adds that were new (BF.CARD).")
	dCapacity  = filterDesc("capacity", "Keys the filter was sized for.")
	dBits      = filterDesc("bits", "Bits (or slots) of the filter's arrays.")
	dBytes     = filterDesc("bytes", "Memory or mapping the filter's arrays take.")
	dFill      = filterDesc("fill_ratio", "Share of the filter's bits or slots that are set.")
	dEstimated = filterDesc("estimated_false_positive_rate", "False-positive rate the filter's fill implies.")
	dTarget    = filterDesc("target_false_positive_rate", "False-positive rate the filter was made for.")
	dLookups   = filterDesc("lookups_total", "Lookups of the key since the server started.")
	dAdds      = filterDesc("adds_total", "Adds to the key since the server started.")
	dSwaps     = filterDesc("swaps_total", "Published files that replaced the served one since the server started.")
	dLastSwap  = filterDesc("last_swap_timestamp_seconds", "Unix time of the last swap to a published file (0: none since the start).")
	dWAL       = filterDesc("wal_bytes", "Size of the key's write-ahead log.")
	dFsyncLag  = filterDesc("wal_fsync_lag_seconds", "How long the oldest add not yet fsynced has waited (0: none).")

	dUptime      = serverDesc("uptime_seconds", "Seconds since the server started.")
	dClients     = serverDesc("connected_clients", "Clients connected now.")
	dCommands    = serverDesc("commands_processed_total", "Commands the server has answered.")
	dConnections = serverDesc("connections_received_total", "Connections the server has accepted.")
	dRejected    = serverDesc("rejected_connections_total", "Connections refused (the -max-clients limit).")
	dRejectAuth  = serverDesc("rejected_auth_total", "AUTH or HELLO AUTH attempts with a wrong password.")
	dKeys        = serverDesc("keys", "Filter files the server serves.")
	dOpenKeys    = serverDesc("open_keys", "Served filters mapped now.")
)

type collector struct{ snap func() Snapshot }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dItems, dCapacity, dBits, dBytes, dFill, dEstimated, dTarget,
		dLookups, dAdds, dSwaps, dLastSwap, dWAL, dFsyncLag,
		dUptime, dClients, dCommands, dConnections, dRejected, dRejectAuth, dKeys, dOpenKeys} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.snap()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, f := range s.Filters {
		l := []string{f.Key, f.Variant}
		gauge(dItems, float64(f.Items), l...)
		gauge(dCapacity, float64(f.Capacity), l...)
		gauge(dBits, float64(f.Bits), l...)
		gauge(dBytes, float64(f.Bytes), l...)
		gauge(dFill, f.FillRatio, l...)
		gauge(dEstimated, f.EstimatedFPR, l...)
		gauge(dTarget, f.TargetFPR, l...)
		counter(dLookups, float64(f.Lookups), l...)
		counter(dAdds, float64(f.Adds), l...)
		counter(dSwaps, float64(f.Swaps), l...)
		last := 0.0
		if !f.LastSwap.IsZero() {
			last = float64(f.LastSwap.UnixNano()) / 1e9
		}
		gauge(dLastSwap, last, l...)
		gauge(dWAL, float64(f.WALBytes), l...)
		gauge(dFsyncLag, f.FsyncLag.Seconds(), l...)
	}
	v := s.Server
	gauge(dUptime, v.Uptime.Seconds())
	gauge(dClients, float64(v.ConnectedClients))
	counter(dCommands, float64(v.CommandsProcessed))
	counter(dConnections, float64(v.ConnectionsReceived))
	counter(dRejected, float64(v.RejectedConnections))
	counter(dRejectAuth, float64(v.RejectedAuth))
	gauge(dKeys, float64(v.Keys))
	gauge(dOpenKeys, float64(v.OpenKeys))
}
