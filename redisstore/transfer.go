package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// transferBytes bounds the segment bytes of one pipelined round trip of
// Push and Pull.
const transferBytes = 8 << 20

// PushOption changes how Push publishes a file.
type PushOption func(*pushConfig)

type pushConfig struct {
	replace  bool
	segBytes uint64
}

// Replace lets Push replace an existing filter of the same name. The new
// filter is written under a new generation, the header is switched to it in
// one step, and the old generation is deleted: a client attached to the old
// filter finds its segments gone on its next call, rereads the header and
// goes on with the new filter. Adds made to the old filter after the
// switch are lost, as they are in a file replaced by a rebuild.
func Replace() PushOption { return func(c *pushConfig) { c.replace = true } }

// PushSegmentBytes sets the segment size of the pushed filter (default
// DefaultSegmentBytes).
func PushSegmentBytes(n uint64) PushOption { return func(c *pushConfig) { c.segBytes = n } }

// Push uploads the partitioned filter file at path to Redis under name,
// byte for byte (see the layout in docs/redis.md), and publishes it in one
// step: the header that makes it visible is written last. The file's
// payload checksum is verified first; a file open for writing (checksum not
// current) is refused with mmapstore.ErrChecksumStale. A name that already
// holds a filter is ErrExists unless Replace is given; a filter replaced by
// someone else during the push is ErrConflict.
func Push(ctx context.Context, c redis.UniversalClient, name, path string, opts ...PushOption) (err error) {
	if err := checkName(name); err != nil {
		return err
	}
	cfg := pushConfig{segBytes: DefaultSegmentBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkSegBytes(cfg.segBytes); err != nil {
		return err
	}
	file, err := mmapstore.OpenReadOnly(path, mmapstore.Partitioned)
	if err != nil {
		return err
	}
	defer file.Close(0)
	if err := file.Verify(); err != nil {
		return err
	}
	fh := file.Header()
	payload := file.Payload()
	if uint64(len(payload)) != fh.PayloadLen {
		return fmt.Errorf("%w: %s: payload %d bytes, header says %d", mmapstore.ErrCorrupt, path, len(payload), fh.PayloadLen)
	}

	scheme := fh.Scheme
	if !scheme.Valid() {
		return fmt.Errorf("%w: %s: hash scheme %d", mmapstore.ErrScheme, path, fh.Scheme)
	}
	old, oldGen, err := pushedOver(ctx, c, name, cfg.replace)
	if err != nil {
		return err
	}
	// The file's scheme is recorded, so the filter answers in Redis as the
	// file does.
	h := header{
		layout: LayoutVersion, scheme: scheme, seed: fh.Seed,
		stages:  []stage{{m: fh.M, k: fh.K, capacity: fh.Capacity, targetP: fh.TargetFPR}},
		targetP: fh.TargetFPR, segBytes: cfg.segBytes, generation: old.generation + 1, baseCount: fh.Count,
	}
	if err := checkSegments(&h); err != nil {
		return err
	}
	st := newState(name, h)
	defer func() {
		if err != nil { // best effort: do not leave a half-written generation
			_ = unlinkGeneration(context.WithoutCancel(ctx), c, name, h)
		}
	}()
	if err := uploadPayload(ctx, c, st, payload); err != nil {
		return err
	}
	args := append([]any{fieldGeneration, oldGen}, h.fields()...)
	ok, err := replaceHeaderScript.Run(ctx, c, []string{headerKey(name)}, args...).Int()
	if err != nil {
		return redisErr("publish header", name, err)
	}
	if ok == 0 {
		return fmt.Errorf("%w: %q was created or replaced during the push", ErrConflict, name)
	}
	if len(old.stages) != 0 {
		if err := unlinkGeneration(ctx, c, name, old); err != nil {
			return fmt.Errorf("published %q, but removing the old generation failed: %w", name, err)
		}
	}
	return nil
}

// Pull downloads the filter named name into a partitioned filter file at
// path, published atomically (a temporary file in the same folder, synced,
// renamed over path). The file's payload is the filter's segments byte for
// byte, and its count is Count's. Clients may keep adding while Pull runs:
// every key added before Pull started is in the file.
func Pull(ctx context.Context, c redis.UniversalClient, name, path string) error {
	f, err := Attach(ctx, c, name)
	if err != nil {
		return err
	}
	return f.retry(ctx, func(st *state, _ bool) (fault, string, error) {
		if st.h.growing() {
			return faultNone, "", fmt.Errorf("%w: %q grows (%d stages); a partitioned file holds one", ErrVariant, name, len(st.stages))
		}
		seg, err := pull(ctx, f, st, path)
		if isMissingErr(err) {
			return faultMissing, seg, nil
		}
		return faultNone, "", err
	})
}

// pull writes st's filter to path; on ErrMissing it also returns the
// missing segment.
func pull(ctx context.Context, f *Filter, st *state, path string) (missing string, err error) {
	h := st.h
	file, err := mmapstore.CreateTemp(path, h.fileHeader())
	if err != nil {
		return "", err
	}
	published := false
	defer func() {
		if !published {
			file.Close(0) // removes the temporary file
		}
	}()
	if got := file.Header().Scheme; got != h.scheme {
		// A file that says another scheme would answer wrongly.
		return "", fmt.Errorf("%w: %q hashes with scheme %d, and this build writes files of scheme %d only", mmapstore.ErrScheme, f.name, h.scheme, got)
	}
	payload := file.Payload()
	ss := &st.stages[0]
	for lo := 0; lo < len(ss.seg); {
		pipe := f.c.Pipeline()
		var cmds []*redis.StringCmd
		size := uint64(0)
		hi := lo
		for ; hi < len(ss.seg) && (hi == lo || size+h.segLen(0, uint64(hi)) <= transferBytes); hi++ {
			cmds = append(cmds, pipe.Get(ctx, ss.seg[hi]))
			size += h.segLen(0, uint64(hi))
		}
		if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
			return "", redisErr("pull", f.name, err)
		}
		for j, cmd := range cmds {
			i := uint64(lo + j)
			b, err := cmd.Bytes()
			if err != nil && !isNil(err) {
				return "", redisErr("pull", f.name, err)
			}
			if uint64(len(b)) != h.segLen(0, i) {
				return ss.seg[i], fmt.Errorf("%w: %s is %d bytes, want %d", ErrMissing, ss.seg[i], len(b), h.segLen(0, i))
			}
			copy(payload[i*h.segBytes:], b)
		}
		lo = hi
	}
	count, err := f.Added(ctx)
	if err != nil {
		return "", err
	}
	published = true
	return "", file.Publish(count)
}

