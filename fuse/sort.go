package fuse

// sortUint64 sorts a (values that look random, such as hashes) with tmp,
// at least as long, as scratch: most-significant-digit radix sort, a byte
// at a time, down to runs short enough for insertion sort. Two passes
// sort a few million random values.
func sortUint64(a, tmp []uint64) { radix(a, tmp[:len(a)], 56) }

const insertionMax = 48

func radix(a, tmp []uint64, shift uint) {
	if len(a) <= insertionMax {
		insertion(a)
		return
	}
	var start [257]int
	for _, v := range a {
		start[(v>>shift)&0xff+1]++
	}
	for i := 1; i <= 256; i++ {
		start[i] += start[i-1]
	}
	next := start
	for _, v := range a {
		b := (v >> shift) & 0xff
		tmp[next[b]] = v
		next[b]++
	}
	copy(a, tmp)
	if shift == 0 {
		return
	}
	for b := 0; b < 256; b++ {
		lo, hi := start[b], start[b+1]
		if hi-lo > 1 {
			radix(a[lo:hi], tmp[lo:hi], shift-8)
		}
	}
}

func insertion(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
}

// dedupe drops repeats from the sorted a, in place.
func dedupe(a []uint64) []uint64 {
	if len(a) == 0 {
		return a
	}
	w := 1
	for _, v := range a[1:] {
		if v != a[w-1] {
			a[w] = v
			w++
		}
	}
	return a[:w]
}

// partition orders ds by their top bits (the shard of each digest, shard
// = d >> (64 - bits)) through tmp, and returns where each shard starts:
// shard i is ds[start[i]:start[i+1]]. bits = 0 is one shard.
func partition(ds, tmp []uint64, bits uint) []uint64 {
	start := make([]uint64, (1<<bits)+1)
	if bits == 0 {
		start[1] = uint64(len(ds))
		return start
	}
	shift := 64 - bits
	for _, d := range ds {
		start[d>>shift+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	next := append([]uint64(nil), start...)
	for _, d := range ds {
		s := d >> shift
		tmp[next[s]] = d
		next[s]++
	}
	copy(ds, tmp[:len(ds)])
	return start
}
