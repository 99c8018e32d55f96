// Package rdb reads and writes what a Redis DUMP payload of a module's value
// holds: the value's type byte and module type id, the typed fields the
// module saved (unsigned integers, doubles, strings, LZF-compressed or not),
// and the payload's footer (the RDB version and a CRC-64). It is the part of
// Redis's RDB format that RedisBloom's MBbloom-- and MBbloomCF values use, no
// more.
//
// Every length read from a payload is checked against what is left of it, or
// against the caller's limit for a compressed string, before anything is
// allocated: a hostile payload gets an error, never an absurd allocation.
package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"strconv"
)

// ErrPayload is the error of a payload that is damaged, truncated or not of
// the shape asked for. ErrChecksum is the error of a footer whose version or
// CRC is wrong; its text is Redis's own ("DUMP payload version or checksum
// are wrong"), which RedisBloom's tests and clients match on.
var (
	ErrPayload  = errors.New("rdb: bad payload")
	ErrChecksum = errors.New("DUMP payload version or checksum are wrong")
)

// Version is the RDB version Write puts in a footer: Redis 7.0's (10), so
// that Redis 7.0 and every later Redis RESTOREs it. MaxVersion is the newest
// a footer read may carry (Redis 7.4's 12).
const (
	Version    = 10
	MaxVersion = 12
)

// TypeModule2 is the type byte of a module value (RDB_TYPE_MODULE_2).
const TypeModule2 = 7

// Field opcodes of a module value (RDB_MODULE_OPCODE_*).
const (
	opEOF    = 0
	opUint   = 2
	opDouble = 4
	opString = 5
)

// crcTable is CRC-64/Jones, reflected, as Redis computes it (crc64.c).
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// CRC64 is Redis's CRC-64 of p (initial value 0, no final xor); Go's crc64
// starts from and ends with the complement, hence the two.
func CRC64(p []byte) uint64 { return ^crc64.Update(^uint64(0), crcTable, p) }

// Open checks a DUMP payload's footer (its RDB version and CRC-64) and
// returns the serialized value before it.
func Open(payload []byte) ([]byte, error) {
	if len(payload) < 10 {
		return nil, ErrChecksum
	}
	body := payload[:len(payload)-10]
	ver := binary.LittleEndian.Uint16(payload[len(payload)-10:])
	sum := binary.LittleEndian.Uint64(payload[len(payload)-8:])
	if ver > MaxVersion || CRC64(payload[:len(payload)-8]) != sum {
		return nil, ErrChecksum
	}
	return body, nil
}

// Seal appends a footer (Version and the CRC-64) to a serialized value.
func Seal(body []byte) []byte {
	out := binary.LittleEndian.AppendUint16(body, Version)
	return binary.LittleEndian.AppendUint64(out, CRC64(out))
}

const moduleIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleID is the 64-bit id of a module type of a 9-character name at
// encoding version encver, as Redis stores it (6 bits a character, then 10
// bits of version).
func ModuleID(name string, encver int) (uint64, error) {
	if len(name) != 9 || encver < 0 || encver > 1023 {
		return 0, fmt.Errorf("%w: module type %q version %d", ErrPayload, name, encver)
	}
	var id uint64
	for i := 0; i < len(name); i++ {
		c := indexByte(moduleIDChars, name[i])
		if c < 0 {
			return 0, fmt.Errorf("%w: module type %q", ErrPayload, name)
		}
		id = id<<6 | uint64(c)
	}
	return id<<10 | uint64(encver), nil
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// Reader reads the fields of a serialized module value in order.
type Reader struct {
	p   []byte
	off int
}

// NewReader reads body (what Open returned).
func NewReader(body []byte) *Reader { return &Reader{p: body} }

func (r *Reader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrPayload, fmt.Sprintf(format, args...), r.off)
}

func (r *Reader) byte() (byte, error) {
	if r.off >= len(r.p) {
		return 0, r.errorf("truncated")
	}
	b := r.p[r.off]
	r.off++
	return b, nil
}