// pushedOver returns the header a push to name replaces (zero when there is
// none, or one too broken to name its segments) and its generation field
// as stored ("" when there is none): ErrExists when name holds a filter
// and replace is false.
func pushedOver(ctx context.Context, c redis.UniversalClient, name string, replace bool) (header, string, error) {
	old, err := readHeader(ctx, c, name)
	switch {
	case err == nil:
		if !replace {
			return header{}, "", fmt.Errorf("%w: %q (push with Replace to replace it)", ErrExists, name)
		}
		return old, fmtU(old.generation), nil
	case isNotFound(err):
		return header{}, "", nil
	case replace && isBadHeader(err):
		// A broken header is replaced; its segments cannot be named.
		old = header{}
		oldGen := ""
		if g, rerr := c.HGet(ctx, headerKey(name), fieldGeneration).Result(); rerr == nil {
			oldGen = g
			old.generation, _ = strconv.ParseUint(g, 10, 64)
		}
		return old, oldGen, nil
	}
	return header{}, "", err
}

// uploadPayload writes a fixed filter's payload into the segments of st
// (and clears their counters), about transferBytes per round trip.
func uploadPayload(ctx context.Context, c redis.UniversalClient, st *state, payload []byte) error {
	h, ss := &st.h, &st.stages[0]
	for lo := 0; lo < len(ss.seg); {
		pipe := c.Pipeline()
		size := uint64(0)
		hi := lo
		for ; hi < len(ss.seg) && (hi == lo || size+h.segLen(0, uint64(hi)) <= transferBytes); hi++ {
			start := uint64(hi) * h.segBytes
			n := h.segLen(0, uint64(hi))
			pipe.Set(ctx, ss.seg[hi], payload[start:start+n], 0)
			pipe.Del(ctx, ss.cnt[hi])
			size += n
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return redisErr("push", ss.seg[lo], err)
		}
		lo = hi
	}
	return nil
}
