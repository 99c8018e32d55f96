package benchmarks

import (
	"runtime"
	"testing"
)

// TestPrefault checks what BenchmarkDuel's op=add rests on: Prefault keeps
// a filter's keys and changes no answer, and on Linux a prefaulted fresh
// filter (8 MB, larger than what the runtime keeps around) takes almost no
// page faults while keys are added to it (one not prefaulted takes one
// per page when its memory is fresh from the kernel, none when the runtime
// reuses memory it zeroed). Not under -race, whose shadow memory faults
// too.
func TestPrefault(t *testing.T) {
	var names []string
	for _, v := range Variants() {
		if v.Static() {
			continue
		}
		probe, err := v.New(1000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := probe.(Prefaulter); !ok {
			continue
		}
		names = append(names, v.Name)
		t.Run(v.Name, func(t *testing.T) {
			keys := NewKeySet(Key16, SetPositive, 0, testN)
			misses := NewKeySet(Key16, SetNegative, 0, testN)
			f, err := v.New(testN, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			for i := range testN / 2 {
				f.Add(keys.At(i))
			}
			before := make([]bool, testN)
			for i := range testN {
				before[i] = f.Contains(misses.At(i))
			}
			f.(Prefaulter).Prefault()
			for i := range testN / 2 {
				if !f.Contains(keys.At(i)) {
					t.Fatalf("key %d lost after Prefault", i)
				}
			}
			for i := range testN {
				if f.Contains(misses.At(i)) != before[i] {
					t.Fatalf("absent key %d answers differently after Prefault", i)
				}
			}
			if runtime.GOOS != "linux" || raceEnabled {
				return
			}
			const n = 1 << 25 // about 40 MB at 1%: more than the test has freed, so fresh pages
			add := NewKeySet(Key16, SetPositive, 0, 200000)
			for _, pre := range []bool{false, true} {
				g, err := v.New(n, 0.01)
				if err != nil {
					t.Fatal(err)
				}
				if pre {
					g.(Prefaulter).Prefault()
				}
				f0 := minorFaults()
				for i := range add.Len() {
					g.Add(add.At(i))
				}
				faults := minorFaults() - f0
				pages := int64(g.Bytes() / 4096)
				t.Logf("prefault=%v: %d faults adding %d keys to %d pages", pre, faults, add.Len(), pages)
				if pre && faults > pages/100 {
					t.Errorf("prefaulted: %d faults adding to %d pages", faults, pages)
				}
				runtime.KeepAlive(g)
			}
		})
	}
	if len(names) == 0 {
		t.Fatal("no variant is a Prefaulter")
	}
}