func (r *Reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.p)-r.off) {
		return nil, r.errorf("%d bytes wanted, %d left", n, len(r.p)-r.off)
	}
	b := r.p[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// length reads an RDB length; encoded reports a special encoding (the
// length is then its kind: 0-2 an integer of 1, 2 or 4 bytes, 3 LZF).
func (r *Reader) length() (n uint64, encoded bool, err error) {
	b, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		b2, err := r.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3f)<<8 | uint64(b2), false, nil
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		p, err := r.bytes(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := r.bytes(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, r.errorf("length prefix %#x", b)
}

func (r *Reader) plainLength() (uint64, error) {
	n, enc, err := r.length()
	if err == nil && enc {
		err = r.errorf("an encoded value where a length belongs")
	}
	return n, err
}

// ModuleHeader reads a module value's type byte and id, and returns the id.
func (r *Reader) ModuleHeader() (uint64, error) {
	t, err := r.byte()
	if err != nil {
		return 0, err
	}
	if t != TypeModule2 {
		return 0, r.errorf("value type %d, want a module value (%d)", t, TypeModule2)
	}
	return r.plainLength()
}

func (r *Reader) opcode(want uint64, what string) error {
	op, err := r.plainLength()
	if err != nil {
		return err
	}
	if op != want {
		return r.errorf("field opcode %d, want %s (%d)", op, what, want)
	}
	return nil
}

// Uint reads an unsigned field.
func (r *Reader) Uint() (uint64, error) {
	if err := r.opcode(opUint, "an unsigned integer"); err != nil {
		return 0, err
	}
	return r.plainLength()
}

// Double reads a double field.
func (r *Reader) Double() (float64, error) {
	if err := r.opcode(opDouble, "a double"); err != nil {
		return 0, err
	}
	p, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
}

// String reads a string field of at most limit bytes (after decompression):
// the caller knows from the fields before how long it must be.
func (r *Reader) String(limit uint64) ([]byte, error) {
	if err := r.opcode(opString, "a string"); err != nil {
		return nil, err
	}
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > limit {
			return nil, r.errorf("string of %d bytes, at most %d expected", n, limit)
		}
		p, err := r.bytes(n)
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), p...), nil
	}
	switch n {
	case 0, 1, 2:
		p, err := r.bytes(1 << n)
		if err != nil {
			return nil, err
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(p[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		s := strconv.AppendInt(nil, v, 10)
		if uint64(len(s)) > limit {
			return nil, r.errorf("string of %d bytes, at most %d expected", len(s), limit)
		}
		return s, nil
	case 3:
		clen, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		ulen, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		if ulen > limit {
			return nil, r.errorf("compressed string of %d bytes, at most %d expected", ulen, limit)
		}
		// LZF expands at most 264 bytes from a 3-byte reference: a claim
		// beyond that is refused before the output is allocated.
		if clen > uint64(len(r.p)-r.off) || ulen > clen*88+64 {
			return nil, r.errorf("compressed string of %d bytes from %d", ulen, clen)
		}
		c, err := r.bytes(clen)
		if err != nil {
			return nil, err
		}
		out, err := lzfDecompress(c, int(ulen))
		if err != nil {
			return nil, r.errorf("%v", err)
		}
		return out, nil
	}
	return nil, r.errorf("string encoding %d", n)
}

// EOF reads the end-of-value opcode, and checks nothing follows it.
func (r *Reader) EOF() error {
	if err := r.opcode(opEOF, "the end of the value"); err != nil {
		return err
	}
	if r.off != len(r.p) {
		return r.errorf("%d bytes after the end of the value", len(r.p)-r.off)
	}
	return nil
}

// Writer serializes a module value; Bytes returns it, ready for Seal.
type Writer struct{ p []byte }

// NewWriter starts a module value of the given type id.
func NewWriter(moduleID uint64) *Writer {
	w := &Writer{p: []byte{TypeModule2}}
	w.length(moduleID)
	return w
}

func (w *Writer) length(n uint64) {
	switch {
	case n < 1<<6:
		w.p = append(w.p, byte(n))
	case n < 1<<14:
		w.p = append(w.p, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		w.p = binary.BigEndian.AppendUint32(append(w.p, 0x80), uint32(n))
	default:
		w.p = binary.BigEndian.AppendUint64(append(w.p, 0x81), n)
	}
}

// Uint writes an unsigned field.
func (w *Writer) Uint(v uint64) { w.length(opUint); w.length(v) }

// Double writes a double field.
func (w *Writer) Double(v float64) {
	w.length(opDouble)
	w.p = binary.LittleEndian.AppendUint64(w.p, math.Float64bits(v))
}

// String writes a string field, uncompressed (every Redis reads it).
func (w *Writer) String(s []byte) {
	w.length(opString)
	w.length(uint64(len(s)))
	w.p = append(w.p, s...)
}

// Bytes ends the value (its EOF opcode) and returns it.
func (w *Writer) Bytes() []byte {
	w.length(opEOF)
	return w.p
}

// ErrOtherType is the error of a payload that holds a value of another
// type than the one asked for (or an encoding newer than maxEnc).
var ErrOtherType = errors.New("rdb: value of another type")

// OpenModule checks a DUMP payload's footer and that it holds a module
// value of type name at an encoding of at most maxEnc, and returns a
// Reader of its fields and the encoding. A wrong footer is ErrChecksum;
// another type or a newer encoding ErrOtherType.
func OpenModule(payload []byte, name string, maxEnc int) (*Reader, int, error) {
	body, err := Open(payload)
	if err != nil {
		return nil, 0, err
	}
	r := NewReader(body)
	id, err := r.ModuleHeader()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrOtherType, err)
	}
	enc := int(id & 1023)
	if want, err := ModuleID(name, 0); err != nil || id&^1023 != want || enc > maxEnc {
		return nil, 0, fmt.Errorf("%w: module type id %#x, want %s up to encoding %d", ErrOtherType, id, name, maxEnc)
	}
	return r, enc, nil
}
