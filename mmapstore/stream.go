package mmapstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/hugepage"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

const chunkWords = 8192 // 64 KiB of payload per read or write

// chunkBytes returns words as little-endian bytes: in place on little-endian
// machines, encoded into buf otherwise.
func chunkBytes(words []uint64, buf []byte) []byte {
	if len(words) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	}
	for i, w := range words {
		binary.LittleEndian.PutUint64(buf[i*8:], w)
	}
	return buf[:len(words)*8]
}

func hashWords(parts [][]uint64, buf []byte) uint64 {
	h := xxh3.New()
	for _, words := range parts {
		for off := 0; off < len(words); off += chunkWords {
			h.Write(chunkBytes(words[off:min(off+chunkWords, len(words))], buf))
		}
	}
	return h.Sum64()
}

// WriteStream writes h and the payload as a complete filter file, ready to be
// mapped by Open or read by ReadStream: both header slots hold the same
// header (generation 1) with the payload checksum current. The payload is the
// concatenation of parts (one slice, or one per stage of a scalable filter).
// The payload bytes are those a mapped file of the same filter holds; the
// header slots differ from a file's only in generation and flags. The words
// must not change while WriteStream runs; if they do, the result is
// ErrModified. h.Scheme is the filter's hashing scheme (0 is written as 1).
func WriteStream(w io.Writer, h Header, parts ...[]uint64) (int64, error) {
	h.Version = CurrentVersion
	if h.Scheme == 0 {
		h.Scheme = hashing.Scheme1
	}
	h.Generation = 1
	h.PayloadLen = 0
	for _, p := range parts {
		h.PayloadLen += uint64(len(p)) * 8
	}
	buf := make([]byte, HeaderSize+chunkWords*8)
	h.PayloadSum = hashWords(parts, buf[HeaderSize:])
	h.Flags |= FlagChecksumCurrent
	if err := h.Validate(); err != nil {
		return 0, err
	}
	encodeSlot(&h, buf[:SlotSize])
	copy(buf[SlotSize:HeaderSize], buf[:SlotSize])
	total, err := writeAll(w, buf[:HeaderSize], 0)
	if err != nil {
		return total, err
	}
	again := xxh3.New()
	for _, words := range parts {
		for off := 0; off < len(words); off += chunkWords {
			b := chunkBytes(words[off:min(off+chunkWords, len(words))], buf[HeaderSize:])
			again.Write(b)
			if total, err = writeAll(w, b, total); err != nil {
				return total, err
			}
		}
	}
	if again.Sum64() != h.PayloadSum {
		return total, ErrModified
	}
	return total, nil
}

func writeAll(w io.Writer, b []byte, total int64) (int64, error) {
	n, err := w.Write(b)
	total += int64(n)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return total, fmt.Errorf("mmapstore: write: %w", err)
	}
	return total, nil
}

// ReadStream reads one filter file from r: the header, which must be of
// variant want, then the payload. The payload checksum is verified when the
// header marks it current (every stream WriteStream makes); a copy of a file
// taken while it was open for writing has no current checksum and is
// accepted unverified, as Open would accept the file itself. Memory grows with the bytes actually read, so a header that claims
// a huge payload on a short stream costs nothing; a short stream is
// ErrTruncated and io.ErrUnexpectedEOF. It reads nothing past the payload.
func ReadStream(r io.Reader, want Variant) (Header, []uint64, error) {
	var head [HeaderSize]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Header{}, nil, fmt.Errorf("mmapstore: read header: %w", err)
	}
	h, err := DecodeHeader(head[:n])
	if err != nil {
		if errors.Is(err, ErrTruncated) {
			err = fmt.Errorf("%w (%w)", err, io.ErrUnexpectedEOF)
		}
		return Header{}, nil, err
	}
	if h.Variant != want {
		return Header{}, nil, fmt.Errorf("%w: stream holds a %s filter, want %s", ErrVariant, h.Variant, want)
	}
	if err := sizing.CheckMemory(h.PayloadLen); err != nil {
		return Header{}, nil, fmt.Errorf("mmapstore: stream: %w", err)
	}
	nwords := h.PayloadLen / 8
	words := make([]uint64, 0, min(nwords, 1<<20))
	buf := make([]byte, chunkWords*8)
	sum := xxh3.New()
	for uint64(len(words)) < nwords {
		chunk := buf[:min(uint64(len(buf)), (nwords-uint64(len(words)))*8)]
		if _, err := io.ReadFull(r, chunk); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return Header{}, nil, fmt.Errorf("%w: payload ends before %d bytes (%w)", ErrTruncated, h.PayloadLen, io.ErrUnexpectedEOF)
			}
			return Header{}, nil, fmt.Errorf("mmapstore: read payload: %w", err)
		}
		sum.Write(chunk)
		if len(words)+len(chunk)/8 > cap(words) {
			// Grow to a fresh array, advised for huge pages while it is
			// still untouched, rather than by append.
			grown := hugepage.Words(min(nwords, 2*uint64(cap(words))))
			words = grown[:copy(grown, words)]
		}
		for i := 0; i < len(chunk); i += 8 {
			words = append(words, binary.LittleEndian.Uint64(chunk[i:]))
		}
	}
	if h.ChecksumCurrent() && sum.Sum64() != h.PayloadSum {
		return Header{}, nil, fmt.Errorf("%w: stream: recorded %#016x, computed %#016x", ErrPayloadChecksum, h.PayloadSum, sum.Sum64())
	}
	return h, words, nil
}

// WriteFileAtomic writes a file through write and publishes it at path the
// way Publish does: a temporary file in the same folder, synced, renamed over
// path, folder synced. On any error path is untouched. A path that a
// writer holds open is not replaced: WriteFileAtomic waits for the writer
// to close it (SetReplaceWait) and then fails with ErrLocked.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, base, path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("mmapstore: fsync %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mmapstore: close %s: %w", f.Name(), err)
	}
	return renameDurably(f.Name(), path)
}
