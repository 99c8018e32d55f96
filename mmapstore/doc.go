// Package mmapstore is the file format and the memory mapping shared by every
// bloomkit variant: a prebuilt filter file of many gigabytes is mapped at
// startup in O(1), shared through the page cache by every process that maps
// it, and replaced atomically by a new build.
//
// The format (docs/file-format.md) is two checksummed header slots followed by
// a page-aligned little-endian payload of 64-bit words. Writers alternate
// slots with a generation number, so a crash while a header is written leaves
// the previous header intact. Readers validate everything that is O(1) to
// check (magic, version, variant, geometry, sizes against the file length,
// header checksum) before they map, and return typed errors (ErrBadMagic,
// ErrVersion, ErrVariant, ErrTruncated, ErrHeaderChecksum, ErrCorrupt; a
// missing file wraps fs.ErrNotExist). Every open is non-blocking and refuses
// anything but a regular file with ErrNotRegular before it could wait on it
// (a FIFO at a filter path would otherwise block forever). A file whose
// holes outweigh both its stored data and 16 GiB (a crafted header over a
// `truncate -s 8T` file) is refused by every open and header read with
// ErrSparse, from st_blocks in O(1), rather than read for hours. The payload
// checksum is O(size) and checked by Verify, by stream readers, and by a
// writable open of a file whose checksum is current: a writer's Close
// checksums the payload anew, so damage present before the open would be
// sealed as good otherwise. Verify reads through a fixed buffer, not the
// mapping, and hashes the holes of a sparse copy without reading them.
//
// Variants use File through their own Create, Open and OpenReadOnly (a
// scalable filter its stages through File.Stages); users mostly meet this
// package through Live, which serves a path through rebuilds, and through
// the errors. A header slot that is damaged while it may have held the
// newest header is read past, as after a torn write, and named by
// HeaderDamage and Verify.
//
// # Serving with Live
//
// Live serves the filter at a path and swaps in each build published
// there; the filter it replaces is closed once no lookup uses it. A lookup
// either takes a Lease (Acquire and Release: an atomic add on a striped
// counter each, about the cost of a lookup in a small filter) or goes
// through a Reader that its goroutine keeps (NewReader, then Value per
// lookup): the Reader holds one lease between lookups and only loads a
// flag that a swap sets, so its lookups cost what direct ones do and
// scale with cores. An idle Reader keeps the last filter it used open (and
// the disk space of that file) until it is used again, made Idle or
// closed.
//
// # Durability
//
// Create allocates the file's blocks before mapping it, so a full disk is an
// error from Create rather than a SIGBUS later; a writable Open allocates the
// holes of a sparse file, and Grow a new stage, the same way. An allocation
// the disk refuses (ENOSPC) is undone: the holes it was filling are punched
// again and a file it was extending is cut back, so the disk is not left
// full.
//
// Sync msyncs the payload, then writes a new header. Close and Publish also
// checksum the payload and mark it current. Publish and WriteFileAtomic build
// in a temporary file in the target's folder, fsync it, rename it over the
// target and fsync the folder; PublishCopy does the same with a copy of a
// finished file, which it verifies first.
//
// # Writers and replaces
//
// A writer (Create, or Open for writing) holds an exclusive flock on its
// file until Close; a second writer is refused with ErrLocked. Every replace
// of an existing file by this package (Publish, PublishCopy, Replace,
// WriteFileAtomic) takes the same lock on the file it replaces before the
// rename, waiting up to SetReplaceWait's wait (DefaultReplaceWait, 5 s) for
// a writer to close it, and otherwise refuses with an *fs.PathError (Op
// "replace") around ErrLocked, leaving both files as they were. A writer that
// follows replaces (Follow: a server that adds its writes again to a file
// moved over its own) is not waited for: the replace renames at once. A writable
// Open checks, once it holds the lock, that the path still names the file
// it locked (a replace may land between its open and its lock) and opens
// again if not. A tool that renames without the lock (mv, rsync) can still
// replace a file under its writer: the writer's Sync and Close then still
// sync and seal the file they hold, and return ErrReplaced naming the
// path, so that no writer reports success for writes that are not at the
// path.
//
// # Modes and owners
//
// A new file gets 0666 less the umask, like any file a program creates. A
// file that replaces another (CreateTemp and Publish, WriteFileAtomic,
// CopyTemp and Replace) takes the target's permission bits and, as far as
// the process may (root may; others may set a group they are in), its owner
// and group, so that a rebuild run as root stays readable by the service
// that owns the filter.
//
// # Caveats
//
//   - Mapping needs a little-endian CPU (ErrPlatform elsewhere); streams work
//     everywhere.
//   - The one unsafe operation: writing a served filter file in place. A
//     file that another process truncates or rewrites under a mapping
//     (`cp new.bloom live.bloom`, `truncate`, `rsync --inplace`) faults
//     every process that maps it, Live included: SIGBUS kills it. Replace
//     filter files by rename, which leaves every mapping intact: Publish for
//     a build, PublishCopy (the CLI's `bloomkit publish SRC DST`) for a
//     finished file, or a plain rsync or `mv` from the same file system.
//     (Linux file leases could let a server copy the file out before the
//     writer proceeds, but only for the file's owner, within the kernel's
//     lease-break time, and at the cost of a second copy of the filter in
//     memory; this package does not try.)
//   - One writer process per file, enforced with flock on Unix only.
//   - A Live Reader left idle after a swap pins the old filter, mapping and
//     disk space both, until its goroutine uses it again or calls Idle or
//     Close; Live cannot take it back.
//   - A build interrupted by a crash leaves its temporary file (".NAME.tmp-*"
//     beside the target) until the next CreateTemp or CopyTemp for the same
//     target, which removes it on Unix (its writer's flock is gone); the
//     target itself is never harmed.
package mmapstore
